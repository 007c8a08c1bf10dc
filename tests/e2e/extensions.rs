//! Extensions (`--categoryExtensions`): install the fixture extension from a workspace folder,
//! list, reload, trigger its action on a fixture page, uninstall; and the path check.

use crate::styles::selected_page_id;
use crate::support::{FixtureServer, McpServer, Route};
use serde_json::json;
use std::path::Path;

/// A copy of `tests/fixtures/extensions/catalog` in a fresh workspace folder.
fn workspace_with_extension() -> (tempfile::TempDir, String) {
    let workspace = tempfile::tempdir().expect("temp dir");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/extensions/catalog");
    let target = workspace.path().join("catalog");
    std::fs::create_dir(&target).expect("extension folder");
    for file in ["manifest.json", "worker.js"] {
        std::fs::copy(source.join(file), target.join(file)).expect("copy the fixture extension");
    }
    let path = target.to_string_lossy().into_owned();
    (workspace, path)
}

fn installed_id(text: &str) -> String {
    text.lines()
        .find_map(|line| line.strip_prefix("Extension installed. Id: "))
        .unwrap_or_else(|| panic!("no extension id in {text}"))
        .to_string()
}

/// Triggers the extension's action until the page shows it ran. Chromium starts a freshly
/// installed extension's worker on its own time, and an action triggered before `worker.js`
/// added its listener is dropped by the browser (as under 1.11.0), so a first trigger may be
/// lost; every trigger must still be answered as the reference answers it.
async fn trigger_until_it_runs(server: &McpServer, id: &str, page: u64) {
    for attempt in 1..=4 {
        let triggered = server
            .call("trigger_extension_action", json!({ "id": id }))
            .await;
        assert!(!triggered.is_error, "{}", triggered.text);
        assert!(
            triggered
                .text
                .contains(&format!("Extension action triggered for ID {id}")),
            "{}",
            triggered.text
        );
        let marked = server
            .call(
                "wait_for",
                json!({ "pageId": page, "text": ["Clicked by extension"], "timeout": 4000 }),
            )
            .await;
        if !marked.is_error {
            return;
        }
        assert!(attempt < 4, "the action never ran: {}", marked.text);
    }
}

#[tokio::test]
async fn extensions_install_list_trigger_reload_and_uninstall() {
    let pages = FixtureServer::start(vec![Route::html(
        "/page.html",
        "<title>Extension target</title><p>Waiting</p>",
    )]);
    let (workspace, path) = workspace_with_extension();
    let workspace_arg = workspace.path().to_string_lossy().into_owned();
    let server = McpServer::start(&[
        "--categoryExtensions",
        "--experimentalPageIdRouting",
        "--workspace",
        &workspace_arg,
    ])
    .await;

    let empty = server.call("list_extensions", json!({})).await;
    assert!(!empty.is_error, "{}", empty.text);
    assert!(
        empty
            .text
            .contains("## Extensions\nNo extensions installed."),
        "{}",
        empty.text
    );

    let installed = server
        .call("install_extension", json!({ "path": path }))
        .await;
    assert!(!installed.is_error, "{}", installed.text);
    let id = installed_id(&installed.text);
    assert_eq!(id.len(), 32, "{id}");

    let listed = server.call("list_extensions", json!({})).await;
    assert!(
        listed.text.contains(&format!(
            "## Extensions\nid={id} \"Catalog fixture\" v1.2.3 Enabled"
        )),
        "{}",
        listed.text
    );

    let page = selected_page_id(
        &server
            .call("new_page", json!({ "url": pages.url("/page.html") }))
            .await
            .text,
    );
    trigger_until_it_runs(&server, &id, page).await;

    // Reload picks up a changed manifest.
    let manifest = Path::new(&path).join("manifest.json");
    let changed = std::fs::read_to_string(&manifest)
        .expect("manifest")
        .replace("1.2.3", "1.2.4");
    std::fs::write(&manifest, changed).expect("write manifest");
    let reloaded = server.call("reload_extension", json!({ "id": id })).await;
    assert!(!reloaded.is_error, "{}", reloaded.text);
    assert!(
        reloaded.text.contains("Extension reloaded."),
        "{}",
        reloaded.text
    );
    let listed = server.call("list_extensions", json!({})).await;
    assert!(
        listed
            .text
            .contains(&format!("id={id} \"Catalog fixture\" v1.2.4 Enabled")),
        "{}",
        listed.text
    );

    let unknown = server
        .call("reload_extension", json!({ "id": "nope" }))
        .await;
    assert!(unknown.is_error);
    assert!(
        unknown.text.contains("Extension with ID nope not found."),
        "{}",
        unknown.text
    );

    let uninstalled = server
        .call("uninstall_extension", json!({ "id": id }))
        .await;
    assert!(!uninstalled.is_error, "{}", uninstalled.text);
    assert!(
        uninstalled
            .text
            .contains(&format!("Extension uninstalled. Id: {id}")),
        "{}",
        uninstalled.text
    );
    let after = server.call("list_extensions", json!({})).await;
    assert!(
        after.text.contains("No extensions installed."),
        "{}",
        after.text
    );
    server.shutdown().await;
}

