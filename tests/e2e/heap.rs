//! The heap analysis tools (`--memoryDebugging`) on snapshots taken from fixture pages with
//! `take_heapsnapshot`: a detached-DOM leak, a console-retained object, a closure holding a
//! dead variable. Every answer is compared, text for text, with chrome-devtools-mcp 1.11.0's
//! on the same files when the reference is installed (`npm install --prefix bench`, which
//! `scripts/test` does when npm is there); without node or the package that comparison is
//! skipped loudly, and the checks of our own answers still run.

use crate::support::{FixtureServer, McpServer, Route, chromium_path};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const LEAK: &str = r#"<!doctype html>
<html><head><title>Leak</title></head>
<body><div id="app"><p>hello</p></div>
<script>
class LeakyThing { constructor(i) { this.index = i; this.payload = 'payload-' + i; } }
window.leaks = [];
for (let i = 0; i < 50; i++) window.leaks.push(new LeakyThing(i));
const detached = document.createElement('section');
detached.id = 'detached-root';
for (let i = 0; i < 20; i++) {
  const li = document.createElement('li');
  li.textContent = 'item ' + i;
  detached.appendChild(li);
}
document.body.appendChild(detached);
document.body.removeChild(detached);
window.keepDetached = detached;
class ConsoleKept { constructor() { this.big = new Array(1000).fill('x'); } }
console.log(new ConsoleKept());
function makeLeak() {
  const big = new Array(5000).fill(2);
  const small = { a: 1 };
  const gone = () => big.length;
  gone();
  return () => small.a;
}
window.kept = makeLeak();
window.dup1 = ['dup', 'licate'].join('');
window.dup2 = ['dup', 'licate'].join('');
document.getElementById('app').addEventListener('click', () => window.leaks.length);
</script></body></html>"#;

const GROW: &str = "() => { for (let i = 50; i < 150; i++) window.leaks.push(new LeakyThing(i)); \
    const d = document.createElement('div'); d.innerHTML = '<span>a</span><span>b</span>'; \
    window.moreDetached = d; return 1; }";

/// Adds `pageId` (the selected page) when page-id routing makes it required, so the test
/// passes with routing on or off.
async fn page_args(server: &McpServer, tool: &str, mut args: Value) -> Value {
    let tools = server.list_tools().await;
    let wants_page_id = tools
        .iter()
        .find(|t| t.name == tool)
        .and_then(|t| {
            t.input_schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.contains_key("pageId"))
        })
        .unwrap_or(false);
    if wants_page_id {
        let pages = server.call("list_pages", json!({})).await.text;
        let selected = pages
            .lines()
            .find(|line| line.ends_with("[selected]"))
            .and_then(|line| line.split(':').next())
            .and_then(|id| id.trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no selected page in:\n{pages}"));
        args["pageId"] = json!(selected);
    }
    args
}

