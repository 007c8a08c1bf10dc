//! Builds the built-in tool plugins (and the test fixture plugins) for wasm32-unknown-unknown
//! and places them next to the binary, in `plugins/` and `test-plugins/`, so that
//! `cargo build`, `cargo run` and `cargo test` need nothing else.
//!
//! The nested cargo uses its own target directory (beside ours), so it never waits on the
//! lock of the build that runs this script.

use std::path::{Path, PathBuf};
use std::process::Command;

const WASM_TARGET: &str = "wasm32-unknown-unknown";
const WASI_TARGET: &str = "wasm32-wasip2";

fn main() {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or(manifest_dir.clone());
    for watched in ["plugins", "wit", "tests/fixtures/plugins", "Cargo.lock"] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(watched).display()
        );
    }
    if std::env::var_os("DEVTOOLS_MCP_SKIP_PLUGIN_BUILD").is_some() {
        return;
    }
    // OUT_DIR is <target>/<profile>/build/<pkg>-<hash>/out: the binary lives in <target>/<profile>.
    let out_dir = PathBuf::from(env("OUT_DIR"));
    let Some(profile_dir) = out_dir.ancestors().nth(3).map(Path::to_path_buf) else {
        panic!("unexpected OUT_DIR layout: {}", out_dir.display());
    };
    let Some(target_root) = profile_dir.parent().map(Path::to_path_buf) else {
        panic!("unexpected target layout: {}", profile_dir.display());
    };
    let wasm_target_dir = target_root.join("wasm-plugins");

    let builtin = crates_in(&workspace.join("plugins"));
    // Fixtures named `wasi_*` are built for wasm32-wasip2, as most plugin authors elsewhere do;
    // `refused_*` ones must fail to load, so they get a folder of their own.
    let (wasi_fixtures, fixtures): (Vec<String>, Vec<String>) =
        crates_in(&workspace.join("tests/fixtures/plugins"))
            .into_iter()
            .partition(|name| name.starts_with("wasi_"));
    let (refused, fixtures): (Vec<String>, Vec<String>) = fixtures
        .into_iter()
        .partition(|name| name.starts_with("refused_"));
    let all: Vec<String> = builtin
        .iter()
        .chain(&fixtures)
        .chain(&refused)
        .cloned()
        .collect();
    build(&workspace, &wasm_target_dir, WASM_TARGET, &all);
    build(&workspace, &wasm_target_dir, WASI_TARGET, &wasi_fixtures);
    let built = wasm_target_dir.join(WASM_TARGET).join("plugin");
    copy_modules(&built, &builtin, &profile_dir.join("plugins"));
    copy_modules(&built, &fixtures, &profile_dir.join("test-plugins"));
    copy_modules(&built, &refused, &profile_dir.join("test-plugins-refused"));
    let built = wasm_target_dir.join(WASI_TARGET).join("plugin");
    copy_modules(
        &built,
        &wasi_fixtures,
        &profile_dir.join("test-plugins-wasip2"),
    );
}

fn build(workspace: &Path, target_dir: &Path, target: &str, packages: &[String]) {
    if packages.is_empty() {
        return;
    }
    let mut command = Command::new(env("CARGO"));
    command
        .current_dir(workspace)
        .args([
            "build",
            "--profile",
            "plugin",
            "--target",
            target,
            "--message-format=short",
        ])
        .env("CARGO_TARGET_DIR", target_dir);
    for name in packages {
        command.args(["-p", name]);
    }
    // Settings meant for the host build must not leak into the wasm build.
    for variable in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        command.env_remove(variable);
    }
    let status = command
        .status()
        .unwrap_or_else(|error| panic!("cannot run cargo to build the plugins: {error}"));
    if !status.success() {
        panic!(
            "building the tool plugins failed (see above). If the target is missing, run `rustup target add {target}`."
        );
    }
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("cargo did not set {name}"))
}

/// Package names of the crates directly under `dir` (the SDK is a library, not a tool).
fn crates_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("Cargo.toml").is_file())
        .filter_map(|path| package_name(&path.join("Cargo.toml")))
        .filter(|name| name != "devtools-tool")
        .collect();
    names.sort();
    names
}

fn package_name(manifest: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let package = text.split("[package]").nth(1)?;
    package.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "name").then(|| value.trim().trim_matches('"').to_string())
    })
}

/// Copies `<name>.wasm` for each crate, and removes stale modules of crates that are gone.
fn copy_modules(built: &Path, names: &[String], destination: &Path) {
    if let Err(error) = std::fs::create_dir_all(destination) {
        panic!("cannot create {}: {error}", destination.display());
    }
    let wanted: Vec<String> = names
        .iter()
        .map(|name| format!("{}.wasm", name.replace('-', "_")))
        .collect();
    if let Ok(entries) = std::fs::read_dir(destination) {
        for entry in entries.filter_map(Result::ok) {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            if file_name.ends_with(".wasm") && !wanted.contains(&file_name) {
                let _removed = std::fs::remove_file(entry.path());
            }
        }
    }
    for file_name in wanted {
        let from = built.join(&file_name);
        if let Err(error) = std::fs::copy(&from, destination.join(&file_name)) {
            panic!("cannot copy {}: {error}", from.display());
        }
    }
}
