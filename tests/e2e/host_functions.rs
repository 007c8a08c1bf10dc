//! The host's function table, enumerated end to end: the `contract_probe` fixture calls any one
//! host function by its WIT name, and each test walks every declared function through the real
//! server, so the gate, the landing check and the file gateway are shown to hold for every
//! function, including ones added after these tests were written.

use crate::support::{FixtureServer, McpServer, Route, binary_dir, browser_args, command};
use devtools_mcp::runtime::host_function::{self, HostFunction, Marks};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

fn qualified(function: &HostFunction) -> String {
    format!("{}/{}", function.interface, function.name)
}

async fn start(policy: &str, workspace: Option<&Path>) -> (McpServer, tempfile::TempDir) {
    start_from(&binary_dir().join("test-plugins"), policy, workspace).await
}

async fn start_from(
    plugins: &Path,
    policy: &str,
    workspace: Option<&Path>,
) -> (McpServer, tempfile::TempDir) {
    let scratch = tempfile::tempdir().expect("temp dir");
    let policy_file = scratch.path().join("policy.toml");
    std::fs::write(&policy_file, policy).expect("write policy");
    let mut args = browser_args();
    args.extend([
        "--plugin-dir".to_string(),
        plugins.display().to_string(),
        "--policy".to_string(),
        policy_file.display().to_string(),
    ]);
    if let Some(workspace) = workspace {
        args.extend(["--workspace".to_string(), workspace.display().to_string()]);
    }
    let server = McpServer::start_with(args, Vec::new())
        .await
        .expect("start");
    (server, scratch)
}

/// With no capability granted, every function that needs one traps before its body and the
/// error names the function and what to grant; the functions that need none still answer.
#[tokio::test]
async fn every_host_function_refuses_a_plugin_without_its_capability() {
    let (server, _scratch) = start("[plugins.contract_probe]\ncapabilities = []\n", None).await;
    let mut refused = 0;
    for function in host_function::all() {
        let name = qualified(function);
        let answer = server
            .call("contract_probe", json!({ "function": name, "arg": "1_1" }))
            .await;
        assert!(
            !answer.text.contains("the probe does not know"),
            "the probe must call every host function: {}",
            answer.text
        );
        match function.needs().next() {
            Some(capability) => {
                refused += 1;
                let expected = format!(
                    "it called {}, which needs the capability `{}`, and its policy does not grant it",
                    function.name,
                    capability.name()
                );
                assert!(
                    answer.is_error && answer.text.contains(&expected),
                    "{name} ran without `{}`: {}",
                    capability.name(),
                    answer.text
                );
            }
            None => assert!(
                !answer.text.contains("which needs the capability"),
                "{name} needs no capability: {}",
                answer.text
            ),
        }
    }
    assert!(refused > 50, "only {refused} functions refused");
    server.shutdown().await;
}

/// The functions of one released contract, as `interface/function`, from its WIT folder.
fn functions_of(contract: &Path) -> Vec<String> {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve
        .push_dir(contract)
        .unwrap_or_else(|error| panic!("{}: {error:#}", contract.display()));
    let world = resolve.packages[package].worlds["plugin"];
    let mut functions = Vec::new();
    for item in resolve.worlds[world].imports.values() {
        let wit_parser::WorldItem::Interface { id, .. } = item else {
            continue;
        };
        let interface = &resolve.interfaces[*id];
        let name = interface.name.clone().unwrap_or_default();
        functions.extend(interface.functions.keys().map(|f| format!("{name}/{f}")));
    }
    functions
}

