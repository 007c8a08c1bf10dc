//! The hostile-plugin suite: real components that attack one limit or boundary each, loaded by
//! the real server over MCP. Each must end in a clear error naming the plugin and the limit,
//! write nothing outside the sandbox, and leave the server serving the next call.

use crate::fixtures;
use crate::support::{McpServer, PrivateTmp, binary_dir, browser_args};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

fn plugin_dir(name: &str) -> String {
    binary_dir().join(name).to_string_lossy().into_owned()
}

/// A policy for `hostile`: file output and loopback navigation, no scripts; a small CPU budget
/// so the runaway cases end quickly.
fn hostile_policy(dir: &Path) -> String {
    let file = dir.join("policy.toml");
    std::fs::write(
        &file,
        "[plugins.hostile]\n\
         capabilities = [\"pages.read\", \"files.write\", \"navigate\"]\n\
         navigate = [\"http://127.0.0.1:*/*\"]\n\
         fuel = 50_000_000\n",
    )
    .expect("write policy");
    file.to_string_lossy().into_owned()
}

async fn assert_still_serving(server: &McpServer) {
    let listed = server.call("list_pages", json!({})).await;
    assert!(
        !listed.is_error && listed.text.starts_with("## Pages"),
        "the next call must work: {}",
        listed.text
    );
}

fn assert_stopped(text: &str, reason: &str) {
    assert!(
        text.starts_with("Error: The tool's plugin (")
            && text.contains("hostile.wasm) was stopped: ")
            && text.contains(reason)
            && text.ends_with("The server is still running."),
        "expected a stop for `{reason}`, got: {}",
        &text[..text.len().min(600)]
    );
}

