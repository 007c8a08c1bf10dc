//! Both protocol revisions, spoken by rmcp's own client over stdio: `initialize` (2025-11-25)
//! and `server/discover` (2026-07-28, no handshake, roots by input request). The same server
//! answers both with the same capabilities, server info and instructions, and the client's
//! roots open the sandbox in both, with no call waiting on the roots timeout.
#![allow(deprecated)] // roots: deprecated by SEP-2577, still what clients send

use crate::fixtures;
use crate::support::{browser_args, kill_group, kill_tree, server_env, tokio_command};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ListRootsResult,
    ProtocolVersion, Root,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A client that offers one folder as its root.
struct RootsClient {
    root: PathBuf,
    /// What `initialize` asks for (rmcp's default is 2026-07-28, which has no `initialize`).
    protocol: ProtocolVersion,
}

impl ClientHandler for RootsClient {
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let uri = format!("file://{}", self.root.display());
        Ok(ListRootsResult::new(vec![Root::new(uri)]))
    }

    fn get_info(&self) -> ClientConfig {
        let capabilities = ClientCapabilities::builder().enable_roots().build();
        let mut config = ClientConfig::new(capabilities, Implementation::new("dialects-test", "1"));
        config.protocol_version = self.protocol.clone();
        config
    }
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn call(
    client: &RunningService<RoleClient, RootsClient>,
    tool: &'static str,
    arguments: serde_json::Value,
) -> (String, Duration) {
    let started = Instant::now();
    let mut params = CallToolRequestParams::new(tool);
    if let serde_json::Value::Object(arguments) = arguments {
        params = params.with_arguments(arguments);
    }
    let result = tokio::time::timeout(Duration::from_secs(60), client.call_tool(params))
        .await
        .unwrap_or_else(|_| panic!("{tool} timed out"))
        .unwrap_or_else(|error| panic!("{tool}: {error}"));
    assert_ne!(result.is_error, Some(true), "{tool}: {}", text(&result));
    (text(&result), started.elapsed())
}

/// Starts the server, connects in `lifecycle`, opens a page, saves a snapshot into the client's
/// root; returns what the client learnt of the server (protocol, capabilities, info, instructions).
async fn session(lifecycle: ClientLifecycleMode) -> serde_json::Value {
    let pages = fixtures::server();
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("root dir");
    let root_path = root.path().canonicalize().expect("canonical root");
    let mut child = tokio_command(env!("CARGO_BIN_EXE_devtools-mcp"))
        .args(browser_args())
        .envs(server_env())
        .env("DEVTOOLS_MCP_ROOTS_TIMEOUT_MS", "30000")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0)
        .spawn()
        .expect("spawn the server");
    let pid = child.id().expect("pid");
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        panic!("stdio not piped");
    };
    let handler = RootsClient {
        root: root_path.clone(),
        protocol: ProtocolVersion::V_2025_11_25,
    };
    let client = tokio::time::timeout(
        Duration::from_secs(60),
        handler.serve_with_lifecycle((stdout, stdin), lifecycle),
    )
    .await
    .expect("connected in time")
    .expect("connected");
    let learnt = serde_json::to_value(client.peer_info().as_deref()).expect("peer info");

    let (_, opened) = call(
        &client,
        "new_page",
        serde_json::json!({"url": pages.url("/")}),
    )
    .await;
    let saved = root_path.join("from-rmcp.txt");
    let (answer, took) = call(
        &client,
        "take_snapshot",
        serde_json::json!({"filePath": saved.display().to_string()}),
    )
    .await;
    assert_eq!(answer, format!("Saved snapshot to {}.", saved.display()));
    let written = std::fs::read_to_string(&saved).expect("snapshot saved into the client's root");
    assert!(written.contains("RootWebArea \"Fixture\""), "{written}");
    assert!(
        took < Duration::from_secs(3),
        "take_snapshot took {took:?}, new_page {opened:?}: a call waited on the roots timeout"
    );
    let _ = client.cancel().await;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    kill_tree(pid);
    kill_group(pid);
    learnt
}

#[tokio::test]
async fn rmcp_clients_of_both_revisions_are_served_alike_with_their_roots() {
    let legacy = session(ClientLifecycleMode::Initialize).await;
    let modern = session(ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    })
    .await;
    assert_eq!(legacy["protocolVersion"], "2025-11-25", "{legacy}");
    assert_eq!(modern["protocolVersion"], "2026-07-28", "{modern}");
    for field in ["capabilities", "serverInfo", "instructions"] {
        assert_eq!(legacy[field], modern[field], "{field}");
    }
    assert_eq!(
        modern["capabilities"],
        serde_json::json!({"logging": {}, "tools": {"listChanged": true}})
    );
    assert_eq!(modern["serverInfo"]["name"], "devtools_mcp");
    let instructions = modern["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains("pageId") && instructions.contains("--experimentalScopedSnapshots"),
        "{modern}"
    );
}