/// A component built against each released contract (kept as a binary in
/// `tests/fixtures/contracts/vX.Y.Z/`) still loads in this server, and every function of its
/// contract reaches the host: the gate answers it (granted or not), nothing fails to link.
#[tokio::test]
async fn components_built_against_every_released_contract_still_load_and_call_the_host() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let fixtures = workspace.join("tests/fixtures/contracts");
    let released = std::fs::read_to_string(workspace.join("wit/released.sha256"))
        .expect("wit/released.sha256");
    let mut versions: Vec<String> = released
        .lines()
        .filter_map(|line| line.split_once("  ")?.1.split_once('/'))
        .filter_map(|(folder, _)| folder.strip_prefix("since_v").map(String::from))
        .collect();
    versions.dedup();
    assert!(!versions.is_empty());
    for version in versions {
        let folder = fixtures.join(format!("v{version}"));
        assert!(
            folder.join("contract_probe.wasm").is_file(),
            "no component built against the released contract {version} in {}",
            folder.display()
        );
        let grants = "[plugins.contract_probe]\ncapabilities = [\"pages.read\", \"script\"]\n";
        let (server, _scratch) = start_from(&folder, grants, None).await;
        let line = server
            .call(
                "contract_probe",
                json!({ "function": "response/append-line" }),
            )
            .await;
        assert!(
            !line.is_error && line.text.contains("probe line"),
            "{version}: {}",
            line.text
        );
        // Evaluating script: a method of the page in 0.2.0, a function of `script` since.
        let evaluate = match version.as_str() {
            "0.2.0" => "pages/[method]page.evaluate-expression",
            _ => "script/evaluate-expression",
        };
        let evaluated = server
            .call(
                "contract_probe",
                json!({ "function": evaluate, "arg": "6 * 7" }),
            )
            .await;
        assert!(
            evaluated.text.contains("evaluate-expression: ok"),
            "{version}: {}",
            evaluated.text
        );
        let contract = workspace.join(format!("wit/since_v{version}"));
        for function in functions_of(&contract) {
            let answer = server
                .call(
                    "contract_probe",
                    json!({ "function": function, "arg": "1_1" }),
                )
                .await;
            // The probe's own line, a capability refusal, or (for a response declaration)
            // the host's answer while rendering the section: the host was reached.
            let reached = answer.text.contains(&format!("{function}: "))
                || answer.text.contains("which needs the capability")
                || (function.starts_with("response/") && !answer.text.contains("not found: "));
            assert!(
                reached && !answer.text.contains("the probe does not know"),
                "{version} {function}: {}",
                answer.text
            );
        }
        server.shutdown().await;
    }
}

/// The functions that cannot make a page load anything (with the response declarations and the
/// heap snapshots, taken or read). Every other function must carry the `NAVIGATES`
/// mark: a new function is classified here, or the test fails.
const NOT_NAVIGATING: &[&str] = &[
    "types/[method]page.id",
    "types/[resource-drop]page",
    "pages/selected",
    "pages/get",
    "pages/all",
    "pages/url",
    "pages/network-requests",
    "pages/console-messages",
    "pages/open-dialog",
    "pages/wait-for",
    "pages/tab-id",
    "pages-manage/select",
    "pages-manage/close",
    "pages-manage/open-devtools",
    "pages/devtools-open",
    "files/save-file",
    "files/save-temp-file",
    "performance/stop-trace",
    "performance/analyze-insight",
    "performance/insight-sets",
    "styles/get-css-styles",
    "screencast/start",
    "screencast/stop",
    "page-tools/list-developer-tools",
    "page-tools/list-webmcp-tools",
    "extensions/uninstall",
    "extensions/installed",
    "pwa/uninstall",
    "pwa/get-os-app-state",
    "sessions/save",
    "sessions/restore",
    "sessions/list-saved",
    "sessions/delete",
];

