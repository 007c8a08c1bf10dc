//! A client this project did not write: the official Python MCP SDK drives the server, in its
//! default mode (`server/discover`, protocol 2026-07-28, no `initialize`) and in its legacy
//! mode (`initialize`, 2025-11-25), over stdio and over HTTP.

use crate::fixtures;
use crate::support::{HttpServer, TenantSpec};
use serde_json::Value;
use std::path::{Path, PathBuf};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/python/mcp_client.py");
/// The roots timeout the stdio servers run with: a call that waited on it would take this long.
const LONG_ROOTS_TIMEOUT_MS: &str = "30000";
/// A call that does not wait on a handshake answers well within this (2 loaded cores).
const PROMPT_SECONDS: f64 = 3.0;

/// What a run of the script printed, and its stderr (the server's, over stdio, and the SDK's
/// warnings).
struct Run {
    report: Value,
    stderr: String,
}

/// Runs tests/python/mcp_client.py in `mode` against `target` (the binary, or an HTTP URL).
async fn run_script(mode: &str, target: &str, url: String, env: Vec<(&str, PathBuf)>) -> Run {
    let (mode, target) = (mode.to_owned(), target.to_owned());
    let env: Vec<(String, PathBuf)> = env.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    let output = tokio::task::spawn_blocking(move || {
        let mut command = crate::support::command("python3");
        command
            .env("MCP_CLIENT_MODE", mode)
            .env("DEVTOOLS_MCP_ROOTS_TIMEOUT_MS", LONG_ROOTS_TIMEOUT_MS)
            .envs(env)
            .arg(SCRIPT)
            .arg(&target)
            .arg(url);
        if !target.starts_with("http://") {
            command.args(crate::support::browser_args());
        }
        command.output()
    })
    .await
    .expect("join")
    .expect("run python3 (install the SDK with `pip install mcp`)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "python client failed: {stderr}");
    let report = serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"));
    Run { report, stderr }
}

/// Tools listed, a page opened, a snapshot of it, a script run on it, every call prompt, and
/// the server's instructions received, whatever the protocol revision.
fn assert_served(report: &Value, protocol: &str) {
    assert_eq!(report["protocolVersion"], protocol, "{report}");
    let instructions = report["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains("pageId") && instructions.contains("take_snapshot"),
        "{report}"
    );
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(
        tools.contains(&"take_snapshot") && tools.contains(&"new_page"),
        "{report}"
    );
    assert!(
        report["probe"]
            .as_str()
            .is_some_and(|probe| probe.contains("no_such_tool")),
        "an unknown tool is refused by name: {report}"
    );
    let probe = report["probeSeconds"].as_f64().unwrap_or(f64::MAX);
    assert!(
        probe < PROMPT_SECONDS,
        "the first call took {probe:.2} s: it waited on a handshake ({report})"
    );
    assert_eq!(report["calls"]["new_page"]["isError"], false, "{report}");
    let snapshot = report["calls"]["take_snapshot"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(snapshot.contains("RootWebArea \"Fixture\""), "{report}");
    assert_eq!(
        report["calls"]["evaluate_script"]["text"],
        "Script ran on page and returned:\n```json\n\"Fixture\"\n```"
    );
    let script = report["calls"]["evaluate_script"]["seconds"]
        .as_f64()
        .unwrap_or(f64::MAX);
    assert!(
        script < PROMPT_SECONDS,
        "evaluate_script took {script:.2} s"
    );
}

/// Typed results: a client that gets structured content (2026-07-28 always; `serve` has it on
/// for every client, as 1.11.0's CLI mode does) gets every tool's output schema, and the SDK
/// validates each call's structured content against it; other clients get 1.11.0's list.
fn assert_typed(report: &Value, typed: bool) {
    let tools = report["tools"].as_array().map_or(0, Vec::len) as u64;
    let schemas = if typed { tools } else { 0 };
    assert_eq!(report["outputSchemas"].as_u64(), Some(schemas), "{report}");
    let keys = &report["calls"]["new_page"]["structuredKeys"];
    match typed {
        true => assert!(
            keys.as_array()
                .is_some_and(|keys| keys.contains(&Value::from("pages"))),
            "{report}"
        ),
        false => assert!(keys.is_null(), "{report}"),
    }
}

/// The client's root (outside the temp dir, which is always allowed) opened the sandbox: the
/// snapshot was saved into it.
fn assert_saved_into_root(report: &Value, root: &Path) {
    let saved = root.join("from-python.txt");
    assert_eq!(
        report["calls"]["save_snapshot"]["text"],
        format!("Saved snapshot to {}.", saved.display()),
        "{report}"
    );
    let written = std::fs::read_to_string(&saved).expect("snapshot saved into the client's root");
    assert!(written.contains("RootWebArea \"Fixture\""), "{written}");
}

/// Over stdio, with the client's roots: `mode` connects with protocol `protocol`, the calls
/// are prompt although the roots timeout is 30 s, and the roots open the sandbox (legacy:
/// `roots/list` after `initialized`; 2026-07-28: an input request on the first call).
async fn stdio_with_roots(mode: &str, protocol: &str) {
    let pages = fixtures::server();
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("root dir");
    let root_path = root.path().canonicalize().expect("canonical root");
    let run = run_script(
        mode,
        env!("CARGO_BIN_EXE_devtools-mcp"),
        pages.url("/"),
        vec![("MCP_CLIENT_ROOT", root_path.clone())],
    )
    .await;
    assert_served(&run.report, protocol);
    assert_typed(&run.report, protocol == "2026-07-28");
    assert_saved_into_root(&run.report, &root_path);
    if protocol == "2026-07-28" {
        assert_eq!(run.report["listenHonored"], true, "{}", run.report);
    }
}

#[tokio::test]
async fn the_python_sdk_in_its_legacy_mode_lists_and_calls_tools_with_its_roots() {
    stdio_with_roots("legacy", "2025-11-25").await;
}

#[tokio::test]
async fn the_python_sdk_in_its_default_mode_lists_and_calls_tools_with_its_roots() {
    stdio_with_roots("auto", "2026-07-28").await;
}

/// The issue-46 stall: the SDK's default mode offers no roots and sends no `initialized`; its
/// first call used to wait the whole roots timeout (5 s; 30 s here) for that handshake.
#[tokio::test]
async fn a_2026_07_28_call_over_stdio_never_waits_for_a_handshake() {
    let pages = fixtures::server();
    let run = run_script(
        "auto",
        env!("CARGO_BIN_EXE_devtools-mcp"),
        pages.url("/"),
        vec![],
    )
    .await;
    assert_served(&run.report, "2026-07-28");
    assert_typed(&run.report, true);
}

/// Over HTTP, in both modes: the same calls, and ending a legacy session is not refused (the
/// SDK warns `Session termination failed: 202` on anything but 200 or 204).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_is_served_over_http_in_both_modes() {
    let pages = fixtures::server();
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice").on_loopback()],
        &[],
    )
    .await;
    for (mode, protocol) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let run = run_script(
            mode,
            &server.mcp_url(),
            pages.url("/"),
            vec![("MCP_CLIENT_TOKEN", PathBuf::from("token-alice"))],
        )
        .await;
        assert_served(&run.report, protocol);
        assert_typed(&run.report, true);
        assert!(
            !run.stderr.contains("Session termination failed"),
            "{mode}: {}",
            run.stderr
        );
    }
}
