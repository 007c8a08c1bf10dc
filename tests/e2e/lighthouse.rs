//! `lighthouse_audit` running the real Lighthouse (the npm package, under Node.js) against
//! the page of the server's browser: one desktop navigation audit on a fixture page with
//! known accessibility faults, reports written into the workspace, and every printed score
//! read back from the JSON report. Without Node the audit part is skipped, loudly.

use crate::styles::selected_page_id;
use crate::support::{FixtureServer, McpServer, Route};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

const PAGE: &str = r#"<!doctype html>
<html lang="en"><head><title>Audit me</title><meta name="viewport" content="width=device-width"></head>
<body><h1>Audit</h1><img src="/pixel.png" width="10" height="10"><button></button>
<p style="color:#eee;background:#fff">Low contrast text</p></body></html>"#;

/// A 1x1 PNG.
const PIXEL: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0xF8, 0xCF, 0xC0, 0xF0,
    0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
];

/// Where `scripts/test` installs Lighthouse's npm package (`npm install --prefix`).
fn lighthouse_prefix() -> PathBuf {
    match std::env::var_os("DEVTOOLS_MCP_LIGHTHOUSE") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/.lighthouse"),
    }
}

fn node_available() -> bool {
    crate::support::command("node")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

#[tokio::test]
async fn without_node_the_audit_says_how_to_enable_it() {
    let server = McpServer::start(&[
        "--experimentalPageIdRouting",
        "--nodePath",
        "/nonexistent/node",
    ])
    .await;
    let opened = server
        .call("new_page", json!({ "url": "about:blank" }))
        .await;
    let page = selected_page_id(&opened.text);
    let audit = server
        .call("lighthouse_audit", json!({ "pageId": page }))
        .await;
    assert!(audit.is_error);
    assert!(
        audit.text.ends_with(
            "Error: lighthouse_audit runs Lighthouse with Node.js, and --nodePath /nonexistent/node does not exist. Install Node.js 20.19 or later (e.g. `apt-get install nodejs`) or pass --nodePath=/path/to/node."
        ),
        "{}",
        audit.text
    );
    let nowhere = server
        .call(
            "lighthouse_audit",
            json!({ "pageId": page, "outputDirPath": "/proc/self/reports" }),
        )
        .await;
    assert!(nowhere.is_error);
    assert!(nowhere.text.contains("Access denied"), "{}", nowhere.text);
    server.shutdown().await;
}

#[tokio::test]
async fn a_desktop_navigation_audit_reports_real_scores() {
    if !node_available() {
        eprintln!(
            "!!! SKIPPED: node is not installed, so Lighthouse cannot run (apt-get install nodejs)"
        );
        return;
    }
    let prefix = lighthouse_prefix();
    assert!(
        prefix
            .join("node_modules/lighthouse/core/index.js")
            .is_file(),
        "Lighthouse is not installed in {}: run scripts/test, or `npm install --prefix {} lighthouse@13.5.0`",
        prefix.display(),
        prefix.display()
    );
    let pages = FixtureServer::start(vec![
        Route::html("/audit", PAGE),
        Route::new("/pixel.png", "image/png", PIXEL),
    ]);
    let workspace = tempfile::tempdir().expect("workspace");
    let root = workspace.path().canonicalize().expect("canonical");
    let workspace_arg = root.display().to_string();
    let prefix_arg = prefix.display().to_string();
    let server = McpServer::start(&[
        "--experimentalPageIdRouting",
        "--workspace",
        &workspace_arg,
        "--lighthousePath",
        &prefix_arg,
    ])
    .await;
    let url = pages.url("/audit");
    let opened = server.call("new_page", json!({ "url": url })).await;
    let page = selected_page_id(&opened.text);
    let audit = server
        .call_within(
            "lighthouse_audit",
            json!({ "pageId": page, "mode": "navigation", "device": "desktop", "outputDirPath": "reports" }),
            Duration::from_secs(150),
        )
        .await;
    assert!(!audit.is_error, "{}", audit.text);
    let text = audit.text;
    let report_json = root.join("reports/report.json");
    let report_html = root.join("reports/report.html");
    assert!(
        text.starts_with(&format!(
            "## Lighthouse audit results\nMode: navigation\nDevice: desktop\nURL: {url}\n### Category scores\n"
        )),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(
            "### Reports\n- {}\n- {}",
            report_json.display(),
            report_html.display()
        )),
        "{text}"
    );
    let lhr: Value = serde_json::from_slice(&std::fs::read(&report_json).expect("report.json"))
        .expect("a JSON report");
    let html = std::fs::read_to_string(&report_html).expect("report.html");
    assert!(
        html.contains("<html") && html.contains("Lighthouse"),
        "an HTML report"
    );
    assert_eq!(lhr["configSettings"]["formFactor"], "desktop");
    // Every score printed is the report's own.
    let categories = lhr["categories"].as_object().expect("categories");
    assert!(categories.contains_key("accessibility") && categories.contains_key("seo"));
    for category in categories.values() {
        let score = match category["score"].as_f64() {
            Some(score) => format!("{}", (score * 100.0).round()),
            None => "n/a".to_string(),
        };
        let line = format!(
            "- {}: {score} ({})",
            category["title"].as_str().expect("title"),
            category["id"].as_str().expect("id")
        );
        assert!(text.contains(&line), "{line} in\n{text}");
    }
    // The page's faults are found, with the nodes they flag.
    assert!(
        text.contains("\n- image-alt [accessibility, seo]: "),
        "{text}"
    );
    assert!(text.contains("\n- button-name [accessibility]: "), "{text}");
    assert!(text.contains("selector=\"body > img\""), "{text}");
    let failed = text
        .lines()
        .find_map(|line| line.strip_prefix("Failed: "))
        .and_then(|count| count.parse::<usize>().ok())
        .expect("a failed count");
    let failing_in_report = lhr["audits"]
        .as_object()
        .expect("audits")
        .values()
        .filter(|audit| audit["score"].as_f64().is_some_and(|score| score < 1.0))
        .count();
    assert_eq!(failed, failing_in_report);
    // The audit ran on the server's own page, which is still there and usable.
    let snapshot = server
        .call("take_snapshot", json!({ "pageId": page }))
        .await;
    assert!(snapshot.text.contains("Audit me"), "{}", snapshot.text);
    server.shutdown().await;
}

