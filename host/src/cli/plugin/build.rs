//! `plugin build`: makes a tool's component, by its language: a Rust crate is compiled for
//! wasm32-unknown-unknown with cargo and its core module encoded into a component (the
//! component type wit-bindgen embedded says how); a TypeScript tool is built by its npm
//! scripts (jco guest-types, tsc, componentize-js); a Python tool by componentize-py.

use super::scaffold::python::COMPONENTIZE_PY_VERSION;
use crate::runtime::Componentizer;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-unknown-unknown";

pub fn build(dir: &Path, out: Option<&Path>) -> Result<PathBuf, String> {
    if dir.join("Cargo.toml").is_file() {
        return build_rust(dir, out);
    }
    if dir.join("package.json").is_file() {
        return build_typescript(dir, out);
    }
    if dir.join("app.py").is_file() {
        return build_python(dir, out);
    }
    Err(format!(
        "{} holds no tool made by `devtools-mcp plugin new` (no Cargo.toml, package.json or app.py).",
        dir.display()
    ))
}

/// The component a non-Rust build wrote to `dist/`, copied to `out` when given.
fn deliver(dir: &Path, name: &str, out: Option<&Path>) -> Result<PathBuf, String> {
    let built = dir.join("dist").join(format!("{name}.wasm"));
    if !built.is_file() {
        return Err(format!("The build wrote no {}.", built.display()));
    }
    let Some(out) = out else {
        return Ok(built);
    };
    std::fs::create_dir_all(out)
        .map_err(|error| format!("Cannot create {}: {error}", out.display()))?;
    let path = out.join(format!("{name}.wasm"));
    std::fs::copy(&built, &path)
        .map_err(|error| format!("Cannot write {}: {error}", path.display()))?;
    Ok(path)
}

fn run(command: &mut Command, what: &str, missing: &str) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|error| format!("Cannot run {what}: {error}. {missing}"))?;
    match status.success() {
        true => Ok(()),
        false => Err(format!("{what} failed (see its output above).")),
    }
}

/// `npm install` once, then the tool's `npm run build`; or `npm run compile` when the project
/// has that script and its types are newer than its WIT (an edit of the handler makes no new
/// types: `jco guest-types` and an npm of its own cost most of a second of every edit).
fn build_typescript(dir: &Path, out: Option<&Path>) -> Result<PathBuf, String> {
    let manifest = dir.join("package.json");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|error| format!("Cannot read {}: {error}", manifest.display()))?;
    let package: serde_json::Value = serde_json::from_str(&text)
        .map_err(|error| format!("{} is not valid JSON: {error}", manifest.display()))?;
    let name = package["name"]
        .as_str()
        .ok_or_else(|| format!("{} has no name.", manifest.display()))?
        .to_string();
    let no_npm = "Install Node.js (20 or later) with npm.";
    if !dir.join("node_modules").is_dir() {
        run(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(dir),
            "npm install",
            no_npm,
        )?;
    }
    std::fs::create_dir_all(dir.join("dist"))
        .map_err(|error| format!("Cannot create {}: {error}", dir.join("dist").display()))?;
    let script = if package["scripts"]["compile"].is_string() && types_are_current(dir) {
        "compile"
    } else {
        "build"
    };
    run(
        Command::new("npm")
            .args(["run", "--silent", script])
            .current_dir(dir),
        &format!("npm run {script}"),
        no_npm,
    )?;
    carry_source_map(dir, &name)?;
    deliver(dir, &name, out)
}

/// A TypeScript project `plugin test --watch` can compile in its resident builder: installed,
/// its types current, and its `compile` script still the one `plugin new` wrote (any other
/// script is run as written). Its tool's name and world.
pub fn resident_typescript(dir: &Path) -> Option<(String, String)> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let package: serde_json::Value = serde_json::from_str(&text).ok()?;
    let name = package["name"].as_str()?;
    let ours = package["scripts"]["compile"].as_str()
        == Some(super::scaffold::typescript::compile_script(name).as_str());
    let ready = dir.join("node_modules").is_dir() && types_are_current(dir);
    (ours && ready).then(|| (name.to_string(), super::scaffold::world_name(name)))
}

/// What a TypeScript build does after compiling: the source map carried into the component.
pub fn finish_typescript(dir: &Path, name: &str) -> Result<PathBuf, String> {
    carry_source_map(dir, name)?;
    deliver(dir, name, None)
}

/// Whether `types/` (made by `npm run types`) is newer than every file of `wit/`.
fn types_are_current(dir: &Path) -> bool {
    match (newest(&dir.join("types")), newest(&dir.join("wit"))) {
        (Some(types), Some(wit)) => types >= wit,
        _ => false,
    }
}

/// The newest modification time of the files under `folder`, if it has any.
fn newest(folder: &Path) -> Option<std::time::SystemTime> {
    let mut latest = None;
    for entry in std::fs::read_dir(folder).ok()?.flatten() {
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        let time = if metadata.is_dir() {
            newest(&entry.path())
        } else {
            metadata.modified().ok()
        };
        latest = latest.max(time);
    }
    latest
}

/// Puts the compiler's source map (`build/tool.js.map`, from `"sourceMap": true`) into the
/// component, so a crash's stack names the author's `src/tool.ts` lines wherever the tool
/// runs. A project without a map builds as before.
fn carry_source_map(dir: &Path, name: &str) -> Result<(), String> {
    let map = dir.join("build").join("tool.js.map");
    let Ok(text) = std::fs::read_to_string(&map) else {
        return Ok(());
    };
    let slim = crate::source_map::slim(&text).map_err(|error| {
        format!(
            "{} is not a source map the server reads: {error}",
            map.display()
        )
    })?;
    let built = dir.join("dist").join(format!("{name}.wasm"));
    let mut wasm = std::fs::read(&built)
        .map_err(|error| format!("Cannot read {}: {error}", built.display()))?;
    crate::source_map::append_section(&mut wasm, slim.as_bytes());
    std::fs::write(&built, wasm)
        .map_err(|error| format!("Cannot write {}: {error}", built.display()))
}