#[tokio::test]
async fn runaway_plugins_are_stopped_at_their_limits_and_the_server_keeps_serving() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let policy = hostile_policy(scratch.path());
    let plugins = plugin_dir("test-plugins");
    let server = McpServer::start(&["--plugin-dir", &plugins, "--policy", &policy]).await;
    let cases = [
        (
            "loop",
            "it used more than its CPU budget of 50000000 fuel units",
        ),
        ("memory", "it tried to grow its memory to "),
        ("recursion", "it exceeded the stack limit of 1024 KiB"),
        ("output", "it declared more than 32.0 MiB of output"),
    ];
    for (mode, reason) in cases {
        let started = Instant::now();
        let stopped = server.call("hostile", json!({ "mode": mode })).await;
        assert!(stopped.is_error, "{mode}");
        assert_stopped(&stopped.text, reason);
        assert!(
            stopped.text.len() < 2_000,
            "{mode}: what a stopped plugin declared is dropped ({} bytes)",
            stopped.text.len()
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{mode} took {:?}",
            started.elapsed()
        );
        assert_still_serving(&server).await;
    }
    // No state survives a call: every call gets a fresh instance.
    for _ in 0..2 {
        let counted = server.call("hostile", json!({ "mode": "count" })).await;
        assert_eq!(counted.text, "calls in this instance: 1");
    }
    let panicked = server.call("hostile", json!({ "mode": "panic" })).await;
    assert!(panicked.is_error);
    assert!(
        panicked.text.contains("hostile.wasm) crashed: ") && panicked.text.contains("unreachable"),
        "{}",
        panicked.text
    );
    assert_still_serving(&server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn the_wall_clock_budget_stops_a_plugin_that_has_cpu_to_spare() {
    let plugins = plugin_dir("test-plugins");
    let server = McpServer::start(&[
        "--plugin-dir",
        &plugins,
        "--plugin-timeout",
        "1.5",
        "--plugin-fuel",
        "1000000000000",
    ])
    .await;
    let started = Instant::now();
    let stopped = server.call("hostile", json!({ "mode": "loop" })).await;
    let took = started.elapsed();
    assert_stopped(
        &stopped.text,
        "it ran longer than its time budget of 1.5 s (raise it with --plugin-timeout",
    );
    assert!(
        took >= Duration::from_millis(1_400) && took < Duration::from_secs(6),
        "{took:?}"
    );
    assert_still_serving(&server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn capabilities_pages_and_paths_a_plugin_was_not_given_are_refused() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let policy = hostile_policy(scratch.path());
    let workspace = tempfile::tempdir().expect("workspace");
    // Outside the workspace and outside the server's temp dir (which is always allowed).
    let private = PrivateTmp::new();
    private.assert_outside(&[workspace.path()]);
    let outside = private.outside();
    std::os::unix::fs::symlink(&outside, workspace.path().join("link")).expect("symlink");
    let plugins = plugin_dir("test-plugins");
    let workspace_arg = workspace.path().to_string_lossy().into_owned();
    let mut args = browser_args();
    args.extend(
        [
            "--plugin-dir",
            &plugins,
            "--policy",
            &policy,
            "--workspace",
            &workspace_arg,
        ]
        .map(str::to_string),
    );
    let server = McpServer::start_with(args, private.env())
        .await
        .expect("start");
    let pages = fixtures::server();
    server
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;

    for target in [
        "../../../../../../etc/devtools-mcp-escape".to_string(),
        outside.as_path().join("absolute").display().to_string(),
        "link/through-symlink".to_string(),
    ] {
        let refused = server
            .call("hostile", json!({ "mode": "save", "target": target }))
            .await;
        assert!(refused.is_error, "{target}");
        assert!(
            refused
                .text
                .starts_with("Error: save refused: Access denied: path "),
            "{target}: {}",
            refused.text
        );
    }
    assert_eq!(
        std::fs::read_dir(outside.as_path())
            .expect("outside")
            .count(),
        0,
        "nothing may be written outside the sandbox"
    );
    assert!(!Path::new("/etc/devtools-mcp-escape.txt").exists());
    let inside = server
        .call("hostile", json!({ "mode": "save", "target": "inside" }))
        .await;
    assert!(
        inside.text.starts_with("saved ") && inside.text.ends_with("inside.txt"),
        "{}",
        inside.text
    );

    let foreign = server
        .call("hostile", json!({ "mode": "foreign_page" }))
        .await;
    assert_eq!(foreign.text, "Error: get refused: No page found");

    let script = server.call("hostile", json!({ "mode": "script" })).await;
    assert_stopped(
        &script.text,
        "it called [method]page.evaluate-expression, which needs the capability `script`, and its policy does not grant it (add \"script\" to `capabilities` under [plugins.hostile] in the policy file)",
    );
    let away = server
        .call(
            "hostile",
            json!({ "mode": "navigate", "target": "http://example.com/" }),
        )
        .await;
    assert_stopped(
        &away.text,
        "it tried to navigate to http://example.com/, which matches none of the URL patterns its policy grants",
    );
    let allowed = server
        .call(
            "hostile",
            json!({ "mode": "navigate", "target": pages.url("/") }),
        )
        .await;
    assert!(!allowed.is_error, "{}", allowed.text);
    assert_still_serving(&server).await;
    server.shutdown().await;

    // Without a policy, a --plugin-dir plugin may only read pages.
    let server = McpServer::start(&["--plugin-dir", &plugins]).await;
    let denied = server
        .call("hostile", json!({ "mode": "save", "target": "x" }))
        .await;
    assert_stopped(
        &denied.text,
        "it called save-file, which needs the capability `files.write`",
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_wasi_component_loads_with_a_wasi_that_grants_nothing() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    listener.set_nonblocking(true).expect("nonblocking");
    let address = listener.local_addr().expect("address").to_string();
    let plugins = plugin_dir("test-plugins-wasip2");
    let server = McpServer::start(&["--plugin-dir", &plugins]).await;
    let answer = server
        .call("wasi_tool", json!({ "address": address }))
        .await;
    assert!(!answer.is_error, "{}", answer.text);
    assert_eq!(
        answer.text,
        format!(
            "environment variables: 0\n\
             read /etc/hostname: refused\n\
             list current folder: refused\n\
             write escape.txt: refused\n\
             connect {address}: refused"
        )
    );
    assert!(
        listener.accept().is_err(),
        "the plugin must not reach the listener"
    );
    assert!(!Path::new("escape.txt").exists());
    server.shutdown().await;
}
