//! A Rust tool crate using the `devtools-tool` SDK. The SDK comes with it: the binary carries
//! the SDK's sources and contract and writes them beside the crate, so an installed server
//! needs no checkout and no registry (`--sdk-version` uses the published crate instead,
//! `--sdk-path` a checkout's).

use super::{SDK_FILES, SDK_VERSION, Template, action, structured, write_files};
use std::path::{Path, PathBuf};

/// The folder of the crate the SDK is written to, beside the tool's sources.
const VENDORED_SDK: &str = "devtools-tool";

/// Where the new crate's SDK comes from.
pub enum Sdk<'a> {
    /// Written beside the crate from this binary (the default).
    Vendored,
    /// The published crate, by version.
    Version(&'a str),
    /// An SDK folder (`plugins/sdk` of the devtools-mcp sources).
    Path(&'a Path),
}

/// The crate's files in `root` (a new folder), with its SDK from `sdk`.
pub fn create(name: &str, root: &Path, template: Template, sdk: Sdk<'_>) -> Result<(), String> {
    let dependency = match sdk {
        Sdk::Vendored => format!("devtools-tool = {{ path = \"{VENDORED_SDK}\" }}"),
        Sdk::Version(version) => {
            semver_requirement(version)?;
            format!("devtools-tool = \"{version}\"")
        }
        Sdk::Path(path) => sdk_dependency(path)?,
    };
    write_files(
        root,
        &[
            ("Cargo.toml", manifest(name, &dependency)),
            ("src/lib.rs", source(name, template)),
            (".gitignore", "/target\n/dist\n".to_string()),
        ],
    )?;
    if matches!(sdk, Sdk::Vendored) {
        write_sdk(&root.join(VENDORED_SDK))?;
    }
    Ok(())
}

/// Writes the SDK crate this binary carries: its sources, its contract and a manifest with the
/// same dependencies as the workspace's (a vendored crate cannot inherit them).
fn write_sdk(folder: &Path) -> Result<(), String> {
    let mut files: Vec<(PathBuf, &str)> = SDK_FILES
        .iter()
        .map(|(relative, text)| (folder.join(relative), *text))
        .collect();
    let manifest = sdk_manifest();
    files.push((folder.join("Cargo.toml"), manifest.as_str()));
    for (path, text) in files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|error| format!("Cannot create {}: {error}", parent.display()))?;
        }
        std::fs::write(&path, text)
            .map_err(|error| format!("Cannot write {}: {error}", path.display()))?;
    }
    Ok(())
}

/// The SDK's manifest, standalone: the versions its workspace gives it (a test holds them
/// equal).
fn sdk_manifest() -> String {
    format!(
        r#"# The devtools-tool SDK {SDK_VERSION}, written by `devtools-mcp plugin new` (the server carries it).
[package]
name = "devtools-tool"
version = "{SDK_VERSION}"
edition = "2024"
license = "Apache-2.0"
publish = false

[lib]
path = "src/devtools_tool.rs"

[dependencies]
serde = {{ version = "1", features = ["derive"] }}
serde_json = {{ version = "1", features = ["preserve_order"] }}
schemars = "1.2"
wit-bindgen = "0.61"
"#
    )
}

/// A version requirement cargo accepts (`0.3.0`, `^0.3`, `=0.3.1`).
fn semver_requirement(version: &str) -> Result<(), String> {
    semver::VersionReq::parse(version)
        .map(drop)
        .map_err(|error| format!("--sdk-version {version} is not a version requirement: {error}"))
}

