//! `plugin build`: compiles a tool crate for wasm32-unknown-unknown with cargo and encodes the
//! core module into a component (the component type wit-bindgen embedded says how).

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-unknown-unknown";

pub fn build(dir: &Path, out: Option<&Path>) -> Result<PathBuf, String> {
    let manifest = dir.join("Cargo.toml");
    let name = package_name(&manifest)?;
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("target"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--target", TARGET, "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .map_err(|error| {
            format!("Cannot run cargo: {error}. Install Rust from https://rustup.rs.")
        })?;
    if !status.success() {
        return Err(format!(
            "cargo could not build {} (see its output above). If the target is missing: `rustup target add {TARGET}`.",
            manifest.display()
        ));
    }
    let artifact = name.replace('-', "_");
    let module = target_dir
        .join(TARGET)
        .join("release")
        .join(format!("{artifact}.wasm"));
    let bytes = std::fs::read(&module).map_err(|error| {
        format!(
            "cargo built no {} ({error}); is the crate a `cdylib`?",
            module.display()
        )
    })?;
    let component = if wasmparser::Parser::is_component(&bytes) {
        bytes
    } else {
        wit_component::ComponentEncoder::default()
            .module(&bytes)
            .and_then(|encoder| encoder.validate(true).encode())
            .map_err(|error| {
                format!(
                    "{} is not a tool module ({error:#}); does the crate call register_page_tool! or register_global_tool!?",
                    module.display()
                )
            })?
    };
    let out_dir = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.join("dist"));
    std::fs::create_dir_all(&out_dir)
        .map_err(|error| format!("Cannot create {}: {error}", out_dir.display()))?;
    let path = out_dir.join(format!("{artifact}.wasm"));
    std::fs::write(&path, component)
        .map_err(|error| format!("Cannot write {}: {error}", path.display()))?;
    Ok(path)
}

/// `[package] name` of a manifest.
fn package_name(manifest: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(manifest).map_err(|error| {
        format!(
            "Cannot read {} ({error}); run this in a tool crate made by `devtools-mcp plugin new`.",
            manifest.display()
        )
    })?;
    let parsed: toml::Table = toml::from_str(&text)
        .map_err(|error| format!("{} is not valid TOML: {error}", manifest.display()))?;
    parsed
        .get("package")
        .and_then(|package| package.get("name"))
        .and_then(|name| name.as_str())
        .map(str::to_string)
        .ok_or_else(|| format!("{} has no [package] name.", manifest.display()))
}
