//! A person in the loop (`request_human`, `--experimentalHumanInTheLoop`), in real browsers:
//! the agent's server opens a live view of its page and hands the URL to the client by URL-mode
//! elicitation; a second real Chromium (another server, driven through its own tools: real CDP
//! mouse and key events) opens the view, clicks the login form's field in the screencast
//! picture, types, submits and presses Done. The call returns, the agent sees the logged-in
//! page, and the used URL, a wrong token and a wrong Host are refused.

use crate::fixtures::uid_of;
use crate::support::{
    FixtureServer, McpServer, Route, browser_args, kill_group, kill_tree, timeout,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, ErrorData, GetTaskParams,
    NumberOrString, ProgressNotificationParam, ProgressToken, RequestMetaObject, TaskPayload,
    TaskStatus, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;
use tokio::sync::mpsc;

/// The login form: the field's box is at a known place in the page's viewport.
pub(crate) const LOGIN: &str = r#"<!doctype html><html><head><title>Sign in</title>
<style>body { margin: 0 } input, button { position: absolute; font-size: 20px }</style></head>
<body><form action="/welcome" method="get">
<input id="user" name="user" aria-label="User name" style="left: 20px; top: 20px; width: 300px; height: 40px">
<button style="left: 20px; top: 100px; width: 120px; height: 40px">Sign in</button>
</form></body></html>"#;
/// The field's center in CSS pixels.
pub(crate) const FIELD: (f64, f64) = (170.0, 40.0);

pub(crate) const WELCOME: &str = r#"<!doctype html><html><head><title>Welcome</title></head><body>
<h1 id="who"></h1>
<script>document.getElementById('who').textContent = 'Signed in as ' + new URLSearchParams(location.search).get('user');</script>
</body></html>"#;

/// A person's MCP client: one that takes URL-mode elicitations passes each URL on and
/// accepts; one that does not finds the URL in the call's progress messages.
#[derive(Clone)]
pub(crate) struct Person {
    pub(crate) urls: mpsc::UnboundedSender<(String, String)>,
    pub(crate) how: How,
}

/// How the client learns the live view's URL.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum How {
    /// URL-mode elicitation.
    Elicitation,
    /// The call's progress messages (no elicitation declared).
    Progress,
    /// URL-mode elicitation while the call runs as a task (`--experimentalTasks`).
    TaskElicitation,
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        if self.how == How::TaskElicitation {
            config.capabilities = ClientCapabilities::builder().enable_tasks().build();
        }
        if self.how != How::Progress {
            config.capabilities.elicitation =
                Some(ElicitationCapability::new().with_url(UrlElicitationCapability::new()));
        }
        config
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let message = params.message.unwrap_or_default();
        if let Some(url) = message
            .split("open ")
            .nth(1)
            .and_then(|rest| rest.split(" and press Done").next())
        {
            let _sent = self.urls.send((url.to_string(), message.clone()));
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::UrlElicitationParams { url, message, .. } = request {
            let _sent = self.urls.send((url, message));
        }
        Ok(ElicitResult::new(ElicitationAction::Accept))
    }
}

/// The agent's server, spoken to by a [`Person`] client.
struct Agent {
    client: RunningService<RoleClient, Person>,
    pid: u32,
    _child: tokio::process::Child,
}

impl Agent {
    async fn start(extra: &[&str], how: How) -> (Agent, mpsc::UnboundedReceiver<(String, String)>) {
        let mut args = browser_args();
        args.extend(extra.iter().map(|arg| (*arg).to_string()));
        let mut child = crate::support::tokio_command(env!("CARGO_BIN_EXE_devtools-mcp"))
            .args(&args)
            .envs(crate::support::server_env())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .expect("spawn the server");
        let pid = child.id().expect("pid");
        let (stdout, stdin) = (
            child.stdout.take().expect("out"),
            child.stdin.take().expect("in"),
        );
        let (urls, received) = mpsc::unbounded_channel();
        let client = tokio::time::timeout(timeout(), Person { urls, how }.serve((stdout, stdin)))
            .await
            .expect("initialize in time")
            .expect("initialize");
        (
            Agent {
                client,
                pid,
                _child: child,
            },
            received,
        )
    }

