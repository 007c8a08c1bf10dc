//! The SDK and the WIT contract as things others depend on: the SDK crate carries the contract
//! it binds, the contract is a valid, versioned WIT package, and the crate packages with the
//! metadata a registry shows.

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn wit_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wit"))
        .map(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            (name.into_owned(), std::fs::read(&path).expect("read wit"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_sdk_carries_exactly_the_workspace_contract() {
    let contract = wit_files(&workspace().join("wit"));
    assert!(!contract.is_empty());
    assert!(
        wit_files(&workspace().join("plugins/sdk/wit")) == contract,
        "plugins/sdk/wit differs from wit/ (a build copies it over: run `cargo build` and commit plugins/sdk/wit)"
    );
}

#[test]
fn the_contract_is_a_versioned_wit_package_with_the_plugin_world() {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _files) = resolve
        .push_dir(workspace().join("wit"))
        .unwrap_or_else(|error| panic!("wit/ is not a valid WIT package: {error:#}"));
    let package = &resolve.packages[package];
    assert_eq!(package.name.namespace, "devtools");
    assert_eq!(package.name.name, "tool");
    let version = package
        .name
        .version
        .as_ref()
        .expect("the package line carries a version");
    assert!(
        package.worlds.contains_key("plugin"),
        "{:?}",
        package.worlds
    );
    // The server expects this very version in every import and export.
    for import in devtools_mcp::runtime::ALLOWED_IMPORTS {
        assert!(import.ends_with(&format!("@{version}")), "{import}");
    }
}

/// Every function a tool imports acts on the browser or the disk, except the response
/// declarations: each of those needs a capability, so a new interface cannot be added without
/// deciding who may call it.
#[test]
fn every_host_function_that_acts_needs_a_capability() {
    use devtools_mcp::runtime::host_function;
    let mut resolve = wit_parser::Resolve::default();
    let (package, _files) = resolve
        .push_dir(workspace().join("wit"))
        .unwrap_or_else(|error| panic!("wit/ is not a valid WIT package: {error:#}"));
    let world = resolve.packages[package].worlds["plugin"];
    let mut ungranted = Vec::new();
    let mut checked = 0;
    for item in resolve.worlds[world].imports.values() {
        let wit_parser::WorldItem::Interface { id, .. } = item else {
            continue;
        };
        let interface = &resolve.interfaces[*id];
        if interface.name.as_deref() == Some("response") {
            continue;
        }
        let interface_name = interface.name.as_deref().unwrap_or("?");
        for (name, function) in &interface.functions {
            // Resource bookkeeping aside: handles of pages the host gave out.
            if matches!(function.kind, wit_parser::FunctionKind::Constructor(_)) {
                continue;
            }
            checked += 1;
            let guarded = host_function::find(interface_name, name)
                .is_some_and(|declared| !declared.needs.is_empty());
            if !guarded {
                ungranted.push(format!(
                    "{}.{name}",
                    interface.name.as_deref().unwrap_or("?")
                ));
            }
        }
    }
    assert!(checked > 40, "only {checked} host functions found");
    assert!(
        ungranted.is_empty(),
        "host functions that no capability guards: {ungranted:?}"
    );
}

#[test]
fn the_sdk_crate_packages_with_its_contract_readme_and_metadata() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let listed = crate::support::command(&cargo)
        .current_dir(workspace())
        .args([
            "package",
            "-p",
            "devtools-tool",
            "--list",
            "--allow-dirty",
            "--offline",
        ])
        .output()
        .expect("cargo package --list");
    let files = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    for wanted in [
        "wit/tool.wit",
        "README.md",
        "src/devtools_tool.rs",
        "Cargo.toml",
    ] {
        assert!(
            files.lines().any(|file| file == wanted),
            "{wanted}: {files}"
        );
    }

    let metadata = crate::support::command(&cargo)
        .current_dir(workspace())
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .output()
        .expect("cargo metadata");
    let metadata: serde_json::Value =
        serde_json::from_slice(&metadata.stdout).expect("metadata JSON");
    let sdk = metadata["packages"]
        .as_array()
        .and_then(|packages| packages.iter().find(|p| p["name"] == "devtools-tool"))
        .expect("the SDK package");
    for field in ["description", "license", "readme", "repository"] {
        assert!(
            sdk[field].as_str().is_some_and(|value| !value.is_empty()),
            "devtools-tool has no {field}"
        );
    }
}
