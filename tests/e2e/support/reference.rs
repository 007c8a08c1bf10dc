//! The reference server, chrome-devtools-mcp 1.11.0 from npm, and the MCP Inspector CLI: found
//! in `tests/reference/node_modules` (installed there by `scripts/test`, or here when npm is
//! present and they are missing), run with Node against the same Debian Chromium.

use super::mcp::{McpServer, chromium_path};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The release this server is a drop-in for.
pub const REFERENCE_VERSION: &str = "1.11.0";

/// `tests/reference` of this checkout (its `package.json` pins the versions).
pub fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("tests")
        .join("reference")
}

/// Why the Node-based tests cannot run here, or `None` when Node and npm are usable. Node must
/// be recent enough for the reference (^20.19 or >= 22.12).
pub fn node_missing() -> Option<String> {
    let version = crate::support::command("node").arg("--version").output();
    let Ok(version) = version else {
        return Some("node is not installed".into());
    };
    let text = String::from_utf8_lossy(&version.stdout).trim().to_string();
    let numbers: Vec<u32> = text
        .trim_start_matches('v')
        .split('.')
        .filter_map(|part| part.parse().ok())
        .collect();
    let recent = match numbers.as_slice() {
        [20, minor, ..] => *minor >= 19,
        [22, minor, ..] => *minor >= 12,
        [major, ..] => *major == 21 || *major >= 23,
        _ => false,
    };
    if !recent {
        return Some(format!(
            "node {text} is too old for chrome-devtools-mcp {REFERENCE_VERSION} (needs ^20.19 or >=22.12)"
        ));
    }
    if crate::support::command("npm")
        .arg("--version")
        .output()
        .is_err()
    {
        return Some("npm is not installed".into());
    }
    None
}

/// Whether a test against the reference can run here: `false`, after a note naming `what` was
/// skipped and why, when Node is missing; otherwise the reference is installed if it is not
/// yet (a failed install fails the test).
pub fn reference_ready(what: &str) -> bool {
    if let Some(reason) = node_missing() {
        eprintln!(
            "\n!!!!!!!!\n!!! SKIPPED {what}: {reason}.\n!!! scripts/test installs Node and chrome-devtools-mcp {REFERENCE_VERSION}; run it to compare with the reference.\n!!!!!!!!\n"
        );
        return false;
    }
    if let Err(error) = ensure_installed() {
        panic!("{error}");
    }
    true
}

/// Installs the pinned packages into `tests/reference` unless they are there already.
pub fn ensure_installed() -> Result<(), String> {
    let dir = reference_dir();
    let installed = dir
        .join("node_modules")
        .join("chrome-devtools-mcp")
        .join("package.json");
    let inspector = inspector_cli();
    let current = std::fs::read_to_string(&installed)
        .is_ok_and(|text| text.contains(&format!("\"version\": \"{REFERENCE_VERSION}\"")));
    if current && inspector.is_file() {
        return Ok(());
    }
    let output = crate::support::command("npm")
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&dir)
        .env("PUPPETEER_SKIP_DOWNLOAD", "1")
        .output()
        .map_err(|error| format!("cannot run npm: {error}"))?;
    if !output.status.success() {
        return Err(format!(
            "npm install in {} failed:\n{}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

/// The reference's stdio entry point.
pub fn reference_script() -> PathBuf {
    reference_dir()
        .join("node_modules")
        .join("chrome-devtools-mcp")
        .join("build")
        .join("src")
        .join("bin")
        .join("chrome-devtools-mcp.js")
}

/// The MCP Inspector CLI's entry point (`@modelcontextprotocol/inspector-cli`).
pub fn inspector_cli() -> PathBuf {
    reference_dir()
        .join("node_modules")
        .join("@modelcontextprotocol")
        .join("inspector-cli")
        .join("build")
        .join("cli.js")
}

/// Runs the Inspector CLI: `--cli <command...> <method args...>`. It resolves its own
/// `package.json` relative to its working directory, so it runs in its build folder.
pub fn inspector(command: &[String], method: &[&str]) -> Result<String, String> {
    let script = inspector_cli();
    let output = crate::support::command("node")
        .arg(&script)
        .arg("--cli")
        .args(command)
        .args(method)
        .current_dir(script.parent().unwrap_or(Path::new(".")))
        .output()
        .map_err(|error| format!("cannot run the inspector: {error}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        return Err(format!(
            "the inspector failed ({}):\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(stdout)
}

/// The reference server over stdio, with the flags the tests give ours: headless, a
/// throwaway profile, no sandbox, no GPU, nothing sent anywhere.
pub async fn start_reference(extra_args: &[&str]) -> McpServer {
    let mut args = vec![
        "--require".into(),
        reference_dir()
            .join("node20-polyfills.cjs")
            .to_string_lossy()
            .into_owned(),
        reference_script().to_string_lossy().into_owned(),
        "--headless".into(),
        "--isolated".into(),
        "--executablePath".into(),
        chromium_path(),
        "--chromeArg=--no-sandbox".into(),
        "--chromeArg=--disable-gpu".into(),
        "--no-usage-statistics".into(),
        "--no-performance-crux".into(),
    ];
    args.extend(extra_args.iter().map(|arg| (*arg).to_string()));
    let env = [
        ("CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS", "1"),
        ("CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS", "1"),
        ("CHROME_DEVTOOLS_MCP_NO_CONFIG_DISCOVERY", "1"),
    ]
    .map(|(key, value)| (key.to_string(), value.to_string()))
    .to_vec();
    match McpServer::start_program(Path::new("node"), args, env).await {
        Ok(server) => server,
        Err(message) => panic!("the reference server did not start: {message}"),
    }
}