    async fn call(&self, tool: &str, arguments: Value) -> (bool, String) {
        call(self.client.peer().clone(), tool, arguments, false).await
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        kill_tree(self.pid);
        kill_group(self.pid);
    }
}

async fn call(
    peer: rmcp::service::Peer<RoleClient>,
    tool: &str,
    arguments: Value,
    progress: bool,
) -> (bool, String) {
    let (error, text, _task) = call_full(peer, tool, arguments, progress).await;
    (error, text)
}

/// Calls `tool` and waits for its answer, directly or (a client declaring the Tasks
/// extension, a call past a second) as a task; says which.
pub(crate) async fn call_full(
    peer: rmcp::service::Peer<RoleClient>,
    tool: &str,
    arguments: Value,
    progress: bool,
) -> (bool, String, bool) {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(map) = arguments {
        params = params.with_arguments(map);
    }
    if progress {
        params.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
            NumberOrString::Number(7),
        )));
    }
    let response = tokio::time::timeout(Duration::from_secs(120), peer.call_tool_once(params))
        .await
        .unwrap_or_else(|_| panic!("{tool} timed out"))
        .unwrap_or_else(|error| panic!("{tool}: {error}"));
    let created = match response {
        CallToolResponse::Complete(result) => {
            let text = result
                .content
                .iter()
                .filter_map(|item| item.as_text().map(|text| text.text.clone()))
                .collect::<Vec<_>>()
                .join("\n");
            return (result.is_error.unwrap_or(false), text, false);
        }
        CallToolResponse::Task(created) => created,
        other => panic!("{tool}: {other:?}"),
    };
    let id = created.task.task_id.clone();
    loop {
        let state = peer
            .get_task(GetTaskParams::new(id.clone()))
            .await
            .expect("tasks/get");
        if state.task.status() != TaskStatus::Working {
            let TaskPayload::Completed { result } = &state.task.payload else {
                panic!("completed: {state:?}");
            };
            let text = result["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|item| item["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n");
            return (result["isError"].as_bool().unwrap_or(false), text, true);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The JSON a script returned, from `evaluate_script`'s answer.
fn returned(text: &str) -> Value {
    let json = text
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .unwrap_or_else(|| panic!("no JSON in {text}"));
    serde_json::from_str(json).unwrap_or_else(|error| panic!("{error}: {json}"))
}

async fn status_of(url: &str, host: Option<&str>) -> (u16, String) {
    let client = reqwest::Client::new();
    let mut request = client.get(url);
    if let Some(host) = host {
        request = request.header("host", host);
    }
    let response = request
        .send()
        .await
        .expect("the live view's listener answers");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

#[tokio::test]
async fn without_the_flag_request_human_is_absent() {
    let server = McpServer::start(&[]).await;
    let tools = server.list_tools().await;
    assert!(!tools.iter().any(|tool| tool.name == "request_human"));
    server.shutdown().await;
}

#[tokio::test]
async fn a_person_signs_in_through_the_live_view_and_the_agent_sees_it() {
    signs_in(How::Elicitation).await;
}

/// As a task (`--experimentalTasks`), the call still hands the client its live view.
#[tokio::test]
async fn a_task_waiting_for_a_person_elicits_too() {
    signs_in(How::TaskElicitation).await;
}

/// A client without URL-mode elicitation that asked for progress reads the URL there.
#[tokio::test]
async fn without_elicitation_the_url_comes_in_the_calls_progress() {
    signs_in(How::Progress).await;
}

async fn signs_in(how: How) {
    let elicits = how != How::Progress;
    let pages = FixtureServer::start(vec![
        Route::html("/", LOGIN),
        Route::html("/welcome", WELCOME),
    ]);
    let (agent, mut urls) = Agent::start(
        &["--experimentalHumanInTheLoop", "--experimentalTasks"],
        how,
    )
    .await;
    let (error, text) = agent
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(!error, "{text}");

    // The agent asks; the call waits for the person.
    let peer = agent.client.peer().clone();
    let arguments = json!({ "reason": "Sign in as alice", "timeoutSeconds": 100 });
    let asked = tokio::spawn(call_full(peer, "request_human", arguments, !elicits));
    let (url, message) = tokio::time::timeout(timeout(), urls.recv())
        .await
        .expect("the URL in time")
        .expect("the URL");
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    if elicits {
        assert!(message.contains("Sign in as alice"), "{message}");
    } else {
        assert!(message.contains("is waiting for a person"), "{message}");
    }

    // The person's browser: a second real Chromium, driven through another server's tools.
    let person = McpServer::start(&["--experimentalVision"]).await;
    let opened = person.call("navigate_page", json!({ "url": url })).await;
    assert!(!opened.is_error, "{}", opened.text);
    let live = person.call("wait_for", json!({ "text": ["Live."] })).await;
    assert!(!live.is_error, "{}", live.text);
    assert!(!asked.is_finished(), "request_human returned before Done");
    signs_in_through(&person).await;

    // The call returns with what changed; the agent sees the logged-in page.
    let (error, answer, task) = tokio::time::timeout(timeout(), asked)
        .await
        .expect("request_human returned after Done")
        .expect("the call's task");
    assert!(!error, "{answer}");
    assert_eq!(task, how == How::TaskElicitation, "{answer}");
    assert!(answer.contains("The person pressed Done after"), "{answer}");
    assert!(
        answer.contains(&format!("is now at {}", pages.url("/welcome?user=alice"))),
        "{answer}"
    );
    let (_, snapshot) = agent.call("take_snapshot", json!({})).await;
    assert!(snapshot.contains("Signed in as alice"), "{snapshot}");

    // The used URL is refused, as is a wrong token and another Host.
    let (status, body) = status_of(&url, None).await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("No live view here"), "{body}");
    let token = url
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .expect("token")
        .to_string();
    let wrong = url.replace(&token, &"0".repeat(64));
    assert_eq!(status_of(&wrong, None).await.0, 404);
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .expect("port");
    assert_eq!(
        status_of(&url, Some(&format!("localhost:{port}"))).await.0,
        403
    );
    person.shutdown().await;
}

/// The person, at a live view showing the login form: clicks the field in the screencast
/// picture, types the name, submits and presses Done.
pub(crate) async fn signs_in_through(person: &McpServer) {
    let at = person
        .call(
            "evaluate_script",
            json!({ "function": format!(
                "() => {{ const img = document.getElementById('screen'); const box = img.getBoundingClientRect(); const [w, h] = img.dataset.viewport.split('x').map(Number); return [box.left + {} / w * box.width, box.top + {} / h * box.height]; }}",
                FIELD.0, FIELD.1
            ) }),
        )
        .await;
    assert!(!at.is_error, "{}", at.text);
    let at = returned(&at.text);
    let clicked = person
        .call("click_at", json!({ "x": at[0], "y": at[1] }))
        .await;
    assert!(!clicked.is_error, "{}", clicked.text);
    let typed = person
        .call(
            "type_text",
            json!({ "text": "alice", "submitKey": "Enter" }),
        )
        .await;
    assert!(!typed.is_error, "{}", typed.text);
    let snapshot = person.call("take_snapshot", json!({})).await.text;
    let done = uid_of(&snapshot, "button \"Done\"");
    let pressed = person.call("click", json!({ "uid": done })).await;
    assert!(!pressed.is_error, "{}", pressed.text);
}
