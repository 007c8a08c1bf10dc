//! The server's life: lazy browser, relaunch after a crash, exit on EOF and signals without
//! orphans, and what the loader accepts, refuses and caches.

use crate::support::{self, McpServer, binary_dir, browser_args, descendants, wait_until_gone};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, SystemTime};

#[tokio::test]
async fn the_browser_starts_lazily_and_exits_with_the_server() {
    // Without the background start (on by default since issue 14), the first call launches it.
    let server = McpServer::start(&["--background-launch=false"]).await;
    let tools = server.list_tools().await;
    let names: Vec<String> = tools.iter().map(|tool| tool.name.to_string()).collect();
    let sorted = {
        let mut copy = names.clone();
        copy.sort();
        copy
    };
    assert_eq!(names, sorted, "tools are sorted by name");
    // The first nine tools are always there; the parity test checks the whole list.
    for name in [
        "click",
        "close_page",
        "evaluate_script",
        "handle_dialog",
        "list_pages",
        "navigate_page",
        "new_page",
        "select_page",
        "take_snapshot",
    ] {
        assert!(
            names.iter().any(|listed| listed == name),
            "{name} is listed: {names:?}"
        );
    }
    assert!(
        descendants(server.pid()).is_empty(),
        "no browser before the first call"
    );

    server.call("list_pages", json!({})).await;
    let browser = descendants(server.pid());
    assert!(!browser.is_empty(), "the first call launches the browser");
    let took = server.shutdown().await;
    assert!(
        took < Duration::from_secs(1),
        "exit on stdin EOF took {took:?}"
    );
    assert!(
        wait_until_gone(&browser, Duration::from_secs(2))
            .await
            .is_empty(),
        "Chromium outlived the server"
    );
}