/// Node processes whose parent is `server` (the Lighthouse runner is one).
fn node_children(server: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The parent is the 4th field, after the parenthesised command name.
        let parent = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<u32>().ok());
        let command = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if parent == Some(server) && String::from_utf8_lossy(&command).contains("lighthouseDir") {
            found.push(pid);
        }
    }
    found
}

/// A real client follows an audit as a task (`--experimentalTasks`) and cancels it midway:
/// the task says what runs while it runs, the cancellation kills the Lighthouse runner, and
/// the page answers the next call at once.
#[tokio::test]
async fn an_audit_as_a_task_is_followed_and_cancelled_midway() {
    use crate::tasks::{settled_task, stdio_client};
    use rmcp::model::{CallToolRequestParams, CallToolResponse, CancelTaskParams, TaskStatus};
    if !node_available() {
        eprintln!(
            "!!! SKIPPED: node is not installed, so Lighthouse cannot run (apt-get install nodejs)"
        );
        return;
    }
    let prefix = lighthouse_prefix();
    assert!(
        prefix
            .join("node_modules/lighthouse/core/index.js")
            .is_file(),
        "Lighthouse is not installed in {}: run scripts/test",
        prefix.display()
    );
    let pages = FixtureServer::start(vec![
        Route::html("/audit", PAGE),
        Route::new("/pixel.png", "image/png", PIXEL),
    ]);
    let prefix_arg = prefix.display().to_string();
    let (client, child) = stdio_client(&["--lighthousePath", &prefix_arg]).await;
    let server_pid = child.id().expect("server pid");
    let call = |tool: &str, arguments: Value| {
        let Value::Object(arguments) = arguments else {
            panic!("an object")
        };
        CallToolRequestParams::new(tool.to_string()).with_arguments(arguments)
    };
    let opened = client
        .call_tool_once(call("navigate_page", json!({ "url": pages.url("/audit") })))
        .await
        .expect("navigate");
    if let CallToolResponse::Task(created) = &opened {
        settled_task(&client, &created.task.task_id, Duration::from_secs(60)).await;
    }
    let audit = client
        .call_tool_once(call(
            "lighthouse_audit",
            json!({ "mode": "navigation", "device": "desktop" }),
        ))
        .await
        .expect("lighthouse_audit");
    let CallToolResponse::Task(created) = audit else {
        panic!("an audit runs longer than a second, so it is a task: {audit:?}");
    };
    let id = created.task.task_id.clone();
    // Followed: the runner is up and the task says what runs.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while node_children(server_pid).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the Lighthouse runner never started"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let state = client
        .get_task(rmcp::model::GetTaskParams::new(id.clone()))
        .await
        .expect("tasks/get");
    assert_eq!(state.task.status(), TaskStatus::Working, "{state:?}");
    assert_eq!(
        state.task.task.status_message.as_deref(),
        Some("lighthouse_audit is running")
    );
    // Cancelled midway: the runner is killed and the page is free.
    let cancelled_at = std::time::Instant::now();
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .expect("tasks/cancel");
    let state = settled_task(&client, &id, Duration::from_secs(15)).await;
    assert_eq!(state.task.status(), TaskStatus::Cancelled, "{state:?}");
    while !node_children(server_pid).is_empty() {
        assert!(
            cancelled_at.elapsed() < Duration::from_secs(10),
            "the Lighthouse runner outlived the cancellation"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let next = client
        .call_tool_once(call(
            "evaluate_script",
            json!({ "function": "() => 'free again'" }),
        ))
        .await
        .expect("next call");
    assert!(format!("{next:?}").contains("free again"), "{next:?}");
    assert!(
        cancelled_at.elapsed() < Duration::from_secs(20),
        "the page stayed busy"
    );
    let _ = client.cancel().await;
}
