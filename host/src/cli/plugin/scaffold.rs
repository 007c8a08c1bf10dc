//! `plugin new`: a tool crate that builds as is, works under the default policy (it only
//! reads the page's URL), and shows where parameters, the definition and the handler go.

use std::path::{Path, PathBuf};

/// The SDK version this binary speaks: the SDK and the server share the workspace version
/// (`version.workspace = true` in both manifests).
const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A tool crate named `name` in `parent`, depending on the released SDK by version, or on an
/// SDK checkout when `sdk_path` is given.
pub fn create(name: &str, parent: &Path, sdk_path: Option<&Path>) -> Result<PathBuf, String> {
    check_name(name)?;
    let dependency = sdk_dependency(sdk_path)?;
    let root = parent.join(name);
    if root.exists() {
        return Err(format!(
            "{} already exists; choose another name or folder.",
            root.display()
        ));
    }
    let src = root.join("src");
    std::fs::create_dir_all(&src)
        .map_err(|error| format!("Cannot create {}: {error}", src.display()))?;
    let files = [
        (root.join("Cargo.toml"), manifest(name, &dependency)),
        (src.join("lib.rs"), source(name)),
        (root.join(".gitignore"), "/target\n/dist\n".to_string()),
    ];
    for (path, text) in files {
        std::fs::write(&path, text)
            .map_err(|error| format!("Cannot write {}: {error}", path.display()))?;
    }
    Ok(root)
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

/// The `devtools-tool = ...` line: a version requirement on the released crate, or a path to
/// an SDK folder (`plugins/sdk` of the devtools-mcp sources).
fn sdk_dependency(sdk_path: Option<&Path>) -> Result<String, String> {
    let Some(sdk) = sdk_path else {
        return Ok(format!("devtools-tool = \"{SDK_VERSION}\""));
    };
    let sdk = sdk.canonicalize().map_err(|_| {
        format!(
            "The devtools-tool SDK was not found at {}. Pass --sdk-path with the path of plugins/sdk from the devtools-mcp sources, or leave it out to depend on the released crate.",
            sdk.display()
        )
    })?;
    if !sdk.join("Cargo.toml").is_file() {
        return Err(format!(
            "{} is not the devtools-tool SDK (no Cargo.toml).",
            sdk.display()
        ));
    }
    // A TOML string, escaped as TOML wants (quotes, backslashes).
    let path = toml::Value::String(sdk.to_string_lossy().into_owned());
    Ok(format!("devtools-tool = {{ path = {path} }}"))
}

fn manifest(name: &str, dependency: &str) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
{dependency}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1.2"

# Small, self-contained components.
[profile.release]
opt-level = "s"
lto = true
codegen-units = 1
panic = "abort"
strip = true

# A crate of its own, even inside another workspace.
[workspace]
"#
    )
}

fn source(name: &str) -> String {
    let type_name: String = name
        .split('_')
        .map(|word| {
            let mut characters = word.chars();
            match characters.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + characters.as_str(),
                None => String::new(),
            }
        })
        .collect();
    format!(
        r#"//! `{name}`: a devtools-mcp tool. Build it with `devtools-mcp plugin build`.

use devtools_tool::{{Category, Definition, Flags, Page, PageTool, Response}};
use serde::Deserialize;

/// The tool's parameters: field docs become the JSON Schema models read.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {{
    /// Text to put before the URL.
    prefix: Option<String>,
}}

struct {type_name};

impl PageTool for {type_name} {{
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {{
        Definition::new(
            "{name}",
            Category::Debugging,
            "Tells the URL of the selected page.",
        )
        .read_only()
    }}

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {{
        let prefix = params.prefix.unwrap_or_else(|| "The page is at".to_string());
        response.line(format!("{{prefix}} {{}}", page.url()));
        Ok(())
    }}
}}

devtools_tool::register_page_tool!({type_name});
"#
    )
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

    #[test]
    fn the_scaffold_names_the_type_after_the_tool() {
        assert!(source("page_title").contains("struct PageTitle;"));
    }

    #[test]
    fn the_sdk_is_a_version_dependency_unless_a_path_is_given() {
        let released = sdk_dependency(None).expect("version");
        assert_eq!(released, format!("devtools-tool = \"{SDK_VERSION}\""));
        assert!(manifest("page_title", &released).contains(&released));

        let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/sdk");
        let local = sdk_dependency(Some(&sdk)).expect("path");
        let canonical = sdk.canonicalize().expect("sdk");
        assert_eq!(
            local,
            format!("devtools-tool = {{ path = \"{}\" }}", canonical.display())
        );
        let missing = sdk_dependency(Some(Path::new("/no/such/sdk"))).expect_err("refused");
        assert!(missing.contains("--sdk-path"), "{missing}");
    }

    #[test]
    fn the_version_written_is_the_sdk_crate_version() {
        // Both manifests take the workspace version, so this binary's is the SDK's.
        let sdk_manifest = include_str!("../../../../plugins/sdk/Cargo.toml");
        assert!(sdk_manifest.contains("version.workspace = true"));
        assert!(include_str!("../../../Cargo.toml").contains("version.workspace = true"));
    }
}
