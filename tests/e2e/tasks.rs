//! Long calls as tasks (`--experimentalTasks`, the MCP Tasks extension, SEP-2663), with rmcp's
//! client declaring the extension: a call that runs past a second comes back as a task whose
//! answer `tasks/get` gives once done; `tasks/cancel` stops a busy script so its page answers
//! the next call at once; a client that does not declare the extension is answered directly.

use crate::support::{FixtureServer, McpServer, Route, browser_args, tokio_command};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, GetTaskParams,
    Implementation, InitializeRequestParams, TaskPayload, TaskStatus,
};
use serde_json::json;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn call(tool: &str, arguments: serde_json::Value) -> CallToolRequestParams {
    let serde_json::Value::Object(arguments) = arguments else {
        panic!("arguments are an object");
    };
    CallToolRequestParams::new(tool.to_string()).with_arguments(arguments)
}

const SLOW: &str = "async () => { await new Promise(resolve => setTimeout(resolve, 3000)); return 'late answer'; }";
const BUSY: &str =
    "() => { const t = Date.now(); while (Date.now() - t < 60000); return 'never'; }";

#[tokio::test]
async fn a_long_call_is_a_task_that_answers_when_done_and_stops_when_cancelled() {
    let pages = FixtureServer::start(vec![Route::html(
        "/",
        "<!doctype html><title>T</title><p>page</p>",
    )]);
    let mut args = browser_args();
    args.push("--experimentalTasks".into());
    let mut child = tokio_command(env!("CARGO_BIN_EXE_devtools-mcp"))
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the server");
    let transport = (
        child.stdout.take().expect("stdout"),
        child.stdin.take().expect("stdin"),
    );
    let info = InitializeRequestParams::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("tasks-test", "1.0.0"),
    );
    let client = info.serve(transport).await.expect("initialize");
    let declared = client
        .peer_info()
        .and_then(|info| info.capabilities.extensions.clone())
        .is_some_and(|extensions| extensions.contains_key("io.modelcontextprotocol/tasks"));
    assert!(declared, "the server declares the Tasks extension");

    // Quick calls are answered directly.
    let opened = client
        .call_tool_once(call("navigate_page", json!({ "url": pages.url("/") })))
        .await
        .expect("navigate");
    let _ = opened;
    let quick = client
        .call_tool_once(call(
            "evaluate_script",
            json!({ "function": "() => 41 + 1" }),
        ))
        .await
        .expect("quick call");
    assert!(matches!(quick, CallToolResponse::Complete(_)), "{quick:?}");

    // A 3-s script: a task, then its answer.
    let slow = client
        .call_tool_once(call("evaluate_script", json!({ "function": SLOW })))
        .await
        .expect("slow call");
    let CallToolResponse::Task(created) = slow else {
        panic!("a task for a 3-s call: {slow:?}");
    };
    let task_id = created.task.task_id.clone();
    let deadline = Instant::now() + Duration::from_secs(30);
    let done = loop {
        let state = client
            .get_task(GetTaskParams::new(task_id.clone()))
            .await
            .expect("tasks/get");
        if state.task.status() != TaskStatus::Working {
            break state;
        }
        assert!(Instant::now() < deadline, "the task never finished");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let TaskPayload::Completed { result } = &done.task.payload else {
        panic!("completed: {done:?}");
    };
    assert!(format!("{result:?}").contains("late answer"), "{result:?}");

    // A 60-s busy script: cancelled, stopped, and the page answers the next call.
    let busy = client
        .call_tool_once(call("evaluate_script", json!({ "function": BUSY })))
        .await
        .expect("busy call");
    let CallToolResponse::Task(created) = busy else {
        panic!("a task for a 60-s call: {busy:?}");
    };
    let cancelled_at = Instant::now();
    client
        .cancel_task(CancelTaskParams::new(created.task.task_id.clone()))
        .await
        .expect("tasks/cancel");
    loop {
        let state = client
            .get_task(GetTaskParams::new(created.task.task_id.clone()))
            .await
            .expect("tasks/get");
        if state.task.status() == TaskStatus::Cancelled {
            break;
        }
        assert!(
            cancelled_at.elapsed() < Duration::from_secs(15),
            "not cancelled: {state:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let next = client
        .call_tool_once(call(
            "evaluate_script",
            json!({ "function": "() => 'free again'" }),
        ))
        .await
        .expect("next call");
    let CallToolResponse::Complete(next) = next else {
        panic!("answered directly: {next:?}");
    };
    assert!(format!("{next:?}").contains("free again"), "{next:?}");
    assert!(
        cancelled_at.elapsed() < Duration::from_secs(20),
        "the page stayed busy"
    );

    // Another task id is refused.
    assert!(
        client
            .get_task(GetTaskParams::new("not-a-task"))
            .await
            .is_err()
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_client_without_the_extension_is_answered_directly() {
    let server = McpServer::start(&["--experimentalTasks"]).await;
    let answer = server
        .call("evaluate_script", json!({ "function": SLOW }))
        .await;
    assert!(!answer.is_error, "{}", answer.text);
    assert!(answer.text.contains("late answer"), "{}", answer.text);
    server.shutdown().await;
}

#[test]
fn serve_refuses_the_flag_rather_than_ignore_it() {
    let output = crate::support::server_command()
        .args([
            "serve",
            "--experimentalTasks",
            "--tenants",
            "/nonexistent.toml",
        ])
        .output()
        .expect("run the server");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("--experimentalTasks is served over stdio only"),
        "{stderr}"
    );
}