/// componentize-py against the tool's world (`wit/world.wit`).
fn build_python(dir: &Path, out: Option<&Path>) -> Result<PathBuf, String> {
    let dir = dir
        .canonicalize()
        .map_err(|error| format!("Cannot open {}: {error}", dir.display()))?;
    let name = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let world_file = dir.join("wit/world.wit");
    let world = std::fs::read_to_string(&world_file)
        .ok()
        .and_then(|text| {
            text.lines().find_map(|line| {
                line.trim()
                    .strip_prefix("world ")?
                    .split_whitespace()
                    .next()
                    .map(String::from)
            })
        })
        .ok_or_else(|| format!("{} declares no world.", world_file.display()))?;
    std::fs::create_dir_all(dir.join("dist"))
        .map_err(|error| format!("Cannot create {}: {error}", dir.join("dist").display()))?;
    let output = dir.join("dist").join(format!("{name}.wasm"));
    // Its errors are the compiler's message wrapped in its own Python and Rust traces (a Rust
    // backtrace of ~60 lines where RUST_BACKTRACE is set): its stderr is read and trimmed.
    let ran = Command::new("componentize-py")
        .arg("-d")
        .arg(dir.join("wit"))
        .args(["-w", &world, "componentize", "-p"])
        .arg(&dir)
        .arg("app")
        .arg("-o")
        .arg(&output)
        .current_dir(&dir)
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|error| {
            format!(
                "Cannot run componentize-py: {error}. Install it with `pip install componentize-py=={COMPONENTIZE_PY_VERSION}`."
            )
        })?;
    print!("{}", String::from_utf8_lossy(&ran.stdout));
    if !ran.status.success() {
        let said = componentize_py_error(&String::from_utf8_lossy(&ran.stderr), &dir);
        return Err(format!(
            "componentize-py could not build {}:\n{said}",
            dir.display()
        ));
    }
    // The embedded CPython writes __pycache__ beside app.py while pre-initialising.
    let _removed = std::fs::remove_dir_all(dir.join("__pycache__"));
    deliver(&dir, &name, out)
}

/// componentize-py's error as the author needs it: the compiler's message (file, line, what
/// is wrong), without the launcher's Python frame, the `AssertionError:` it is wrapped in or a
/// Rust backtrace; componentize-py's `/0/` (where it mounts the folder) is the folder again.
fn componentize_py_error(stderr: &str, dir: &Path) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut in_launcher_frame = false;
    for line in stderr.lines() {
        if line.starts_with("Stack backtrace:") {
            break;
        }
        if line.starts_with("Traceback (most recent call last):") {
            continue;
        }
        // The launcher script's frame (`.../bin/componentize-py`) and its source lines.
        if line.starts_with("  File \"") && line.contains("componentize-py\"") {
            in_launcher_frame = true;
            continue;
        }
        if in_launcher_frame && line.starts_with("    ") {
            continue;
        }
        in_launcher_frame = false;
        let line = line.strip_prefix("AssertionError: ").unwrap_or(line);
        let folder = format!("{}/", dir.display());
        lines.push(line.replace("\"/0/", &format!("\"{folder}")));
    }
    while lines.last().is_some_and(|line| line.trim().is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

fn build_rust(dir: &Path, out: Option<&Path>) -> Result<PathBuf, String> {
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
    // Encoded as the server's loader does it: validated, then wit-component in a child process.
    let component = if wasmparser::Parser::is_component(&bytes) {
        bytes
    } else {
        Componentizer::isolated().encode(&bytes).map_err(|reason| {
            format!(
                "{} is not a tool module ({reason}); does the crate call register_page_tool! or register_global_tool!?",
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// What componentize-py 0.25.1 prints for a syntax error with RUST_BACKTRACE=1 (cut).
    const SYNTAX_ERROR: &str = "Traceback (most recent call last):\n  File \"/usr/bin/componentize-py\", line 8, in <module>\n    sys.exit(script())\n             ^^^^^^^^\nAssertionError:   File \"/0/app.py\", line 8\n    def oops(:\n             ^\nSyntaxError: invalid syntax\n\n\nCaused by:\n    SyntaxError: invalid syntax (app.py, line 8)\n\nStack backtrace:\n   0: <anyhow::Error>::msg::<alloc::string::String>\n   1: anyhow::__private::format_err\n";

    #[test]
    fn types_are_made_again_only_when_the_wit_is_newer() {
        let dir = tempfile::tempdir().unwrap();
        let at = |path: &str, secs: u64| {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, "x").unwrap();
            let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
            std::fs::File::options()
                .append(true)
                .open(&file)
                .unwrap()
                .set_modified(time)
                .unwrap();
        };
        at("wit/world.wit", 1_000);
        assert!(!types_are_current(dir.path()), "no types yet");
        at("types/interfaces/devtools-tool-types.d.ts", 2_000);
        assert!(types_are_current(dir.path()));
        at("wit/deps/tool.wit", 3_000);
        assert!(!types_are_current(dir.path()), "a WIT file changed after");
    }

    #[test]
    fn a_componentize_py_error_is_the_compilers_message_alone() {
        let said = componentize_py_error(SYNTAX_ERROR, Path::new("/home/me/tool"));
        assert_eq!(
            said,
            "  File \"/home/me/tool/app.py\", line 8\n    def oops(:\n             ^\nSyntaxError: invalid syntax\n\n\nCaused by:\n    SyntaxError: invalid syntax (app.py, line 8)"
        );
    }
}
