//! Long calls as tasks (`--experimentalTasks`, the MCP Tasks extension, SEP-2663), with rmcp's
//! client declaring the extension: a call that runs past a second comes back as a task whose
//! answer `tasks/get` gives once done; `tasks/cancel` stops a busy script so its page answers
//! the next call at once; a client that does not declare the extension is answered directly;
//! over HTTP a task is its tenant's MCP session's alone.

use crate::support::{
    FixtureServer, HttpServer, McpServer, Route, TenantSpec, browser_args, tokio_command,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, GetTaskParams,
    Implementation, InitializeRequestParams, TaskPayload, TaskStatus,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
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

/// The server over stdio with `--experimentalTasks` and `extra` flags, and an rmcp client
/// declaring the Tasks extension; the child is killed when dropped.
pub(crate) async fn stdio_client(
    extra: &[&str],
) -> (
    RunningService<RoleClient, InitializeRequestParams>,
    tokio::process::Child,
) {
    let mut args = browser_args();
    args.push("--experimentalTasks".into());
    args.extend(extra.iter().map(|arg| arg.to_string()));
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
    (info.serve(transport).await.expect("initialize"), child)
}

/// Polls task `id` until it leaves `working`.
pub(crate) async fn settled_task(
    client: &RunningService<RoleClient, InitializeRequestParams>,
    id: &str,
    limit: Duration,
) -> rmcp::model::GetTaskResult {
    let deadline = Instant::now() + limit;
    loop {
        let state = client
            .get_task(GetTaskParams::new(id.to_string()))
            .await
            .expect("tasks/get");
        if state.task.status() != TaskStatus::Working {
            return state;
        }
        assert!(
            Instant::now() < deadline,
            "the task never settled: {state:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_long_call_is_a_task_that_answers_when_done_and_stops_when_cancelled() {
    let pages = FixtureServer::start(vec![Route::html(
        "/",
        "<!doctype html><title>T</title><p>page</p>",
    )]);
    let (client, _child) = stdio_client(&[]).await;
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
    let done = settled_task(&client, &created.task.task_id, Duration::from_secs(30)).await;
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
    let state = settled_task(&client, &created.task.task_id, Duration::from_secs(15)).await;
    assert_eq!(state.task.status(), TaskStatus::Cancelled, "{state:?}");
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

/// An rmcp client over HTTP that declares the Tasks extension, with a tenant's token.
async fn http_client(
    server: &HttpServer,
    token: &str,
) -> RunningService<RoleClient, InitializeRequestParams> {
    let config = StreamableHttpClientTransportConfig::with_uri(server.mcp_url()).auth_header(token);
    let info = InitializeRequestParams::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("tasks-http-test", "1.0.0"),
    );
    info.serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("initialize over HTTP")
}

/// Over HTTP (`serve`), a tenant's long call is a task of its MCP session: answered once done,
/// stopped in Chromium when cancelled (the page answers the next call at once), and invisible
/// to another tenant, which can neither read nor cancel it.
#[tokio::test]
async fn over_http_a_tenants_long_call_is_a_task_of_its_session_only() {
    let pages = FixtureServer::start(vec![Route::html(
        "/",
        "<!doctype html><title>T</title><p>page</p>",
    )]);
    let tenants = [
        TenantSpec::new("alice", "token-alice").on_loopback(),
        TenantSpec::new("bob", "token-bob").on_loopback(),
    ];
    let server = HttpServer::start(&tenants, &["--experimentalTasks"]).await;
    let alice = http_client(&server, "token-alice").await;
    let declared = alice
        .peer_info()
        .and_then(|info| info.capabilities.extensions.clone())
        .is_some_and(|extensions| extensions.contains_key("io.modelcontextprotocol/tasks"));
    assert!(declared, "serve declares the Tasks extension");
    // The tenant's first call starts its browser context, and may take long enough to be a
    // task itself.
    let opened = alice
        .call_tool_once(call("navigate_page", json!({ "url": pages.url("/") })))
        .await
        .expect("navigate");
    if let CallToolResponse::Task(created) = &opened {
        let state = settled_task(&alice, &created.task.task_id, Duration::from_secs(30)).await;
        assert_eq!(state.task.status(), TaskStatus::Completed, "{state:?}");
    }

    let slow = alice
        .call_tool_once(call("evaluate_script", json!({ "function": SLOW })))
        .await
        .expect("slow call");
    let CallToolResponse::Task(created) = slow else {
        panic!("a task for a 3-s call: {slow:?}");
    };
    let done = settled_task(&alice, &created.task.task_id, Duration::from_secs(30)).await;
    let TaskPayload::Completed { result } = &done.task.payload else {
        panic!("completed: {done:?}");
    };
    assert!(format!("{result:?}").contains("late answer"), "{result:?}");

    let busy = alice
        .call_tool_once(call("evaluate_script", json!({ "function": BUSY })))
        .await
        .expect("busy call");
    let CallToolResponse::Task(busy) = busy else {
        panic!("a task for a 60-s call: {busy:?}");
    };
    let busy_id = busy.task.task_id.clone();
    // Another tenant's session knows nothing of it.
    let bob = http_client(&server, "token-bob").await;
    assert!(
        bob.get_task(GetTaskParams::new(busy_id.clone()))
            .await
            .is_err()
    );
    assert!(
        bob.cancel_task(CancelTaskParams::new(busy_id.clone()))
            .await
            .is_err()
    );
    let still = alice
        .get_task(GetTaskParams::new(busy_id.clone()))
        .await
        .expect("tasks/get");
    assert_eq!(still.task.status(), TaskStatus::Working, "{still:?}");

    let cancelled_at = Instant::now();
    alice
        .cancel_task(CancelTaskParams::new(busy_id.clone()))
        .await
        .expect("tasks/cancel");
    let state = settled_task(&alice, &busy_id, Duration::from_secs(30)).await;
    assert_eq!(state.task.status(), TaskStatus::Cancelled, "{state:?}");
    let next = alice
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
    let _ = bob.cancel().await;
    let _ = alice.cancel().await;
}
