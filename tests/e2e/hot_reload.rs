//! `--watch`: adding, changing and removing components in a plugin folder updates the tool list
//! without a restart, clients get `notifications/tools/list_changed`, and a broken new version
//! never replaces a working one.

use crate::support::{binary_dir, browser_args, kill_group, timeout};
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::sync::watch;

/// A client that counts `notifications/tools/list_changed`.
#[derive(Clone)]
struct Listener {
    changes: watch::Sender<u32>,
}

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.send_modify(|count| *count += 1);
    }
}

async fn tool_names(client: &RunningService<RoleClient, Listener>) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect()
}

async fn call_text(client: &RunningService<RoleClient, Listener>, name: &str) -> String {
    let arguments = json!({ "mode": "ok" }).as_object().cloned();
    let mut request = CallToolRequestParams::new(name.to_string());
    request.arguments = arguments;
    let result = client.call_tool(request).await.expect("tools/call");
    result
        .content
        .iter()
        .filter_map(|content| match content {
            ContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Waits for the notification count to pass `seen`.
async fn next_change(changes: &mut watch::Receiver<u32>, seen: u32) -> u32 {
    let waited = tokio::time::timeout(timeout(), changes.wait_for(|count| *count > seen)).await;
    match waited {
        Ok(Ok(count)) => *count,
        _ => panic!("no notifications/tools/list_changed within {:?}", timeout()),
    }
}

async fn assert_crashing_tool_works(client: &RunningService<RoleClient, Listener>) {
    assert!(
        tool_names(client)
            .await
            .contains(&"crashing_tool".to_string())
    );
    assert_eq!(
        call_text(client, "crashing_tool").await,
        "Before the crash\nNo crash"
    );
}

/// Copies atomically (write beside, then rename), as deploy tools do.
fn install(from: &Path, to: &Path) {
    let partial = to.with_extension("partial");
    std::fs::copy(from, &partial).expect("copy");
    std::fs::rename(&partial, to).expect("rename");
}

#[tokio::test]
async fn watched_folders_update_the_tool_list_and_notify_clients() {
    let plugins = tempfile::tempdir().expect("plugin dir");
    let fixtures = binary_dir().join("test-plugins");
    let mut args = browser_args();
    args.extend([
        "--watch".to_string(),
        "--plugin-dir".to_string(),
        plugins.path().to_string_lossy().into_owned(),
    ]);
    let mut child = crate::support::tokio_command(env!("CARGO_BIN_EXE_devtools-mcp"))
        .args(&args)
        .envs(crate::support::server_env())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .process_group(0)
        .spawn()
        .expect("spawn");
    let pid = child.id().unwrap_or_default();
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        panic!("stdio not piped")
    };
    let (changes, mut seen_changes) = watch::channel(0u32);
    let client = tokio::time::timeout(timeout(), Listener { changes }.serve((stdout, stdin)))
        .await
        .expect("initialize in time")
        .expect("initialize");
    let advertised = client
        .peer_info()
        .and_then(|info| info.capabilities.tools.clone())
        .and_then(|tools| tools.list_changed);
    assert_eq!(advertised, Some(true), "tools.listChanged is advertised");
    assert!(
        !tool_names(&client)
            .await
            .contains(&"crashing_tool".to_string())
    );

    // Added.
    let target = plugins.path().join("tool.wasm");
    install(&fixtures.join("crashing_tool.wasm"), &target);
    let mut seen = next_change(&mut seen_changes, 0).await;
    assert_crashing_tool_works(&client).await;

    // A broken new version: the working one stays.
    std::fs::write(&target, b"\0asm broken").expect("break");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_crashing_tool_works(&client).await;

    // Changed into another tool.
    install(&fixtures.join("network_probe.wasm"), &target);
    seen = next_change(&mut seen_changes, seen).await;
    let names = tool_names(&client).await;
    assert!(
        names.contains(&"network_probe".to_string())
            && !names.contains(&"crashing_tool".to_string()),
        "{names:?}"
    );

    // Removed.
    std::fs::remove_file(&target).expect("remove");
    next_change(&mut seen_changes, seen).await;
    let names = tool_names(&client).await;
    assert!(!names.contains(&"network_probe".to_string()), "{names:?}");
    assert!(
        names.contains(&"take_snapshot".to_string()),
        "built-ins stay"
    );

    client.cancel().await.ok();
    let _exit = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    kill_group(pid);
}
