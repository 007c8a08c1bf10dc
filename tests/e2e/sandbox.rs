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
        "it called evaluate-expression, which needs the capability `script`, and its policy does not grant it (add \"script\" to `capabilities` under [plugins.hostile] in the policy file)",
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
             wall clock: 0 s after the epoch\n\
             monotonic clock advanced: false\n\
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

/// A policy file for `hostile` with these lines.
fn policy_with(dir: &Path, rule: &str) -> String {
    let file = dir.join("policy.toml");
    std::fs::write(&file, format!("[plugins.hostile]\n{rule}\n")).expect("write policy");
    file.to_string_lossy().into_owned()
}

/// Whether the hostile init script still marks documents: navigates the selected page to
/// `url` (with a built-in tool) and reads `window.__hostileInit`.
async fn still_planted_after_navigating(server: &McpServer, url: &str) -> bool {
    let navigated = server.call("navigate_page", json!({ "url": url })).await;
    assert!(!navigated.is_error, "{}", navigated.text);
    let mark = server
        .call(
            "evaluate_script",
            json!({ "function": "() => String(window.__hostileInit)" }),
        )
        .await;
    assert!(
        mark.text.contains("undefined") || mark.text.contains("planted"),
        "{}",
        mark.text
    );
    mark.text.contains("planted")
}

#[tokio::test]
async fn init_scripts_need_script_and_never_outlive_the_call() {
    let pages = crate::support::FixtureServer::start(vec![
        crate::support::Route::html("/", "<title>Plain</title><p>plain</p>"),
        crate::support::Route::html("/slow", "<p>slow</p>").with_delay(Duration::from_secs(20)),
    ]);
    let scratch = tempfile::tempdir().expect("temp dir");
    let plugins = plugin_dir("test-plugins");

    // `navigate` alone does not allow running JavaScript through an init script.
    let policy = policy_with(
        scratch.path(),
        "capabilities = [\"pages.read\", \"navigate\"]",
    );
    let server = McpServer::start(&["--plugin-dir", &plugins, "--policy", &policy]).await;
    let refused = server
        .call(
            "hostile",
            json!({ "mode": "init_script", "target": pages.url("/") }),
        )
        .await;
    assert_stopped(
        &refused.text,
        "it called navigate, which needs the capability `script`",
    );
    assert!(!still_planted_after_navigating(&server, &pages.url("/")).await);
    server.shutdown().await;

    // With `script`, the script runs for that navigation only, and is gone even when the call
    // is stopped by its budget in the middle of the navigation.
    let policy = policy_with(
        scratch.path(),
        "capabilities = [\"pages.read\", \"navigate\", \"script\"]\ntimeout_secs = 2",
    );
    let server = McpServer::start(&["--plugin-dir", &plugins, "--policy", &policy]).await;
    let done = server
        .call(
            "hostile",
            json!({ "mode": "init_script", "target": pages.url("/") }),
        )
        .await;
    assert!(!done.is_error, "{}", done.text);
    assert!(!still_planted_after_navigating(&server, &pages.url("/")).await);
    let stopped = server
        .call(
            "hostile",
            json!({ "mode": "init_script", "target": pages.url("/slow") }),
        )
        .await;
    assert_stopped(&stopped.text, "it ran longer than its time budget of 2 s");
    assert!(!still_planted_after_navigating(&server, &pages.url("/")).await);
    server.shutdown().await;
}

#[tokio::test]
async fn navigation_is_checked_on_the_parsed_url_and_where_the_page_lands() {
    let pages = crate::support::FixtureServer::start(vec![crate::support::Route::html(
        "/",
        "<title>Plain</title><p>plain</p>",
    )]);
    let port = pages.port();
    let away = crate::support::FixtureServer::start(vec![crate::support::Route::html(
        "/",
        "<p>elsewhere</p>",
    )]);
    // A redirect from an allowed URL to one the policy does not allow.
    let redirecting = crate::support::FixtureServer::start(vec![
        crate::support::Route::html("/hop", "moved")
            .with_status(302)
            .with_header("Location", &format!("http://localhost:{}/", away.port())),
    ]);
    let scratch = tempfile::tempdir().expect("temp dir");
    let policy = policy_with(
        scratch.path(),
        "capabilities = [\"pages.read\", \"navigate\"]\nnavigate = [\"http://127.0.0.1:*/*\"]",
    );
    let plugins = plugin_dir("test-plugins");
    let server = McpServer::start(&["--plugin-dir", &plugins, "--policy", &policy]).await;

    // The user part of a URL looks like the allowed host; the host is localhost.
    let sneaky = format!("http://127.0.0.1:1@localhost:{port}/");
    let refused = server
        .call("hostile", json!({ "mode": "navigate", "target": sneaky }))
        .await;
    assert_stopped(
        &refused.text,
        "URLs with a user name or password are refused",
    );
    // Another spelling of the allowed address is the allowed address.
    let decimal = server
        .call(
            "hostile",
            json!({ "mode": "navigate", "target": format!("http://2130706433:{port}/") }),
        )
        .await;
    assert!(
        decimal
            .text
            .contains(&format!("Ok(\"http://127.0.0.1:{port}/\")")),
        "{}",
        decimal.text
    );
    // A redirect out of the allowed URLs stops the call and leaves the page blank.
    let redirected = server
        .call(
            "hostile",
            json!({ "mode": "navigate", "target": redirecting.url("/hop") }),
        )
        .await;
    assert_stopped(
        &redirected.text,
        &format!(
            "its page went to http://localhost:{}/ during the call (a redirect, or a navigation the page started)",
            away.port()
        ),
    );
    let listed = server.call("list_pages", json!({})).await;
    assert!(listed.text.contains("about:blank"), "{}", listed.text);
    server.shutdown().await;
}

