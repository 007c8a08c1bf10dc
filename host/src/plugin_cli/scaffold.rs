//! `plugin new`: a tool crate that builds as is, works under the default policy (it only
//! reads the page's URL), and shows where parameters, the definition and the handler go.

use std::path::{Path, PathBuf};

/// The SDK this binary was built next to.
const BUILT_WITH_SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../plugins/sdk");

pub fn create(name: &str, parent: &Path, sdk: Option<&Path>) -> Result<PathBuf, String> {
    check_name(name)?;
    let sdk = match sdk {
        Some(sdk) => sdk.to_path_buf(),
        None => PathBuf::from(BUILT_WITH_SDK),
    };
    let sdk = sdk.canonicalize().map_err(|_| {
        format!(
            "The devtools-tool SDK was not found at {}. Pass --sdk with the path of plugins/sdk from the devtools-mcp sources.",
            sdk.display()
        )
    })?;
    if !sdk.join("Cargo.toml").is_file() {
        return Err(format!(
            "{} is not the devtools-tool SDK (no Cargo.toml).",
            sdk.display()
        ));
    }
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
        (root.join("Cargo.toml"), manifest(name, &sdk)),
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

fn manifest(name: &str, sdk: &Path) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
devtools-tool = {{ path = "{sdk}" }}
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
"#,
        sdk = sdk.display()
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
        assert!(manifest("page_title", Path::new("/sdk")).contains("path = \"/sdk\""));
    }
}
