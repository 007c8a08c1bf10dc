//! `plugin new`: a tool that builds as is, works under the default policy (it only reads the
//! page's URL), and shows where parameters, the definition and the handler go, in Rust (the
//! `devtools-tool` SDK), TypeScript (componentize-js through jco) or Python (componentize-py).
//! Everything it needs from us comes from this binary: the Rust SDK, and for every language
//! the contract (`wit/`), so an installed server needs no checkout and no registry of ours.

mod action;
pub mod python;
mod rust;
mod structured;
mod template;
pub mod typescript;

pub use rust::Sdk;
pub use template::Template;

use crate::policy::code_folders::{Named, Placement, private_temp_dir};
use crate::runtime::definition::skeleton;
use crate::runtime::embedded;
use std::path::{Path, PathBuf};

/// The SDK version this binary speaks: the SDK and the server share the workspace version
/// (`version.workspace = true` in both manifests).
const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The newest contract, the one the SDK and the scaffolds bind.
const CONTRACT_VERSION: &str = env!("DEVTOOLS_TOOL_WIT_VERSION");

include!(concat!(env!("OUT_DIR"), "/sdk_files.rs"));

pub use crate::config::commands::Language;

/// A tool named `name` in a new folder of `parent`. A name a built-in tool has (or looks
/// like) is refused unless `force`: the server refuses to start with both.
pub fn create(
    name: &str,
    parent: &Path,
    language: Language,
    template: Template,
    sdk: Sdk<'_>,
    force: bool,
) -> Result<PathBuf, String> {
    check_name(name)?;
    let builtins = embedded::tools()
        .iter()
        .filter_map(|tool| tool.file_name().strip_suffix(".wasm"));
    if let Some(clash) = builtin_clash(name, builtins) {
        match force {
            true => eprintln!("Warning: {clash}"),
            false => return Err(format!("{clash} Or pass --force to create it anyway.")),
        }
    }
    let root = parent.join(name);
    if root.exists() {
        return Err(format!(
            "{} already exists; choose another name or folder.",
            root.display()
        ));
    }
    match language {
        Language::Rust => rust::create(name, &root, template, sdk)?,
        Language::Ts => {
            write_world(name, &root, template)?;
            typescript::create(name, &root, template)?;
        }
        Language::Python => {
            write_world(name, &root, template)?;
            python::create(name, &root, template)?;
        }
    }
    write_files(&root, &template::test_files(template))?;
    Ok(root)
}

/// Why a tool named `name` could not load beside the built-in tools `builtins`, judged as the
/// server does (the same name, or one that reads alike: [`skeleton`]).
fn builtin_clash<'a>(name: &str, builtins: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let looks = skeleton(name);
    let builtin = builtins
        .into_iter()
        .find(|builtin| skeleton(builtin) == looks)?;
    let alike = match builtin == name {
        true => "is the name of".to_string(),
        false => format!("reads like `{builtin}`,"),
    };
    Some(format!(
        "`{name}` {alike} a built-in tool: the server refuses to start with two tools named alike, so this tool could not load beside it. Choose another name, e.g. `my_{name}` or `{name}_checked`."
    ))
}

/// What to run after `plugin new`. When the tool's folder lies in the temp dir, the server
/// (and `plugin test`) would refuse its `dist/` ([`Placement`], the rule they apply), so the
/// commands come with a private temp dir that the same rule accepts.
pub fn next_steps(created: &Path) -> String {
    let dist = created.join("dist");
    let build = format!("`devtools-mcp plugin build {}`", created.display());
    let placement = Placement {
        cache: None,
        plugin_dirs: vec![Named::new("the --pluginDir", &dist)],
        helpers: Vec::new(),
        writable: vec![Named::temp_dir()],
    };
    if placement.refusal().is_none() {
        return format!(
            "Next: {build}; `devtools-mcp plugin test {}` runs its test (test/test.json) on its fixture page (with --watch, again after every saved edit); then start the server with --plugin-dir {}.",
            created.display(),
            dist.display()
        );
    }
    let temp = std::env::temp_dir();
    let private = private_temp_dir(&[&dist]);
    let set_temp = match &private {
        Some(private) => format!(
            "`mkdir -p -m 700 {0} && export TMPDIR={0}`",
            private.display()
        ),
        None => format!("set TMPDIR to a private folder outside {}", temp.display()),
    };
    format!(
        "Next: {build}. The tool is in the temp dir {}, and the server and `plugin test` refuse a plugin folder there (plugins may write to the temp dir): first {set_temp} (in an MCP client's entry for the server: \"env\": {{\"TMPDIR\": ...}}), then start the server with --plugin-dir {}. Or create the tool outside {}.",
        temp.display(),
        dist.display(),
        temp.display()
    )
}