#[tokio::test]
async fn plugins_without_files_write_write_nothing_and_names_are_the_hosts() {
    let pages = fixtures::server();
    // A temp dir of this server's own: the shared one fills with other tests' files meanwhile.
    let temp = tempfile::tempdir_in(crate::support::server_temp_dir()).expect("own temp dir");
    let spills = || {
        std::fs::read_dir(temp.path())
            .map(|entries| entries.count())
            .unwrap_or(0)
    };
    let plugins = plugin_dir("test-plugins");
    // Default grants (no policy): a screenshot too large to inline is not spilled to a file.
    let mut args = crate::support::browser_args();
    args.extend(["--plugin-dir".to_string(), plugins.clone()]);
    let own_temp = vec![(
        "TMPDIR".to_string(),
        temp.path().to_string_lossy().into_owned(),
    )];
    let server = McpServer::start_with(args, own_temp)
        .await
        .expect("server starts");
    server
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;
    let before = spills();
    let big = server
        .call("hostile", json!({ "mode": "big_screenshot" }))
        .await;
    assert!(
        big.text
            .contains("saving it to a file needs the capability `files.write`"),
        "{}",
        big.text
    );
    assert!(big.images.is_empty());
    assert!(spills() <= before, "a default-grant plugin wrote a file");
    server.shutdown().await;

    // With files.write, the host still picks the extension from a fixed set and the temp
    // file's name is a plain name.
    let scratch = tempfile::tempdir().expect("temp dir");
    let workspace = tempfile::tempdir().expect("workspace");
    let policy = policy_with(
        scratch.path(),
        "capabilities = [\"pages.read\", \"files.write\"]",
    );
    let server = McpServer::start(&[
        "--plugin-dir",
        &plugins,
        "--policy",
        &policy,
        "--workspace",
        &workspace.path().to_string_lossy(),
    ])
    .await;
    for name in [
        "../../escape.txt",
        "run.sh",
        ".bashrc",
        "notes.desktop",
        "x.txt\u{202E}",
    ] {
        let refused = server
            .call("hostile", json!({ "mode": "temp_file", "target": name }))
            .await;
        assert!(
            refused
                .text
                .starts_with("Error: temp file refused: Invalid file name: "),
            "{name}: {}",
            refused.text
        );
    }
    let saved = server
        .call(
            "hostile",
            json!({ "mode": "temp_file", "target": "notes.txt" }),
        )
        .await;
    assert!(
        saved.text.starts_with("saved ") && saved.text.ends_with("/notes.txt"),
        "{}",
        saved.text
    );
    let refused = server
        .call(
            "hostile",
            json!({ "mode": "save_extension", "target": ".sh" }),
        )
        .await;
    assert!(
        refused
            .text
            .contains("The extension .sh is not one the server writes"),
        "{}",
        refused.text
    );
    assert!(!workspace.path().join("planted.sh").exists());
    server.shutdown().await;
}

#[tokio::test]
async fn everything_a_handler_declares_counts_against_its_output_budget() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let policy = policy_with(scratch.path(), "output_mib = 1");
    let plugins = plugin_dir("test-plugins");
    let server = McpServer::start(&["--plugin-dir", &plugins, "--policy", &policy]).await;
    let long = server
        .call("hostile", json!({ "mode": "long_error" }))
        .await;
    assert_stopped(&long.text, "it declared more than 1.0 MiB of output");
    assert!(long.text.len() < 2_000);
    let images = server.call("hostile", json!({ "mode": "images" })).await;
    assert_stopped(&images.text, "it declared more than 64 images");
    assert!(images.images.is_empty());
    assert_still_serving(&server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn special_files_are_refused_at_once() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let policy = policy_with(
        scratch.path(),
        "capabilities = [\"pages.read\", \"files.write\"]",
    );
    let workspace = tempfile::tempdir().expect("workspace");
    let fifo = workspace.path().join("pipe.txt");
    let made = crate::support::command("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|status| status.success()), "mkfifo");
    let plugins = plugin_dir("test-plugins");
    let server = McpServer::start(&[
        "--plugin-dir",
        &plugins,
        "--policy",
        &policy,
        "--workspace",
        &workspace.path().to_string_lossy(),
    ])
    .await;
    let started = Instant::now();
    let refused = server
        .call("hostile", json!({ "mode": "save", "target": "pipe" }))
        .await;
    assert!(
        refused
            .text
            .starts_with("Error: save refused: Could not write ")
            && refused.text.contains("pipe.txt"),
        "{}",
        refused.text
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_still_serving(&server).await;
    server.shutdown().await;
}

#[tokio::test]
async fn out_of_range_limits_are_clear_errors_not_panics() {
    for (flag, value) in [("--plugin-timeout", "1e300"), ("--plugin-timeout", "1e19")] {
        let output = crate::support::server_command()
            .args([flag, value, "tools"])
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("Invalid duration \"{value}\"")),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let scratch = tempfile::tempdir().expect("temp dir");
    let policy = policy_with(scratch.path(), "timeout_secs = 1e300");
    let output = crate::support::server_command()
        .args(["--policy", policy.as_str(), "tools"])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("[plugins.hostile]: timeout_secs must be a number of seconds above 0"),
        "{stderr}"
    );
}