/// The `devtools-tool = { path = ... }` line for an SDK folder (`plugins/sdk` of the
/// devtools-mcp sources).
fn sdk_dependency(sdk: &Path) -> Result<String, String> {
    let sdk = sdk.canonicalize().map_err(|_| {
        format!(
            "The devtools-tool SDK was not found at {}. Pass --sdk-path with the path of plugins/sdk from the devtools-mcp sources, or leave it out to get the SDK this server carries.",
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
serde_json = "1"
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

/// The crate's `src/lib.rs` for the template.
fn source(name: &str, template: Template) -> String {
    let type_name = type_name(name);
    match template {
        Template::PageReader => page_reader(name, &type_name),
        Template::Action => action::rust(name, &type_name),
        Template::Structured => structured::rust(name, &type_name),
    }
}

/// The tool's Rust type: its name in UpperCamelCase.
fn type_name(name: &str) -> String {
    name.split('_')
        .map(|word| {
            let mut characters = word.chars();
            match characters.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + characters.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

fn page_reader(name: &str, type_name: &str) -> String {
    format!(
        r#"//! `{name}`: a devtools-mcp tool. Build it with `devtools-mcp plugin build`.

use devtools_tool::{{Category, Definition, Flags, Page, PageTool, Response}};
use serde::Deserialize;

// The parameters. Their doc comments (`///`) become the tool's JSON Schema, which is what
// the model calling the tool reads: write them for that model (what each parameter does, its
// default); notes for people go in plain `//` comments like this one.
/// How to word the answer.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {{
    /// Text to put before the page's URL in the answer (default: "The page is at").
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
    fn the_scaffold_names_the_type_after_the_tool() {
        assert!(source("page_title", Template::PageReader).contains("struct PageTitle;"));
    }

    /// Doc comments on the parameters are published to models as the tool's schema: they speak
    /// to the model, and the note to the author is a plain comment.
    #[test]
    fn the_parameter_docs_are_written_for_the_model() {
        let source = source("page_title", Template::PageReader);
        let docs: Vec<&str> = source
            .lines()
            .filter_map(|line| line.trim().strip_prefix("///"))
            .collect();
        assert!(
            docs.iter().any(|doc| doc.contains("before the page's URL")),
            "{docs:?}"
        );
        for doc in &docs {
            assert!(
                !doc.contains("JSON Schema") && !doc.contains("doc comment"),
                "{doc}"
            );
        }
        assert!(source.contains(
            "// The parameters. Their doc comments (`///`) become the tool's JSON Schema"
        ));
    }

    #[test]
    fn an_sdk_path_must_hold_the_sdk() {
        let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/sdk");
        let local = sdk_dependency(&sdk).expect("path");
        let canonical = sdk.canonicalize().expect("sdk");
        assert_eq!(
            local,
            format!("devtools-tool = {{ path = \"{}\" }}", canonical.display())
        );
        let missing = sdk_dependency(Path::new("/no/such/sdk")).expect_err("refused");
        assert!(missing.contains("--sdk-path"), "{missing}");
    }

    /// The vendored manifest depends on what the workspace gives the SDK, at the same versions.
    #[test]
    fn the_vendored_sdk_manifest_matches_the_workspace() {
        let workspace: toml::Table =
            toml::from_str(include_str!("../../../../../Cargo.toml")).expect("workspace manifest");
        let sdk: toml::Table =
            toml::from_str(include_str!("../../../../../plugins/sdk/Cargo.toml")).expect("sdk");
        let vendored: toml::Table = toml::from_str(&sdk_manifest()).expect("vendored");
        let shared = &workspace["workspace"]["dependencies"];
        let wanted = sdk["dependencies"].as_table().expect("sdk dependencies");
        let written = vendored["dependencies"]
            .as_table()
            .expect("vendored dependencies");
        assert_eq!(
            wanted.keys().collect::<Vec<_>>(),
            written.keys().collect::<Vec<_>>()
        );
        for name in wanted.keys() {
            let version = |spec: &toml::Value| match spec {
                toml::Value::String(version) => version.clone(),
                other => other["version"].as_str().unwrap_or_default().to_string(),
            };
            assert_eq!(version(&shared[name]), version(&written[name]), "{name}");
        }
        assert_eq!(vendored["package"]["version"].as_str(), Some(SDK_VERSION));
        assert!(
            SDK_FILES
                .iter()
                .any(|(file, _)| *file == "src/devtools_tool.rs")
        );
        assert!(SDK_FILES.iter().any(|(file, _)| *file == "wit/tool.wit"));
    }

    #[test]
    fn the_version_written_is_the_sdk_crate_version() {
        // Both manifests take the workspace version, so this binary's is the SDK's.
        let sdk_manifest = include_str!("../../../../../plugins/sdk/Cargo.toml");
        assert!(sdk_manifest.contains("version.workspace = true"));
        assert!(include_str!("../../../../Cargo.toml").contains("version.workspace = true"));
    }
}
