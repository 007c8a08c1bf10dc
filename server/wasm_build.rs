//! Building plugin crates for wasm from a build script: shared by the host's build script (the
//! built-in tools) and the test plugins' (`tests/fixtures/built-plugins`), which is a
//! dev-dependency so that `cargo run` does not build what only the tests load.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// Where a build script's products go: the profile folder holding the binary (`OUT_DIR` is
/// `<target>/<profile>/build/<pkg>-<hash>/out`), and the nested wasm build's own target
/// directory beside it, so that build never waits on the lock of the build running the script.
pub struct Places {
    pub out_dir: PathBuf,
    pub profile_dir: PathBuf,
    pub wasm_target_dir: PathBuf,
}

impl Places {
    pub fn from_env() -> Places {
        let out_dir = PathBuf::from(env("OUT_DIR"));
        let Some(profile_dir) = out_dir.ancestors().nth(3).map(Path::to_path_buf) else {
            panic!("unexpected OUT_DIR layout: {}", out_dir.display());
        };
        let Some(target_root) = profile_dir.parent().map(Path::to_path_buf) else {
            panic!("unexpected target layout: {}", profile_dir.display());
        };
        Places {
            out_dir,
            profile_dir,
            wasm_target_dir: target_root.join("wasm-plugins"),
        }
    }

    /// Where the nested build leaves the modules of `target`.
    pub fn built(&self, target: &str) -> PathBuf {
        self.wasm_target_dir.join(target).join("plugin")
    }
}

/// The workspace root: `levels_up` folders above the manifest of the package being built.
pub fn workspace(levels_up: usize) -> PathBuf {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    match manifest_dir.ancestors().nth(levels_up) {
        Some(root) => root.to_path_buf(),
        None => manifest_dir,
    }
}

/// Whether the caller asked for no wasm build (the fuzz build: its nightly or instrumented
/// toolchain has no wasm target, and the fuzz targets embed no tool).
pub fn skipped() -> bool {
    println!("cargo:rerun-if-env-changed=DEVTOOLS_MCP_SKIP_PLUGIN_BUILD");
    std::env::var_os("DEVTOOLS_MCP_SKIP_PLUGIN_BUILD").is_some()
}

/// `cargo build --profile plugin --target <target> -p <each>` into `target_dir`.
pub fn build(workspace: &Path, target_dir: &Path, target: &str, packages: &[String]) {
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

pub fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("cargo did not set {name}"))
}

/// Package names of the crates directly under `dir` (the SDK is a library, not a tool).
pub fn crates_in(dir: &Path) -> Vec<String> {
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
pub fn copy_modules(built: &Path, names: &[String], destination: &Path) {
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