#[tokio::test]
async fn sigterm_and_sigint_stop_the_server_and_its_browser() {
    for signal in ["-TERM", "-INT"] {
        let server = McpServer::start(&[]).await;
        server.call("list_pages", json!({})).await;
        let browser = descendants(server.pid());
        assert!(!browser.is_empty());
        let started = std::time::Instant::now();
        let status = crate::support::command("kill")
            .args([signal, &server.pid().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
        let left = wait_until_gone(&[server.pid()], Duration::from_secs(3)).await;
        let took = started.elapsed();
        assert!(left.is_empty(), "the server ignored {signal}");
        assert!(took < Duration::from_secs(1), "{signal} exit took {took:?}");
        assert!(
            wait_until_gone(&browser, Duration::from_secs(2))
                .await
                .is_empty(),
            "Chromium outlived {signal}"
        );
        drop(server);
    }
}

/// A server killed outright (SIGKILL: no chance to close anything) takes its browser with it:
/// the browser is launched on a DevTools pipe, and Chromium exits when the pipe closes. Before
/// the pipe, every killed server (a client giving up, an OOM kill) left a Chromium running.
#[tokio::test]
async fn a_killed_server_leaves_no_browser_behind() {
    let server = McpServer::start(&[]).await;
    server.call("list_pages", json!({})).await;
    let browser = descendants(server.pid());
    assert!(!browser.is_empty(), "no browser was launched");
    let status = crate::support::command("kill")
        .args(["-KILL", &server.pid().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    assert!(
        wait_until_gone(&[server.pid()], Duration::from_secs(3))
            .await
            .is_empty(),
        "the server survived SIGKILL"
    );
    let left = wait_until_gone(&browser, Duration::from_secs(10)).await;
    // Whatever is left is killed here, so a failing run does not leak either.
    for pid in &left {
        let _killed = crate::support::command("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(
        left.is_empty(),
        "Chromium outlived a killed server: {left:?}"
    );
    drop(server);
}

#[tokio::test]
async fn a_dead_browser_is_relaunched_with_the_reference_note() {
    let server = McpServer::start(&[]).await;
    let first = server.call("list_pages", json!({})).await;
    assert_eq!(first.text, "## Pages\n1: about:blank [selected]");
    let browser = descendants(server.pid());
    crate::support::kill_all(&browser);
    assert!(
        wait_until_gone(&browser, Duration::from_secs(5))
            .await
            .is_empty()
    );
    tokio::time::sleep(Duration::from_millis(200)).await;

    let after = server.call("list_pages", json!({})).await;
    assert!(!after.is_error, "{}", after.text);
    let mut lines = after.text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "Note: the browser was restarted or reconnected since the last call. Page ids have changed. Call list_pages to see open pages."
        )
    );
    assert_eq!(lines.next(), Some("## Pages"));
    let row = lines.next().unwrap_or_default();
    assert!(
        row.ends_with(": about:blank [selected]") && !row.starts_with("1:"),
        "page ids are never reused: {row}"
    );
    let once = server.call("list_pages", json!({})).await;
    assert!(
        once.text.starts_with("## Pages"),
        "the note is shown once: {}",
        once.text
    );
    server.shutdown().await;
}

#[tokio::test]
async fn components_with_foreign_imports_and_duplicate_names_are_refused() {
    let refused_dir = binary_dir().join("test-plugins-refused");
    let refused_dir_arg = refused_dir.to_string_lossy().into_owned();
    let mut args = browser_args();
    args.extend(["--plugin-dir".to_string(), refused_dir_arg]);
    let refused = McpServer::start_with(args, Vec::new()).await;
    let Err(error) = refused else {
        panic!("a component importing an interface we do not provide must be refused")
    };
    assert!(
        error.contains(&format!(
            "Plugin {} imports `evil:net/raw-socket@0.1.0`, which this server does not provide.",
            refused_dir.join("refused_foreign_import.wasm").display()
        )),
        "{error}"
    );

    let duplicate = tempfile::tempdir().expect("temp dir");
    std::fs::copy(
        binary_dir().join("plugins/click.wasm"),
        duplicate.path().join("my_click.wasm"),
    )
    .expect("copy");
    let mut args = browser_args();
    args.extend([
        "--plugin-dir".to_string(),
        duplicate.path().to_string_lossy().into_owned(),
    ]);
    let Err(error) = McpServer::start_with(args, Vec::new()).await else {
        panic!("a duplicate tool name must be refused")
    };
    assert!(
        error.contains("Two plugins define the tool `click`"),
        "{error}"
    );
    assert!(
        error.contains("<built-in>/click.wasm") && error.contains("my_click.wasm"),
        "{error}"
    );
}

#[tokio::test]
async fn components_load_too_and_a_second_start_compiles_nothing() {
    // A real component (not a core module): encoded here from a fixture module.
    let plugins = tempfile::tempdir().expect("temp dir");
    let module = std::fs::read(binary_dir().join("test-plugins/network_probe.wasm"))
        .expect("fixture module");
    let component = wit_component::ComponentEncoder::default()
        .module(&module)
        .and_then(|encoder| encoder.validate(true).encode())
        .expect("componentize");
    assert!(wasmparser::Parser::is_component(&component));
    std::fs::write(plugins.path().join("probe.wasm"), component).expect("write component");

    let cache = tempfile::tempdir().expect("cache dir");
    let mut args = browser_args();
    let cache_arg = cache.path().to_string_lossy().into_owned();
    // The later --cache-dir wins over the shared one in browser_args.
    args.extend([
        "--plugin-dir".into(),
        plugins.path().to_string_lossy().into_owned(),
        "--cache-dir".into(),
        cache_arg,
    ]);
    let server = McpServer::start_with(args.clone(), Vec::new())
        .await
        .expect("start");
    let listed = server.list_tools().await.len();
    assert_eq!(
        server.call("network_probe", json!({})).await.text,
        "Network category is on"
    );
    server.shutdown().await;

    // The built-in tools come compiled in the binary: only the plugin was compiled (beside
    // it, its compiled functions for its next edit, and the record of the built-in tools'
    // definitions).
    let entries = cache_entries(cache.path());
    let count = |suffix: &str| {
        entries
            .iter()
            .filter(|(name, _)| name.ends_with(suffix))
            .count()
    };
    assert_eq!(count(".cwasm"), 1, "one compiled artifact: {entries:?}");
    assert_eq!(count(".pack"), 1, "one functions pack: {entries:?}");
    assert_eq!(entries.len(), 3, "and one record: {entries:?}");
    let server = McpServer::start_with(args, Vec::new())
        .await
        .expect("second start");
    assert_eq!(server.list_tools().await.len(), listed);
    server.shutdown().await;
    assert_eq!(
        cache_entries(cache.path()),
        entries,
        "the second start rewrote the cache"
    );
}

fn cache_entries(dir: &Path) -> Vec<(String, SystemTime)> {
    let mut entries: Vec<(String, SystemTime)> = std::fs::read_dir(dir)
        .expect("cache dir")
        .filter_map(Result::ok)
        .map(|entry| {
            let modified = entry
                .metadata()
                .and_then(|meta| meta.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            (entry.file_name().to_string_lossy().into_owned(), modified)
        })
        .collect();
    entries.sort();
    entries
}

/// A Chromium started by the test, listening for DevTools on a free loopback port.
pub(crate) struct ExternalBrowser {
    child: std::process::Child,
    pub(crate) ws_endpoint: String,
    _profile: tempfile::TempDir,
}

impl ExternalBrowser {
    pub(crate) fn start() -> ExternalBrowser {
        use std::io::{BufRead, BufReader};
        let profile = tempfile::tempdir().expect("profile");
        let mut child = crate::support::command(support::chromium_path())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start chromium");
        let stderr = child.stderr.take().expect("stderr");
        let ws_endpoint = BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .find_map(|line| {
                line.split_once("DevTools listening on ")
                    .map(|(_, url)| url.trim().to_string())
            })
            .expect("DevTools endpoint");
        ExternalBrowser {
            child,
            ws_endpoint,
            _profile: profile,
        }
    }

    fn http_url(&self) -> String {
        let authority = self
            .ws_endpoint
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string();
        format!("http://{authority}")
    }
}

impl Drop for ExternalBrowser {
    fn drop(&mut self) {
        let _killed = self.child.kill();
        let _reaped = self.child.wait();
    }
}

#[tokio::test]
async fn the_server_attaches_to_a_running_browser_and_leaves_it_running() {
    let mut browser = ExternalBrowser::start();
    let cache = support::cache_dir().to_string_lossy().into_owned();
    for connect in [
        vec!["--browserUrl".to_string(), browser.http_url()],
        vec!["--wsEndpoint".to_string(), browser.ws_endpoint.clone()],
    ] {
        let mut args = connect.clone();
        args.extend(["--cache-dir".to_string(), cache.clone()]);
        let server = McpServer::start_with(args, Vec::new())
            .await
            .expect("start");
        let listed = server.call("list_pages", json!({})).await;
        assert!(!listed.is_error, "{connect:?}: {}", listed.text);
        assert!(listed.text.starts_with("## Pages\n"), "{}", listed.text);
        assert!(listed.text.contains(": about:blank"), "{}", listed.text);
        assert!(
            descendants(server.pid()).is_empty(),
            "attaching launches nothing"
        );
        server.shutdown().await;
        assert!(
            browser.child.try_wait().expect("status").is_none(),
            "a browser we attached to keeps running"
        );
    }
}

#[tokio::test]
async fn one_shot_calls_can_share_a_running_browser() {
    let browser = ExternalBrowser::start();
    let pages = crate::fixtures::server();
    let binary = env!("CARGO_BIN_EXE_devtools-mcp");
    let cache = support::cache_dir().to_string_lossy().into_owned();
    let run = |arguments: Vec<String>| {
        let output = crate::support::command(binary)
            .envs(support::server_env())
            .args(arguments)
            .args(["--browserUrl", &browser.http_url(), "--cache-dir", &cache])
            .output()
            .expect("run the CLI");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    };
    let opened = run(vec![
        "call".into(),
        "new_page".into(),
        json!({ "url": pages.url("/next") }).to_string(),
    ]);
    assert!(
        opened.contains(&format!("Next ({})", pages.url("/next"))),
        "{opened}"
    );
    // A second process sees the page the first one opened.
    let listed = run(vec!["call".into(), "list_pages".into()]);
    assert!(
        listed.contains(&format!("Next ({})", pages.url("/next"))),
        "{listed}"
    );
}

/// A tab in its teardown must not be adopted again: adopting it waited out a command it never
/// answers (`close_page` answered after exactly 10 s, one close in three) and could list a
/// ghost page. Each close answers at once, listing only the pages left.
#[tokio::test]
async fn pages_open_and_close_in_a_row_without_waiting_out_a_timeout() {
    // A page that keeps its renderer busy while it is torn down widens the window in which
    // the browser still lists the closing tab.
    let pages = support::FixtureServer::start(vec![support::Route::html(
        "/busy",
        "<!doctype html><title>Busy</title><p>busy</p><script>addEventListener('pagehide', () => { const t = Date.now(); while (Date.now() - t < 300) {} });</script>",
    )]);
    let server = McpServer::start(&[]).await;
    for round in 0..8 {
        let opened = server
            .call("new_page", json!({ "url": pages.url("/busy") }))
            .await;
        assert!(!opened.is_error, "{}", opened.text);
        let lines = crate::fixtures::page_lines(&opened.text);
        assert_eq!(lines.len(), 2, "round {round}: {}", opened.text);
        let id: u32 = lines[1]
            .split(':')
            .next()
            .and_then(|id| id.trim().parse().ok())
            .expect("the new page's id");
        let evaluated = server
            .call(
                "evaluate_script",
                json!({ "function": "() => document.title" }),
            )
            .await;
        assert!(!evaluated.is_error, "{}", evaluated.text);
        let started = std::time::Instant::now();
        let closed = server.call("close_page", json!({ "pageId": id })).await;
        let took = started.elapsed();
        assert!(!closed.is_error, "{}", closed.text);
        assert_eq!(
            crate::fixtures::page_lines(&closed.text),
            vec!["1: about:blank [selected]".to_string()],
            "round {round}: {}",
            closed.text
        );
        // Far below the 10 s command timeout a missed answer waits out; not a benchmark.
        assert!(
            took < std::time::Duration::from_secs(5),
            "round {round}: close_page took {took:?}"
        );
    }
    server.shutdown().await;
}

/// 1.11.0's launch flags: `--ignoreDefaultChromeArg` leaves a default out of the browser's
/// arguments (here `--hide-scrollbars`, so a tall page shows its scrollbar again), and a flag
/// this server does not know is reported as the reference reports it, not a reason to refuse
/// to start (a client configured for a newer chrome-devtools-mcp still gets a server).
#[tokio::test]
async fn a_default_browser_flag_can_be_left_out_and_unknown_flags_only_warn() {
    let scrollbar = json!({ "function": "() => { document.body.style.height = '5000px'; \
        return innerWidth - document.documentElement.clientWidth; }" });
    let width = |text: &str| -> u32 {
        let number = text.lines().find_map(|line| line.trim().parse().ok());
        number.unwrap_or_else(|| panic!("no width in: {text}"))
    };
    let server = McpServer::start(&[]).await;
    let hidden = server.call("evaluate_script", scrollbar.clone()).await;
    assert_eq!(
        width(&hidden.text),
        0,
        "headless hides scrollbars by default"
    );
    server.shutdown().await;

    let flags = [
        "--ignoreDefaultChromeArg=--hide-scrollbars",
        "--someFutureFlag",
        "its-value",
        "--another-future-flag=1",
    ];
    let server = McpServer::start(&flags).await;
    let shown = server.call("evaluate_script", scrollbar).await;
    assert!(
        width(&shown.text) > 0,
        "the scrollbar takes room without the default --hide-scrollbars: {}",
        shown.text
    );
    let stderr = server.stderr();
    assert!(
        stderr.contains("Unknown arguments: --someFutureFlag,--another-future-flag"),
        "the reference's warning: {stderr}"
    );
    server.shutdown().await;
}
