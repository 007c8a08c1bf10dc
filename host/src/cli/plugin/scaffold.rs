//! `plugin new`: a tool that builds as is, works under the default policy (it only reads the
//! page's URL), and shows where parameters, the definition and the handler go, in Rust (the
//! `devtools-tool` SDK), TypeScript (componentize-js through jco) or Python (componentize-py).
//! Everything it needs from us comes from this binary: the Rust SDK, and for every language
//! the contract (`wit/`), so an installed server needs no checkout and no registry of ours.

pub mod python;
mod rust;
pub mod typescript;

pub use rust::Sdk;

use std::path::{Path, PathBuf};

/// The SDK version this binary speaks: the SDK and the server share the workspace version
/// (`version.workspace = true` in both manifests).
const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The newest contract, the one the SDK and the scaffolds bind.
const CONTRACT_VERSION: &str = env!("DEVTOOLS_TOOL_WIT_VERSION");

include!(concat!(env!("OUT_DIR"), "/sdk_files.rs"));

pub use crate::config::commands::Language;

/// A tool named `name` in a new folder of `parent`.
pub fn create(
    name: &str,
    parent: &Path,
    language: Language,
    sdk: Sdk<'_>,
) -> Result<PathBuf, String> {
    check_name(name)?;
    let root = parent.join(name);
    if root.exists() {
        return Err(format!(
            "{} already exists; choose another name or folder.",
            root.display()
        ));
    }
    match language {
        Language::Rust => rust::create(name, &root, sdk)?,
        Language::Ts => {
            write_world(name, &root)?;
            typescript::create(name, &root)?;
        }
        Language::Python => {
            write_world(name, &root)?;
            python::create(name, &root)?;
        }
    }
    Ok(root)
}

/// The world a tool of another language builds against, named after the tool (kebab-case).
pub fn world_name(name: &str) -> String {
    name.replace('_', "-")
}

/// `wit/`: the tool's own world (its imports are the capabilities it asks for) and the
/// contract it uses, as `wit/deps/devtools-tool`.
fn write_world(name: &str, root: &Path) -> Result<(), String> {
    let world = world_name(name);
    let text = format!(
        r#"// The tool's world. The capabilities it asks the operator for are the interfaces it
// imports: to call a function of another one, import it here (`import
// devtools:tool/script@{CONTRACT_VERSION};` to evaluate JavaScript, `.../input@...` to click
// and type) and rebuild. docs/plugins.md lists each interface's capability.
package local:{world};

world {world} {{
    import devtools:tool/response@{CONTRACT_VERSION};
    import devtools:tool/pages@{CONTRACT_VERSION};
    export devtools:tool/tool@{CONTRACT_VERSION};
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
        write_world("page_title", root.path()).expect("world");
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
        assert!(!imports.contains(&"script".to_string()), "{imports:?}");
    }
}
