//! Generates what the library reads from the contract (`wit/`) and the SDK at compile time:
//! the contract versions the loader links, each interface's capability, the SDK's files for
//! `plugin new`, and the contract's version. Quick and dependency-free on purpose: the library
//! compiles while ../server's build script builds the built-in tools for wasm.

mod build_common;

use build_common::{names_ending, newest_contract, read, write};
use std::path::{Path, PathBuf};

fn main() {
    let workspace = PathBuf::from(env("CARGO_MANIFEST_DIR")).join("..");
    // Relative to this package, so a target dir shared by several checkouts (CI reusing a
    // developer's build, worktrees) watches the files of the checkout being built.
    for watched in ["wit", "plugins/sdk/src", "plugins/sdk/README.md"] {
        println!("cargo:rerun-if-changed=../{watched}");
    }
    let contract = newest_contract(&workspace.join("wit"));
    // The contract's version, for the loader's import and export names: it lives in one place,
    // the `package` line of the newest wit/since_vX.Y.Z/tool.wit.
    println!(
        "cargo:rustc-env=DEVTOOLS_TOOL_WIT_VERSION={}",
        wit_version(&contract.join("tool.wit"))
    );
    let out_dir = PathBuf::from(env("OUT_DIR"));
    write(
        &out_dir.join("interface_capabilities.rs"),
        interface_capabilities(&contract).as_bytes(),
    );
    write(
        &out_dir.join("contracts.rs"),
        contracts(&workspace.join("wit")).as_bytes(),
    );
    write(
        &out_dir.join("sdk_files.rs"),
        sdk_files(&workspace.join("plugins/sdk"), &contract).as_bytes(),
    );
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("cargo did not set {name}"))
}

/// The Rust SDK's sources, WIT and README, embedded in the binary so that `plugin new` can
/// write them beside a new crate: an installed server needs no checkout and no registry. The
/// WIT is read from the newest contract, which `plugins/sdk/wit` is a copy of (../server's
/// build script keeps that copy in step, and may be writing it while this runs).
fn sdk_files(sdk: &Path, contract: &Path) -> String {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for name in names_ending(&sdk.join("src"), ".rs") {
        files.push((format!("src/{name}"), sdk.join("src").join(&name)));
    }
    for name in names_ending(contract, ".wit") {
        files.push((format!("wit/{name}"), contract.join(&name)));
    }
    files.push(("README.md".to_string(), sdk.join("README.md")));
    let mut source = String::from(
        "/// The SDK's files, relative to its folder, with their text.\n\
         pub const SDK_FILES: &[(&str, &str)] = &[\n",
    );
    // The text itself, not an `include_str!` of an absolute path: a target dir shared by
    // several checkouts (CI reusing a developer's build) must not point into another one.
    for (file, path) in files {
        let text = String::from_utf8(read(&path))
            .unwrap_or_else(|error| panic!("{file} in the SDK is not UTF-8: {error}"));
        source.push_str(&format!("    ({file:?}, {text:?}),\n"));
    }
    source.push_str("];\n");
    source
}

/// Every contract version under `wit/` with the interfaces its `plugin` world imports, as Rust
/// source for the loader: the imports a component may have are exactly these.
fn contracts(wit: &Path) -> String {
    let mut versions: Vec<(Vec<u64>, String, Vec<String>)> = Vec::new();
    for entry in std::fs::read_dir(wit)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(version) = name.strip_prefix("since_v") else {
            continue;
        };
        let key: Vec<u64> = version
            .split('.')
            .filter_map(|part| part.parse().ok())
            .collect();
        let text = String::from_utf8(read(&entry.path().join("tool.wit"))).unwrap_or_default();
        let world = text
            .split("world plugin {")
            .nth(1)
            .and_then(|rest| rest.split('}').next())
            .unwrap_or_else(|| panic!("{name}/tool.wit has no `world plugin`"));
        let imports = world
            .lines()
            .filter_map(|line| line.trim().strip_prefix("import "))
            .map(|import| import.trim_end_matches(';').trim().to_string())
            .collect();
        versions.push((key, version.to_string(), imports));
    }
    versions.sort();
    let mut source = String::from(
        "/// Every contract version the server links, oldest first, with the interfaces its\n\
         /// world imports.\n\
         pub const CONTRACTS: &[(&str, &[&str])] = &[\n",
    );
    for (_, version, imports) in versions {
        source.push_str(&format!("    ({version:?}, &{imports:?}),\n"));
    }
    source.push_str("];\n");
    source
}

/// Each interface of the contract with the capability its doc comment names
/// (`/// Capability: pages.read`, or `none`), as Rust source for `policy::capability`: the
/// WIT is the one place that says which capability an interface is.
fn interface_capabilities(contract: &Path) -> String {
    let mut pairs = Vec::new();
    for name in names_ending(contract, ".wit") {
        let file = contract.join(name);
        let text = String::from_utf8(read(&file)).unwrap_or_default();
        let mut capability: Option<String> = None;
        for line in text.lines().map(str::trim) {
            if let Some(doc) = line.strip_prefix("///") {
                if let Some(name) = doc.trim().strip_prefix("Capability:") {
                    capability = Some(name.trim().to_string());
                }
                continue;
            }
            if let Some(rest) = line.strip_prefix("interface ") {
                let name = rest.trim_end_matches('{').trim();
                match capability.take() {
                    Some(capability) => pairs.push((name.to_string(), capability)),
                    None => panic!(
                        "interface {name} in {} has no `/// Capability: NAME` (or `none`) line",
                        file.display()
                    ),
                }
                continue;
            }
            capability = None;
        }
    }
    let mut source = String::from(
        "/// Each interface of the newest contract and the capability its WIT names.\n\
         pub const INTERFACE_CAPABILITIES: &[(&str, &str)] = &[\n",
    );
    for (interface, capability) in pairs {
        source.push_str(&format!("    ({interface:?}, {capability:?}),\n"));
    }
    source.push_str("];\n");
    source
}

/// `X.Y.Z` of `package devtools:tool@X.Y.Z;`.
fn wit_version(tool_wit: &Path) -> String {
    let text = String::from_utf8(read(tool_wit)).unwrap_or_default();
    text.lines()
        .find_map(|line| {
            let rest = line.trim().strip_prefix("package devtools:tool@")?;
            Some(rest.trim_end_matches(';').trim().to_string())
        })
        .unwrap_or_else(|| {
            panic!(
                "{} has no `package devtools:tool@VERSION;` line",
                tool_wit.display()
            )
        })
}