/// A page inside the patterns that leaves them by itself a moment after it loads, as a page
/// whose handlers react to the plugin's input, resize or script would: whichever function ran
/// before the probe's wait on the page, the page's move during the call is caught and the page
/// blanked. The navigating functions are classified (a new function is, or the test fails);
/// the functions without the mark are caught too, since every function on a page (the wait
/// here) is checked where its page stands after it, navigating or not.
#[tokio::test]
async fn every_navigating_function_is_checked_where_its_page_lands() {
    let pages = FixtureServer::start(vec![
        Route::html(
            "/allowed",
            "<title>allowed</title><button>go</button><input value=x>\
             <script>setTimeout(() => { location.href = '/forbidden'; }, 1500);</script>",
        ),
        Route::html(
            "/forbidden",
            "<title>forbidden</title><p>FORBIDDEN PAGE</p>",
        ),
    ]);
    let allowed = pages.url("/allowed");
    let everything = devtools_mcp::policy::capability::Capability::ALL
        .iter()
        .filter(|capability| capability.name() != "long-lived")
        .map(|capability| format!("\"{}\"", capability.name()))
        .collect::<Vec<_>>()
        .join(", ");
    let policy = format!(
        "[plugins.contract_probe]\ncapabilities = [{everything}]\nnavigate = [\"{allowed}*\"]\n"
    );
    let (server, _scratch) = start(&policy, None).await;
    let mut checked = 0;
    for function in host_function::all() {
        let name = qualified(function);
        if function.interface == "response" || function.interface == "memory" {
            assert!(!function.marks.has(Marks::NAVIGATES), "{name}");
            continue;
        }
        let navigates = function.marks.has(Marks::NAVIGATES);
        assert_eq!(
            navigates,
            !NOT_NAVIGATING.contains(&name.as_str()),
            "{name}: classify it in NOT_NAVIGATING or mark it NAVIGATES"
        );
        // The page's timer must fire during the call: on a loaded machine it may fire before
        // the call starts, which the call refuses at its start (before any function), and
        // says so; then the function was not tried, so the round is run again.
        let mut answer = crate::support::ToolOutput::default();
        for _ in 0..3 {
            let reset = server
                .call("navigate_page", json!({ "type": "url", "url": allowed }))
                .await;
            assert!(!reset.is_error, "{}", reset.text);
            answer = server
                .call(
                    "contract_probe",
                    json!({ "function": name, "arg": allowed, "then_wait_for": "FORBIDDEN PAGE" }),
                )
                .await;
            let moved_before_the_call = answer.text.contains("it would act on the page at")
                && !answer.text.contains("during the call");
            if !moved_before_the_call {
                break;
            }
        }
        let landed = answer.text.contains("during the call")
            && answer.text.contains("matches none of the URL patterns");
        checked += usize::from(navigates);
        assert!(landed, "{name}: a page moved unchecked: {}", answer.text);
        assert!(
            answer.text.contains("the page was sent to about:blank"),
            "{name}: {}",
            answer.text
        );
    }
    assert!(checked > 20, "only {checked} navigating functions");
    server.shutdown().await;
}

/// A FIFO (or any special file) where a path argument points never blocks a call: every
/// function that reads or writes a file the plugin names answers promptly, and the FIFO is
/// neither opened for good nor replaced.
#[tokio::test]
async fn no_function_that_takes_a_path_blocks_on_a_fifo() {
    let workspace = tempfile::tempdir().expect("workspace");
    let fifo = workspace.path().join("probe.fifo");
    let made = command("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let everything = devtools_mcp::policy::capability::Capability::ALL
        .iter()
        .map(|capability| format!("\"{}\"", capability.name()))
        .collect::<Vec<_>>()
        .join(", ");
    let policy = format!("[plugins.contract_probe]\ncapabilities = [{everything}]\n");
    let (server, _scratch) = start(&policy, Some(workspace.path())).await;
    let pages = FixtureServer::start(vec![Route::html("/", "<p>page</p>")]);
    server
        .call(
            "navigate_page",
            json!({ "type": "url", "url": pages.url("/") }),
        )
        .await;
    let mut checked = 0;
    for function in host_function::all() {
        if !(function.marks.has(Marks::READS) || function.marks.has(Marks::WRITES)) {
            continue;
        }
        checked += 1;
        let name = qualified(function);
        let started = Instant::now();
        let answer = server
            .call(
                "contract_probe",
                json!({ "function": name, "arg": fifo.display().to_string() }),
            )
            .await;
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{name} blocked on a FIFO for {:?}: {}",
            started.elapsed(),
            answer.text
        );
        assert!(
            !answer.text.contains("saved to") || !answer.text.contains("probe.fifo"),
            "{name} wrote into the FIFO: {}",
            answer.text
        );
        let kind = std::fs::symlink_metadata(&fifo).expect("the FIFO is still there");
        assert!(
            std::os::unix::fs::FileTypeExt::is_fifo(&kind.file_type()),
            "{name} replaced the FIFO"
        );
    }
    assert!(checked >= 15, "only {checked} functions take paths");
    server.shutdown().await;
}