/// Our server, with two snapshots of the leak page (before and after it grows).
async fn snapshots(pages: &FixtureServer, workspace: &Path) -> (McpServer, PathBuf, PathBuf) {
    let workspace_arg = workspace.to_string_lossy().into_owned();
    let server = McpServer::start(&["--memoryDebugging", "--workspace", &workspace_arg]).await;
    let opened = server
        .call("new_page", json!({ "url": pages.url("/leak") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let take = |name: &str| json!({ "filePath": name });
    let first = server
        .call(
            "take_heapsnapshot",
            page_args(&server, "take_heapsnapshot", take("leak1.heapsnapshot")).await,
        )
        .await;
    assert!(
        first.text.starts_with("Heap snapshot saved to "),
        "{}",
        first.text
    );
    let grown = server
        .call(
            "evaluate_script",
            page_args(&server, "evaluate_script", json!({ "function": GROW })).await,
        )
        .await;
    assert!(!grown.is_error, "{}", grown.text);
    let second = server
        .call(
            "take_heapsnapshot",
            page_args(&server, "take_heapsnapshot", take("leak2.heapsnapshot")).await,
        )
        .await;
    assert!(!second.is_error, "{}", second.text);
    let root = workspace.canonicalize().expect("canonical workspace");
    (
        server,
        root.join("leak1.heapsnapshot"),
        root.join("leak2.heapsnapshot"),
    )
}

/// The ids the per-object calls use, read from our own answers.
fn ids_in(text: &str, name_part: &str) -> Vec<u64> {
    text.lines()
        .filter(|line| line.contains(name_part))
        .filter_map(|line| {
            line.split(',')
                .next()?
                .trim()
                .trim_start_matches('@')
                .parse()
                .ok()
        })
        .collect()
}

fn class_id(details: &str, class_name: &str) -> u64 {
    details
        .lines()
        .find(|line| line.split(',').nth(1) == Some(class_name))
        .and_then(|line| line.split(',').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no class {class_name} in:\n{details}"))
}

/// The calls compared with the reference, built from what our first answers reveal.
async fn calls(server: &McpServer, first: &Path, second: &Path) -> Vec<(String, Value)> {
    let file = first.to_string_lossy().into_owned();
    let later = second.to_string_lossy().into_owned();
    let details = server
        .call("get_heapsnapshot_details", json!({ "filePath": file }))
        .await
        .text;
    let detached = server
        .call(
            "query_heapsnapshot_objects",
            json!({ "filePath": file, "isDetached": true }),
        )
        .await
        .text;
    let leaky = server
        .call(
            "query_heapsnapshot_objects",
            json!({ "filePath": file, "className": "LeakyThing", "pageSize": 3 }),
        )
        .await
        .text;
    let section = ids_in(&detached, "Detached <section")[0];
    let item = ids_in(&detached, "Detached <li>")[0];
    let thing = ids_in(&leaky, "LeakyThing")[0];
    let mut calls: Vec<(String, Value)> = vec![
        (
            "get_heapsnapshot_summary".into(),
            json!({ "filePath": file }),
        ),
        (
            "get_heapsnapshot_details".into(),
            json!({ "filePath": file }),
        ),
        (
            "get_heapsnapshot_details".into(),
            json!({ "filePath": file, "pageSize": 7, "pageIdx": 2, "maxNameLength": 12 }),
        ),
        (
            "get_heapsnapshot_duplicate_strings".into(),
            json!({ "filePath": file, "pageSize": 30 }),
        ),
        (
            "analyze_heapsnapshot_contexts".into(),
            json!({ "filePath": file }),
        ),
        (
            "analyze_heapsnapshot_contexts".into(),
            json!({ "filePath": file, "retainedSize": "1KB-" }),
        ),
        (
            "query_heapsnapshot_objects".into(),
            json!({ "filePath": file, "isDetached": true }),
        ),
        (
            "query_heapsnapshot_objects".into(),
            json!({ "filePath": file, "nodeType": "closure", "sortBy": "id", "pageSize": 10 }),
        ),
        (
            "query_heapsnapshot_objects".into(),
            json!({ "filePath": file, "selfSize": "1KB", "retainedSize": "-1MB", "pageSize": 10 }),
        ),
        (
            "get_heapsnapshot_class_nodes".into(),
            json!({ "filePath": file, "id": class_id(&details, "LeakyThing"), "pageSize": 5 }),
        ),
        (
            "get_heapsnapshot_class_nodes".into(),
            json!({ "filePath": file, "id": class_id(&details, "Detached <li>"), "filterName": "objectsRetainedByDetachedDomNodes" }),
        ),
    ];
    for filter in [
        "objectsRetainedByDetachedDomNodes",
        "objectsRetainedByConsole",
        "objectsRetainedByEventHandlers",
        "objectsRetainedByContexts",
        "sharedNativeContext",
        "noNativeContext",
    ] {
        calls.push((
            "get_heapsnapshot_details".into(),
            json!({ "filePath": file, "filterName": filter, "pageSize": 15 }),
        ));
    }
    for id in [section, item, thing] {
        calls.push((
            "get_heapsnapshot_object_details".into(),
            json!({ "filePath": file, "nodeId": id }),
        ));
        calls.push((
            "get_heapsnapshot_retainers".into(),
            json!({ "filePath": file, "nodeId": id }),
        ));
        calls.push((
            "get_heapsnapshot_retaining_paths".into(),
            json!({ "filePath": file, "nodeId": id }),
        ));
        calls.push((
            "get_heapsnapshot_dominators".into(),
            json!({ "filePath": file, "nodeId": id }),
        ));
        calls.push((
            "get_heapsnapshot_edges".into(),
            json!({ "filePath": file, "nodeId": id }),
        ));
        calls.push((
            "get_heapsnapshot_edges".into(),
            json!({ "filePath": file, "nodeId": id, "sortBy": "name", "excludePrimitives": false }),
        ));
    }
    calls.push((
        "get_heapsnapshot_retaining_paths".into(),
        json!({ "filePath": file, "nodeId": item, "maxDepth": 4, "maxSiblings": 1 }),
    ));
    calls.push((
        "get_heapsnapshot_object_details".into(),
        json!({ "filePath": file, "nodeId": 123_456_789 }),
    ));
    calls.push((
        "compare_heapsnapshots".into(),
        json!({ "baseFilePath": file, "currentFilePath": later }),
    ));
    calls.push((
        "compare_heapsnapshots".into(),
        json!({ "baseFilePath": file, "currentFilePath": later, "classIndex": 0 }),
    ));
    calls.push(("close_heapsnapshot".into(), json!({ "filePath": later })));
    calls.push(("close_heapsnapshot".into(), json!({ "filePath": later })));
    calls
}

/// 1.11.0's package folder: `$DEVTOOLS_MCP_REFERENCE`, else the one `scripts/test` installs in
/// `tests/reference` (see `support::reference`).
fn reference_package() -> Option<PathBuf> {
    let folder = match std::env::var_os("DEVTOOLS_MCP_REFERENCE") {
        Some(folder) => PathBuf::from(folder),
        None => crate::support::reference::reference_dir()
            .join("node_modules")
            .join("chrome-devtools-mcp"),
    };
    folder
        .join("build/src/bin/chrome-devtools-mcp.js")
        .is_file()
        .then_some(folder)
}

/// Starts 1.11.0. Its heap worker needs `Promise.withResolvers` (Node 22); on older Node a
/// preload adds it.
async fn reference(package: &Path, scratch: &Path) -> Result<McpServer, String> {
    let preload = scratch.join("with-resolvers.mjs");
    std::fs::write(
        &preload,
        "if (typeof Promise.withResolvers !== 'function') { Promise.withResolvers = function () { \
         let resolve, reject; const promise = new this((a, b) => { resolve = a; reject = b; }); \
         return { promise, resolve, reject }; }; }\n",
    )
    .map_err(|e| e.to_string())?;
    let args = vec![
        package
            .join("build/src/bin/chrome-devtools-mcp.js")
            .to_string_lossy()
            .into_owned(),
        "--memoryDebugging".into(),
        "--headless".into(),
        "--isolated".into(),
        "--executablePath".into(),
        chromium_path(),
        "--chromeArg=--no-sandbox".into(),
        "--no-usage-statistics".into(),
        "--no-performance-crux".into(),
    ];
    let env = vec![
        (
            "NODE_OPTIONS".to_string(),
            format!("--import={}", preload.display()),
        ),
        (
            "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS".to_string(),
            "1".to_string(),
        ),
    ];
    McpServer::start_program(Path::new("node"), args, env).await
}

/// 1.11.0 prefixes a thrown error with `Error: `; compare the message itself.
fn normalized(text: &str, is_error: bool) -> String {
    let text = text.trim_end();
    if is_error {
        text.trim_start_matches("Error: ").to_string()
    } else {
        text.to_string()
    }
}

#[tokio::test]
async fn heap_tools_answer_like_the_reference_on_the_same_snapshots() {
    let pages = FixtureServer::start(vec![Route::html("/leak", LEAK)]);
    // Inside the servers' temp dir: 1.11.0 accepts paths there (its roots always include the
    // temp dir) without a client that negotiates roots.
    let workspace = tempfile::tempdir_in(crate::support::server_temp_dir()).expect("workspace");
    let (server, first, second): (McpServer, PathBuf, PathBuf) =
        snapshots(&pages, workspace.path()).await;
    let calls = calls(&server, &first, &second).await;
    let mut ours = Vec::new();
    for (tool, args) in &calls {
        let output = server.call(tool, args.clone()).await;
        ours.push(normalized(&output.text, output.is_error));
    }
    check_our_answers(&calls, &ours, &first);
    server.shutdown().await;

    let Some(package) = reference_package() else {
        eprintln!(
            "SKIPPED the comparison with chrome-devtools-mcp 1.11.0: it is not installed (scripts/test installs it in tests/reference; or set DEVTOOLS_MCP_REFERENCE)"
        );
        return;
    };
    if crate::support::command("node")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!(
            "SKIPPED the comparison with chrome-devtools-mcp 1.11.0: `node` is not installed"
        );
        return;
    }
    let reference = match reference(&package, workspace.path()).await {
        Ok(server) => server,
        Err(error) => panic!("chrome-devtools-mcp 1.11.0 did not start: {error}"),
    };
    let mut differences = Vec::new();
    for ((tool, args), ours) in calls.iter().zip(&ours) {
        let theirs = reference.call(tool, args.clone()).await;
        let theirs = normalized(&theirs.text, theirs.is_error);
        if &theirs != ours {
            differences.push(format!(
                "{tool} {args}\n--- 1.11.0:\n{theirs}\n--- ours:\n{ours}\n"
            ));
        }
    }
    drop(reference);
    assert!(
        differences.is_empty(),
        "{} of {} answers differ from 1.11.0's:\n{}",
        differences.len(),
        calls.len(),
        differences.join("\n")
    );
}

/// What must hold whether or not the reference is there to compare with.
fn check_our_answers(calls: &[(String, Value)], ours: &[String], first: &Path) {
    let answer = |tool: &str, wanted: &dyn Fn(&Value) -> bool| -> &str {
        calls
            .iter()
            .zip(ours)
            .find(|((name, args), _)| name == tool && wanted(args))
            .map(|(_, text)| text.as_str())
            .unwrap_or_else(|| panic!("no {tool} call"))
    };
    let summary = answer("get_heapsnapshot_summary", &|_| true);
    assert!(
        summary.starts_with("## Heap Snapshot Data\nStatistics: {\n  \"total\": "),
        "{summary}"
    );
    assert!(
        summary.contains(
            "### Native Contexts\nnodeId,nodeName,selfSize,retainedSize,attributedSize\n"
        ),
        "{summary}"
    );
    let by_filter = |filter: &str| {
        answer("get_heapsnapshot_details", &|args| {
            args["filterName"] == filter
        })
        .to_string()
    };
    let detached = by_filter("objectsRetainedByDetachedDomNodes");
    assert!(detached.contains(",Detached <section>,1,"), "{detached}");
    assert!(detached.contains(",Detached <li>,20,"), "{detached}");
    let console = by_filter("objectsRetainedByConsole");
    assert!(console.contains(",ConsoleKept,1,"), "{console}");
    let contexts = answer("analyze_heapsnapshot_contexts", &|args| {
        args.get("retainedSize").is_none()
    });
    assert!(
        contexts.contains("- `big` ("),
        "the dead `big` variable is found:\n{contexts}"
    );
    let objects = answer("query_heapsnapshot_objects", &|args| {
        args["isDetached"] == true
    });
    assert!(
        objects.contains("Detached <section id=\"detached-root\">,native,"),
        "{objects}"
    );
    let info = answer("get_heapsnapshot_object_details", &|args| {
        args["nodeId"] != 123_456_789
    });
    assert!(info.contains("\ndetachedness: detached\n"), "{info}");
    let missing = answer("get_heapsnapshot_object_details", &|args| {
        args["nodeId"] == 123_456_789
    });
    assert_eq!(missing, "Node with ID 123456789 not found");
    let paths = answer("get_heapsnapshot_retaining_paths", &|args| {
        args.get("maxDepth").is_none()
    });
    assert!(
        paths.contains("<- @") && paths.contains("keepDetached"),
        "{paths}"
    );
    let diff = answer("compare_heapsnapshots", &|args| {
        args.get("classIndex").is_none()
    });
    assert!(
        diff.contains("### Heap Snapshot Diff\nTotal: # new: "),
        "{diff}"
    );
    let leaky = diff
        .lines()
        .find(|line| line.split(',').nth(1) == Some("LeakyThing"));
    assert_eq!(
        leaky.and_then(|line| line.split(',').nth(4)),
        Some("100"),
        "a delta of 100 LeakyThings:\n{diff}"
    );
    let closes: Vec<&String> = calls
        .iter()
        .zip(ours)
        .filter(|((tool, _), _)| tool == "close_heapsnapshot")
        .map(|(_, text)| text)
        .collect();
    let second = first.with_file_name("leak2.heapsnapshot");
    assert_eq!(
        closes[0],
        &format!("Closed heap snapshot: {}", second.display())
    );
    assert_eq!(
        closes[1],
        &format!(
            "Failed to close heap snapshot: {} was not loaded.",
            second.display()
        )
    );
}

#[tokio::test]
async fn heap_tools_are_gated_and_check_their_files() {
    let workspace = tempfile::tempdir().expect("workspace");
    let workspace_arg = workspace.path().to_string_lossy().into_owned();
    let plain = McpServer::start(&["--workspace", &workspace_arg]).await;
    let names: Vec<String> = plain
        .list_tools()
        .await
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(
        !names
            .iter()
            .any(|name| name.contains("heapsnapshot") && name != "take_heapsnapshot"),
        "{names:?}"
    );
    plain.shutdown().await;

    let server = McpServer::start(&["--memoryDebugging", "--workspace", &workspace_arg]).await;
    let tools = server.list_tools().await;
    let mut heap_tools: Vec<String> = tools
        .iter()
        .map(|t| t.name.to_string())
        .filter(|name| name.contains("heapsnapshot") && name != "take_heapsnapshot")
        .collect();
    heap_tools.sort();
    assert_eq!(
        heap_tools,
        [
            "analyze_heapsnapshot_contexts",
            "close_heapsnapshot",
            "compare_heapsnapshots",
            "get_heapsnapshot_class_nodes",
            "get_heapsnapshot_details",
            "get_heapsnapshot_dominators",
            "get_heapsnapshot_duplicate_strings",
            "get_heapsnapshot_edges",
            "get_heapsnapshot_object_details",
            "get_heapsnapshot_retainers",
            "get_heapsnapshot_retaining_paths",
            "get_heapsnapshot_summary",
            "query_heapsnapshot_objects",
        ]
    );
    let outside = server
        .call(
            "get_heapsnapshot_summary",
            json!({ "filePath": "/etc/passwd.heapsnapshot" }),
        )
        .await;
    assert!(
        outside.is_error && outside.text.contains("Access denied"),
        "{}",
        outside.text
    );
    std::fs::write(workspace.path().join("notes.txt"), "x").expect("file");
    let wrong = server
        .call(
            "get_heapsnapshot_summary",
            json!({ "filePath": "notes.txt" }),
        )
        .await;
    assert!(
        wrong
            .text
            .contains("must have a .heapsnapshot or .heaptimeline extension."),
        "{}",
        wrong.text
    );
    let missing = server
        .call(
            "get_heapsnapshot_summary",
            json!({ "filePath": "gone.heapsnapshot" }),
        )
        .await;
    assert!(
        missing.is_error && missing.text.contains("ENOENT: no such file or directory"),
        "{}",
        missing.text
    );
    std::fs::write(
        workspace.path().join("broken.heapsnapshot"),
        "{\"snapshot\": 3}",
    )
    .expect("file");
    let broken = server
        .call(
            "get_heapsnapshot_summary",
            json!({ "filePath": "broken.heapsnapshot" }),
        )
        .await;
    assert!(
        broken.is_error && broken.text.contains("invalid heap snapshot"),
        "{}",
        broken.text
    );
    let bad_range = server
        .call(
            "query_heapsnapshot_objects",
            json!({ "filePath": "broken.heapsnapshot", "selfSize": "2MB-1MB" }),
        )
        .await;
    assert!(
        bad_range
            .text
            .contains("The lower bound must not exceed the upper bound."),
        "{}",
        bad_range.text
    );
    server.shutdown().await;
}