#[tokio::test]
async fn install_extension_refuses_folders_outside_the_sandbox() {
    let (_workspace, path) = workspace_with_extension();
    // No --workspace: the extension's folder is outside every allowed root.
    let server = McpServer::start(&["--categoryExtensions"]).await;
    let refused = server
        .call("install_extension", json!({ "path": path }))
        .await;
    assert!(refused.is_error, "{}", refused.text);
    let listed = server.call("list_extensions", json!({})).await;
    assert!(
        listed.text.contains("No extensions installed."),
        "{}",
        listed.text
    );
    server.shutdown().await;
}

/// With `--categoryExtensions`, `list_pages` lists the extension's service worker
/// (`## Extension Service Workers`, `sw-N: url`) and `evaluate_script` runs in it by that id;
/// the same steps against chrome-devtools-mcp 1.11.0 (when Node is here) answer the same texts.
#[tokio::test]
async fn extension_service_workers_are_listed_and_evaluated_as_1_11_0_does() {
    use crate::support::side_by_side::SideBySide;

    let pages = FixtureServer::start(vec![Route::html(
        "/page.html",
        "<title>Extension target</title><p>Waiting</p>",
    )]);
    let (workspace, path) = workspace_with_extension();
    let root = workspace.path().to_string_lossy().into_owned();
    let servers = SideBySide::start(&["--categoryExtensions", "--filesystemRoot", &root]).await;
    let version = "() => chrome.runtime.getManifest().version";
    let steps = vec![
        ("install", "install_extension", json!({ "path": path })),
        (
            "new_page",
            "new_page",
            json!({ "url": pages.url("/page.html") }),
        ),
        ("list_pages", "list_pages", json!({})),
        (
            "evaluate in the worker",
            "evaluate_script",
            json!({ "serviceWorkerId": "sw-1", "function": version }),
        ),
        (
            "a classic script in the worker",
            "evaluate_script",
            json!({ "serviceWorkerId": "sw-1", "function": "typeof chrome.action.onClicked", "format": "script" }),
        ),
        (
            "a throwing function in the worker",
            "evaluate_script",
            json!({ "serviceWorkerId": "sw-1", "function": "() => { throw new Error('worker says no'); }" }),
        ),
        (
            "an unknown worker",
            "evaluate_script",
            json!({ "serviceWorkerId": "sw-99", "function": version }),
        ),
        (
            "element arguments in a worker",
            "evaluate_script",
            json!({ "serviceWorkerId": "sw-1", "function": version, "args": ["1_1"] }),
        ),
        (
            "a worker and a page",
            "evaluate_script",
            json!({ "serviceWorkerId": "sw-1", "function": version, "pageId": 1 }),
        ),
        (
            "the worker's console",
            "list_console_messages",
            json!({ "serviceWorkerId": "sw-1", "pageId": 2 }),
        ),
    ];
    let answers = servers.run(steps, &pages).await;
    let said = |label: &str| answers.said(label);
    let id = installed_id(&said("install"));
    assert!(
        said("list_pages").contains(&format!(
            "## Extension Service Workers\nsw-1: chrome-extension://{id}/worker.js"
        )),
        "{}",
        said("list_pages")
    );
    assert!(
        said("evaluate in the worker")
            .contains("Script ran on page and returned:\n```json\n\"1.2.3\"\n```"),
        "{}",
        said("evaluate in the worker")
    );
    assert!(
        said("a classic script in the worker").contains("\"object\""),
        "{}",
        said("a classic script in the worker")
    );
    assert!(
        said("a throwing function in the worker").contains("worker says no"),
        "{}",
        said("a throwing function in the worker")
    );
    assert!(
        said("an unknown worker").contains("Service worker not found."),
        "{}",
        said("an unknown worker")
    );
    answers.assert_same_as_reference("extension service worker steps");
}