/// Contract 0.3.0 gives data, not only 1.11.0's text: the probe reads a page's requests and
/// console messages as records, and a heap snapshot's numbers, and prints what it computed.
#[tokio::test]
async fn requests_messages_insights_and_heap_numbers_reach_a_plugin_as_records() {
    let pages = crate::fixtures::server();
    let workspace = tempfile::tempdir().expect("workspace");
    let grants = "[plugins.contract_probe]\ncapabilities = [\"pages.read\", \"memory\", \"files.write\", \"performance\", \"navigate\", \"long-lived\"]\n";
    let (server, _scratch) = start(grants, Some(workspace.path())).await;
    let opened = server
        .call("navigate_page", json!({ "url": pages.url("/console") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let probe = |function: &str, arg: &str| {
        server.call(
            "contract_probe",
            json!({ "function": function, "arg": arg }),
        )
    };
    // The fetch logs last: wait for it as the listing would.
    let mut messages = String::new();
    for _ in 0..50 {
        messages = probe("pages/console-messages", "").await.text;
        if messages.contains("fetched") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        messages.contains("Log hello from the page 42 args=2 uncaught=false"),
        "{messages}"
    );
    assert!(messages.contains("Warning careful args=1"), "{messages}");
    assert!(messages.contains("Error broken args=1"), "{messages}");
    let requests = probe("pages/network-requests", "").await.text;
    assert!(
        requests.contains(&format!(
            "GET document {} 200 text/html",
            pages.url("/console")
        )),
        "{requests}"
    );
    assert!(
        requests.contains(&format!("GET fetch {} 200", pages.url("/data.json"))),
        "{requests}"
    );

    // A trace of a page's reload (one that paints text): its paints as numbers.
    let opened = server
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    assert_eq!(
        probe("performance/insight-sets", "").await.text,
        "performance/insight-sets: ",
        "no trace yet, no sets"
    );
    let started = probe("performance/start-trace", "").await;
    assert!(!started.is_error, "{}", started.text);
    // Let the reloaded page paint before the trace stops.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let stopped = probe("performance/stop-trace", "").await;
    assert!(!stopped.is_error, "{}", stopped.text);
    let sets = probe("performance/insight-sets", "").await.text;
    assert!(
        sets.contains("NAVIGATION_0 fcp=Some("),
        "{sets}\n{}\n{}",
        started.text,
        stopped.text
    );
    assert!(sets.contains("insights=LCPBreakdown"), "{sets}");

    let snapshot = workspace.path().join("page.heapsnapshot");
    let snapshot = snapshot.to_string_lossy();
    let taken = probe("memory/take-snapshot", &snapshot).await;
    assert!(!taken.is_error, "{}", taken.text);
    let numbers = probe("memory/statistics", &snapshot).await.text;
    let field = |name: &str| -> f64 {
        numbers
            .split_whitespace()
            .find_map(|part| part.strip_prefix(&format!("{name}=")))
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {numbers}"))
    };
    assert!(field("nodes") > 1000.0, "{numbers}");
    assert!(field("total") > 100_000.0, "{numbers}");
    assert!(field("classes") > 10.0, "{numbers}");
    server.shutdown().await;
}
