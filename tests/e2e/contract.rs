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

/// The contract the server implements natively: the newest `wit/since_vX.Y.Z`.
fn newest_contract() -> PathBuf {
    released_folders()
        .into_iter()
        .map(|(_, path)| path)
        .next_back()
        .expect("a wit/since_vX.Y.Z folder")
}

/// Every `wit/since_vX.Y.Z` folder, oldest first.
fn released_folders() -> Vec<(Vec<u64>, PathBuf)> {
    let mut folders: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir(workspace().join("wit"))
        .expect("read wit/")
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let version: Option<Vec<u64>> = name
                .strip_prefix("since_v")?
                .split('.')
                .map(|part| part.parse().ok())
                .collect();
            Some((version?, entry.path()))
        })
        .collect();
    folders.sort();
    folders
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
    let contract = wit_files(&newest_contract());
    assert!(!contract.is_empty());
    assert!(
        wit_files(&workspace().join("plugins/sdk/wit")) == contract,
        "plugins/sdk/wit differs from the newest wit/since_vX.Y.Z (a build copies it over: run `cargo build` and commit plugins/sdk/wit)"
    );
}

/// A released contract is never edited: every file of every released folder is listed in
/// `wit/released.sha256` with its hash, nothing listed is missing, and only the newest folder
/// may be unreleased (under development).
#[test]
fn released_contracts_never_change() {
    use sha2::{Digest, Sha256};
    let wit = workspace().join("wit");
    let listed = std::fs::read_to_string(wit.join("released.sha256")).expect("released.sha256");
    let mut recorded = std::collections::BTreeMap::new();
    for line in listed.lines().filter(|line| !line.trim().is_empty()) {
        let (hash, file) = line
            .split_once("  ")
            .unwrap_or_else(|| panic!("not `<sha256>  <file>`: {line}"));
        recorded.insert(file.to_string(), hash.to_string());
    }
    let folders = released_folders();
    let mut problems = Vec::new();
    for (index, (_, folder)) in folders.iter().enumerate() {
        let name = folder.file_name().unwrap_or_default().to_string_lossy();
        let released = recorded
            .keys()
            .any(|file| file.starts_with(&format!("{name}/")));
        let newest = index + 1 == folders.len();
        if !released && !newest {
            problems.push(format!(
                "{name} is older than the newest contract but not released"
            ));
        }
        if !released {
            continue;
        }
        for (file, bytes) in wit_files(folder) {
            let key = format!("{name}/{file}");
            let hash = hex::encode(Sha256::digest(&bytes));
            match recorded.get(&key) {
                Some(expected) if *expected == hash => {}
                Some(_) => problems.push(format!("{key} changed after its release")),
                None => problems.push(format!("{key} was added after its release")),
            }
        }
    }
    for file in recorded.keys() {
        if !wit.join(file).is_file() {
            problems.push(format!("{file} is released but missing"));
        }
    }
    assert!(
        problems.is_empty(),
        "released contracts are frozen (make a new wit/since_vX.Y.Z instead):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_contract_is_a_versioned_wit_package_with_the_plugin_world() {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _files) = resolve
        .push_dir(newest_contract())
        .unwrap_or_else(|error| panic!("the contract is not a valid WIT package: {error:#}"));
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
    // The server links this version, with exactly the interfaces its world imports, and every
    // older released one.
    let world = package.worlds["plugin"];
    let mut imported: Vec<String> = resolve.worlds[world]
        .imports
        .values()
        .filter_map(|item| match item {
            wit_parser::WorldItem::Interface { id, .. } => resolve.interfaces[*id].name.clone(),
            _ => None,
        })
        .collect();
    imported.sort();
    let linked = devtools_mcp::runtime::CONTRACTS
        .iter()
        .find(|(known, _)| *known == version.to_string())
        .map(|(_, imports)| {
            let mut imports: Vec<String> = imports.iter().map(|name| name.to_string()).collect();
            imports.sort();
            imports
        });
    assert_eq!(linked, Some(imported));
    assert_eq!(
        devtools_mcp::runtime::CONTRACTS.len(),
        released_folders().len(),
        "every wit/since_vX.Y.Z is linked"
    );
}

/// Every function a tool imports acts on the browser or the disk, except the response
/// declarations and the page handle's own bookkeeping (`types`): each of those needs a
/// capability, so a new interface cannot be added without deciding who may call it.
#[test]
fn every_host_function_that_acts_needs_a_capability() {
    use devtools_mcp::runtime::host_function;
    let mut resolve = wit_parser::Resolve::default();
    let (package, _files) = resolve
        .push_dir(newest_contract())
        .unwrap_or_else(|error| panic!("the contract is not a valid WIT package: {error:#}"));
    let world = resolve.packages[package].worlds["plugin"];
    let mut ungranted = Vec::new();
    let mut checked = 0;
    for item in resolve.worlds[world].imports.values() {
        let wit_parser::WorldItem::Interface { id, .. } = item else {
            continue;
        };
        let interface = &resolve.interfaces[*id];
        if matches!(interface.name.as_deref(), Some("response" | "types")) {
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
                .is_some_and(|declared| declared.needs().next().is_some());
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