/// The world a tool of another language builds against, named after the tool (kebab-case).
pub fn world_name(name: &str) -> String {
    name.replace('_', "-")
}

/// `wit/`: the tool's own world (its imports are the capabilities it asks for) and the
/// contract it uses, as `wit/deps/devtools-tool`.
fn write_world(name: &str, root: &Path, template: Template) -> Result<(), String> {
    let world = world_name(name);
    let extra: String = template::extra_imports(template)
        .iter()
        .map(|interface| format!("    import devtools:tool/{interface}@{CONTRACT_VERSION};\n"))
        .collect();
    let text = format!(
        r#"// The tool's world. The capabilities it asks the operator for are the interfaces it
// imports: to call a function of another one, import it here (`import
// devtools:tool/script@{CONTRACT_VERSION};` to evaluate JavaScript, `.../input@...` to click
// and type) and rebuild. docs/plugins.md lists each interface's capability.
package local:{world};

world {world} {{
    import devtools:tool/response@{CONTRACT_VERSION};
    import devtools:tool/pages@{CONTRACT_VERSION};
{extra}    export devtools:tool/tool@{CONTRACT_VERSION};
}}
"#
    );
    let mut files = vec![("wit/world.wit".to_string(), text)];
    files.extend(SDK_FILES.iter().filter_map(|(file, content)| {
        let wit = file.strip_prefix("wit/")?;
        Some((format!("wit/deps/devtools-tool/{wit}"), content.to_string()))
    }));
    let files: Vec<(&str, String)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.clone()))
        .collect();
    write_files(root, &files)
}

/// A template's text for the tool `name`: its name, its Rust type name and the contract
/// version in place of `__NAME__`, `__TYPE__` and `__CONTRACT__`.
fn fill_in(text: &str, name: &str, type_name: &str) -> String {
    text.replace("__NAME__", name)
        .replace("__TYPE__", type_name)
        .replace("__CONTRACT__", CONTRACT_VERSION)
}

/// Writes each `(relative path, text)` under `root`, creating folders.
fn write_files(root: &Path, files: &[(&str, String)]) -> Result<(), String> {
    for (relative, text) in files {
        let path = root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|error| format!("Cannot create {}: {error}", parent.display()))?;
        }
        std::fs::write(&path, text)
            .map_err(|error| format!("Cannot write {}: {error}", path.display()))?;
    }
    Ok(())
}

/// Tool names are what models type: lowercase snake_case, as the reference's tools.
fn check_name(name: &str) -> Result<(), String> {
    let valid = name.len() <= 64
        && name.starts_with(|character: char| character.is_ascii_lowercase())
        && name.chars().all(|character| {
            character.is_ascii_lowercase() || character.is_ascii_digit() || character == '_'
        });
    if valid {
        Ok(())
    } else {
        Err(format!(
            "Invalid tool name \"{name}\": use lowercase letters, digits and underscores, starting with a letter (e.g. page_title)."
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_in_name_or_one_that_reads_alike_is_refused_with_the_way_out() {
        let builtins = ["click", "take_snapshot"];
        let clash = builtin_clash("click", builtins).expect("the same name");
        assert!(
            clash.contains("`click` is the name of a built-in tool"),
            "{clash}"
        );
        assert!(clash.contains("`my_click`"), "{clash}");
        let alike = builtin_clash("c1ick", builtins).expect("reads alike");
        assert!(alike.contains("reads like `click`"), "{alike}");
        assert!(builtin_clash("page_title", builtins).is_none());
    }

    #[test]
    fn names_must_be_snake_case() {
        assert!(check_name("page_title").is_ok());
        assert!(check_name("PageTitle").is_err());
        assert!(check_name("../evil").is_err());
        assert!(check_name("").is_err());
    }

    /// A TypeScript or Python tool gets its world and the whole contract, which parse as one
    /// WIT package set.
    #[test]
    fn the_world_of_another_language_parses_with_the_contract() {
        let root = tempfile::tempdir().expect("temp dir");
        write_world("page_title", root.path(), Template::Action).expect("world");
        let mut resolve = wit_parser::Resolve::default();
        let (package, _) = resolve
            .push_dir(root.path().join("wit"))
            .expect("the world parses");
        let world = resolve.packages[package].worlds["page-title"];
        let imports: Vec<String> = resolve.worlds[world]
            .imports
            .values()
            .filter_map(|item| match item {
                wit_parser::WorldItem::Interface { id, .. } => resolve.interfaces[*id].name.clone(),
                _ => None,
            })
            .collect();
        assert!(imports.contains(&"pages".to_string()), "{imports:?}");
        assert!(imports.contains(&"script".to_string()), "{imports:?}");
        assert!(imports.contains(&"navigate".to_string()), "{imports:?}");
        assert!(!imports.contains(&"input".to_string()), "{imports:?}");
    }
}
