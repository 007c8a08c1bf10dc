//! Faults in the middle of a call: each gets a clear answer, leaves nothing half-written, and
//! the server serves the next call.

use crate::support::{
    FixtureServer, McpServer, Route, browser_args, descendants, file_names, kill_all, kill_tree,
    wait_until_gone,
};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How the reference's answers begin after the browser was relaunched or reconnected.
const RECONNECTED: &str = "Note: the browser was restarted or reconnected since the last call.";

/// A tmpfs of `size` mounted on a folder of the test's, unmounted when dropped. Needs root (and
/// a kernel that lets it mount): `None` when this machine does not allow it.
struct SmallDisk {
    mount: PathBuf,
    _folder: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<SmallDisk> {
        let folder = tempfile::tempdir().ok()?;
        let mount = folder.path().join("disk");
        std::fs::create_dir(&mount).ok()?;
        let mounted = crate::support::command("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mount)
            .status()
            .ok()?
            .success();
        mounted.then_some(SmallDisk {
            mount,
            _folder: folder,
        })
    }

    fn path(&self) -> &Path {
        &self.mount
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = crate::support::command("umount")
            .arg("-l")
            .arg(&self.mount)
            .status();
    }
}

/// A disk that fills up while a screenshot is saved: the reference's "Could not write" error,
/// no file (whole or partial) left behind, and the next call served.
#[tokio::test]
async fn a_full_disk_while_saving_is_a_clear_error_and_leaves_no_partial_file() {
    let Some(disk) = SmallDisk::mount("256k") else {
        eprintln!("\n!!! SKIPPED: cannot mount a small tmpfs here (needs root)\n");
        return;
    };
    // Leave ~16 KiB free: less than a full-page screenshot.
    std::fs::write(disk.path().join("filler.bin"), vec![7u8; 240 << 10]).expect("filler");
    let pages = FixtureServer::start(vec![Route::html(
        "/",
        "<!doctype html><title>Big</title><body style=\"height:3000px;background:linear-gradient(red,blue)\"><h1>Big</h1></body>",
    )]);
    let mut args = browser_args();
    args.extend(["--workspace".into(), disk.path().display().to_string()]);
    let server = McpServer::start_with(args, Vec::new())
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    server
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;
    let target = disk.path().join("shot.png");
    let saved = server
        .call(
            "take_screenshot",
            json!({ "fullPage": true, "filePath": target.display().to_string() }),
        )
        .await;
    assert!(saved.is_error, "{}", saved.text);
    assert!(
        saved
            .text
            .contains(&format!("Could not write {}", target.display())),
        "{}",
        saved.text
    );
    assert_eq!(file_names(disk.path()), vec!["filler.bin".to_string()]);
    let next = server.call("take_screenshot", json!({})).await;
    assert!(!next.is_error, "{}", next.text);
    server.shutdown().await;
}

/// Chromium killed while a snapshot of a large page is being taken: the call answers (an error
/// or, if it finished first, the snapshot), and the next call runs on a relaunched browser
/// with the reference's note.
#[tokio::test]
async fn chromium_killed_during_a_snapshot_is_answered_and_the_next_call_relaunches() {
    let rows: String = (0..6000)
        .map(|i| format!("<tr><td>row {i}</td><td><button>b{i}</button></td></tr>"))
        .collect();
    let pages = FixtureServer::start(vec![Route::html(
        "/",
        format!("<!doctype html><title>Rows</title><table>{rows}</table>"),
    )]);
    let server = McpServer::start(&[]).await;
    let opened = server
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let browser = descendants(server.pid());
    let kill = async {
        tokio::time::sleep(Duration::from_millis(150)).await;
        kill_all(&browser);
    };
    let (snapshot, ()) = tokio::join!(server.call("take_snapshot", json!({})), kill);
    assert!(
        snapshot.is_error || snapshot.text.starts_with("## Latest page snapshot"),
        "{}",
        snapshot.text
    );
    assert!(
        wait_until_gone(&browser, Duration::from_secs(5))
            .await
            .is_empty()
    );
    let relaunch = std::time::Instant::now();
    let next = server.call("list_pages", json!({})).await;
    // What the fault costs (docs/multi-tenant.md quotes it): the next call's relaunch.
    eprintln!(
        "fault cost: the call after Chromium was killed answered in {} ms",
        relaunch.elapsed().as_millis()
    );
    assert!(!next.is_error, "{}", next.text);
    assert!(next.text.starts_with(RECONNECTED), "{}", next.text);
    server.shutdown().await;
}

/// A tenants file replaced by a broken one before SIGHUP: the error is logged, the tenants of
/// the previous file keep working (sessions and new connections alike), and a later valid file
/// is read again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_tenants_file_on_sighup_keeps_the_previous_one_in_force() {
    use crate::support::{HttpServer, TenantSpec};
    use std::time::Instant;

    let alice = TenantSpec::new("alice", "token-alice").on_loopback();
    let bob = TenantSpec::new("bob", "token-bob").on_loopback();
    let server = HttpServer::start(std::slice::from_ref(&alice), &[]).await;
    let session = server.connect("token-alice").await;
    assert!(!session.call("list_pages", json!({})).await.is_error);

    // Cut off mid-table, as an editor's half-saved file would be.
    server.write_tenants_text("[[tenant]]\nname = \"alice\"\ntoken_sha256 = \"");
    server.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server.stderr().contains("keeping the previous tenants") {
        assert!(
            Instant::now() < deadline,
            "no error logged for the broken file:\n{}",
            server.stderr()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let still = session.call("list_pages", json!({})).await;
    assert!(!still.is_error, "alice's session ended: {}", still.text);
    let again = server.connect("token-alice").await;
    assert!(!again.call("list_pages", json!({})).await.is_error);
    assert!(
        server.client("token-bob").await.is_err(),
        "bob is in no file that was read"
    );

    // A valid file is read again.
    server.write_tenants(&[alice, bob]);
    server.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(bob) = server.client("token-bob").await {
            bob.close().await;
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the valid file was not read after the broken one"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    session.close().await;
    again.close().await;
}

/// The page's renderer crashes while a click's handler runs: the click is answered with an
/// error rather than waiting out a timeout, and the server serves the next calls (a new page
/// loads and answers).
#[tokio::test]
async fn a_renderer_crash_during_a_click_is_answered_and_the_next_call_served() {
    let pages = FixtureServer::start(vec![
        Route::html(
            "/busy",
            "<!doctype html><title>Busy</title><button onclick=\"const end = Date.now() + 8000; while (Date.now() < end) {}\">Spin</button>",
        ),
        Route::html(
            "/after",
            "<!doctype html><title>After</title><p>Still here</p>",
        ),
    ]);
    let server = McpServer::start(&[]).await;
    let opened = server
        .call("navigate_page", json!({ "url": pages.url("/busy") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let snapshot = server.call("take_snapshot", json!({})).await.text;
    let uid = snapshot
        .lines()
        .find(|line| line.contains("button \"Spin\""))
        .and_then(|line| {
            line.split_whitespace()
                .find_map(|word| word.strip_prefix("uid="))
        })
        .unwrap_or_else(|| panic!("no button in {snapshot}"))
        .to_owned();
    let renderers: Vec<u32> = descendants(server.pid())
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains("--type=renderer"))
        })
        .collect();
    assert!(!renderers.is_empty(), "no renderer process to crash");
    let crash = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        kill_all(&renderers);
    };
    let started = std::time::Instant::now();
    let (clicked, ()) = tokio::join!(server.call("click", json!({ "uid": uid })), crash);
    let took = started.elapsed();
    eprintln!(
        "fault cost: a click whose renderer crashed answered in {} ms: {}",
        took.as_millis(),
        clicked.text.lines().next().unwrap_or_default()
    );
    assert!(
        clicked.is_error,
        "a crashed click is an error: {}",
        clicked.text
    );
    assert!(
        clicked.text.contains("The page crashed during this action"),
        "{}",
        clicked.text
    );
    assert!(
        took < Duration::from_secs(5),
        "the click waited out a timeout instead of noticing the crash: {took:?}"
    );
    let listed = server.call("list_pages", json!({})).await;
    assert!(!listed.is_error, "{}", listed.text);
    let next = server
        .call("new_page", json!({ "url": pages.url("/after") }))
        .await;
    assert!(!next.is_error, "{}", next.text);
    let snapshot = server.call("take_snapshot", json!({})).await;
    assert!(snapshot.text.contains("Still here"), "{}", snapshot.text);
    server.shutdown().await;
}

/// A TCP relay between the server and a browser's DevTools port that can cut every
/// connection it carries at once, as a network fault or a restarted proxy would.
struct Relay {
    port: u16,
    live: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    fn start(upstream: std::net::SocketAddr) -> Relay {
        use std::net::{Shutdown, TcpListener, TcpStream};
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind the relay");
        let port = listener.local_addr().expect("relay address").port();
        let live = std::sync::Arc::new(std::sync::Mutex::new(Vec::<TcpStream>::new()));
        let tracked = live.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(upstream) else {
                    continue;
                };
                let pairs = [
                    (client.try_clone(), server.try_clone()),
                    (server.try_clone(), client.try_clone()),
                ];
                if let Ok(mut live) = tracked.lock() {
                    live.extend(client.try_clone().ok());
                    live.extend(server.try_clone().ok());
                }
                for pair in pairs {
                    if let (Ok(mut from), Ok(mut to)) = pair {
                        std::thread::spawn(move || {
                            let _copied = std::io::copy(&mut from, &mut to);
                            let _closed = to.shutdown(Shutdown::Both);
                        });
                    }
                }
            }
        });
        Relay { port, live }
    }

    /// Closes every connection carried so far; new ones are still relayed.
    fn cut(&self) {
        if let Ok(mut live) = self.live.lock() {
            for stream in live.drain(..) {
                let _closed = stream.shutdown(std::net::Shutdown::Both);
            }
        }
    }
}

/// The DevTools connection to the browser closed while a screenshot is taken: the call is
/// answered, and the next call reconnects (with the reference's note) and is served.
#[tokio::test]
async fn the_devtools_connection_closed_during_a_screenshot_is_answered_and_reconnected() {
    let browser = crate::lifecycle::ExternalBrowser::start();
    let endpoint = url::Url::parse(&browser.ws_endpoint).expect("ws endpoint");
    let upstream = endpoint
        .socket_addrs(|| None)
        .expect("endpoint address")
        .into_iter()
        .next()
        .expect("an address");
    let relay = Relay::start(upstream);
    let mut relayed = endpoint.clone();
    relayed.set_port(Some(relay.port)).expect("relay port");
    let rows: String = (0..3000)
        .map(|i| format!("<p style=\"color:hsl({}, 70%, 40%)\">row {i}</p>", i % 360))
        .collect();
    let pages = FixtureServer::start(vec![Route::html(
        "/",
        format!("<!doctype html><title>Tall</title>{rows}"),
    )]);
    let server = McpServer::start_with(
        vec!["--wsEndpoint".to_string(), relayed.to_string()],
        Vec::new(),
    )
    .await
    .expect("start");
    let opened = server
        .call("new_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let cut = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        relay.cut();
    };
    let (shot, ()) = tokio::join!(
        server.call("take_screenshot", json!({ "fullPage": true })),
        cut
    );
    assert!(
        shot.is_error || shot.text.contains("screenshot"),
        "{}",
        shot.text
    );
    // The connection's reader may take a moment to see the close on a loaded machine; within
    // a few seconds a call reconnects and says so.
    let started = std::time::Instant::now();
    let next = loop {
        let next = server.call("list_pages", json!({})).await;
        if next.text.starts_with(RECONNECTED) || started.elapsed() > Duration::from_secs(5) {
            break next;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    eprintln!(
        "fault cost: the DevTools connection closed, a call reconnected {} ms later",
        started.elapsed().as_millis()
    );
    assert!(!next.is_error, "{}", next.text);
    assert!(next.text.starts_with(RECONNECTED), "{}", next.text);
    let opened = server
        .call("new_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(
        !opened.is_error,
        "the reconnected browser serves: {}",
        opened.text
    );
    server.shutdown().await;
}

/// The server SIGKILLed while it saves a screenshot, at moments spread over the call: the
/// target path then holds nothing or a whole image, never part of one. What a cut write left
/// is a temporary file, which a later start removes once it is a minute old (a younger one may
/// be another instance's write under way, and is kept).
#[tokio::test]
async fn a_server_killed_while_saving_leaves_no_partial_file_and_the_next_start_is_clean() {
    let root = tempfile::tempdir().expect("root");
    let pages = FixtureServer::start(vec![Route::html(
        "/",
        "<!doctype html><title>Tall</title><body style=\"height:6000px;background:linear-gradient(red,blue,green)\"><h1>Tall</h1></body>",
    )]);
    let mut args = browser_args();
    args.extend(["--workspace".into(), root.path().display().to_string()]);
    let whole_png = |bytes: &[u8]| {
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.ends_with(b"IEND\xaeB`\x82")
    };
    // How long a save takes here, so that the kills land around its end, where the file is
    // written (capturing and encoding come first).
    let took = {
        let server = started_on(&args, &pages.url("/")).await;
        let target = root.path().join("uncut.png");
        let save = json!({ "fullPage": true, "filePath": target.display().to_string() });
        let started = std::time::Instant::now();
        let saved = server.call("take_screenshot", save).await;
        assert!(!saved.is_error, "{}", saved.text);
        server.shutdown().await;
        started.elapsed()
    };
    for (attempt, share) in [0.5, 0.8, 0.9, 0.95, 1.0, 1.05].into_iter().enumerate() {
        let server = started_on(&args, &pages.url("/")).await;
        let target = root.path().join(format!("shot-{attempt}.png"));
        let save = json!({ "fullPage": true, "filePath": target.display().to_string() });
        let delay = took.mul_f64(share);
        {
            // Not polled again once the server is killed (its answer never comes).
            let call = server.call("take_screenshot", save);
            tokio::pin!(call);
            tokio::select! {
                saved = &mut call => assert!(!saved.is_error, "{}", saved.text),
                () = tokio::time::sleep(delay) => kill_tree(server.pid()),
            }
        }
        drop(server);
        if let Ok(bytes) = std::fs::read(&target) {
            assert!(whole_png(&bytes), "{} holds a cut image", target.display());
        }
    }
    // What the kills left, aged past the minute, and a fresh temporary file of another writer.
    let left: Vec<String> = file_names(root.path())
        .into_iter()
        .filter(|name| name.ends_with(".partial"))
        .collect();
    for name in &left {
        age(&root.path().join(name), Duration::from_secs(120));
    }
    let stale = root.path().join(".devtools-mcp-0123456789abcdef.partial");
    std::fs::write(&stale, b"cut").expect("stale partial");
    age(&stale, Duration::from_secs(120));
    let fresh = root.path().join(".devtools-mcp-fedcba9876543210.partial");
    std::fs::write(&fresh, b"under way").expect("fresh partial");

    let server = McpServer::start_with(args, Vec::new())
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    let partials: Vec<String> = file_names(root.path())
        .into_iter()
        .filter(|name| name.ends_with(".partial"))
        .collect();
    assert_eq!(
        partials,
        vec![".devtools-mcp-fedcba9876543210.partial".to_string()],
        "left by the kills: {left:?}"
    );
    let target = root.path().join("after.png");
    let saved = server
        .call(
            "take_screenshot",
            json!({ "filePath": target.display().to_string() }),
        )
        .await;
    assert!(!saved.is_error, "{}", saved.text);
    assert!(whole_png(&std::fs::read(&target).expect("saved")));
    server.shutdown().await;
}

/// A server started with `args`, its page on `url`.
async fn started_on(args: &[String], url: &str) -> McpServer {
    let server = McpServer::start_with(args.to_vec(), Vec::new())
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    server.call("navigate_page", json!({ "url": url })).await;
    server
}

/// Sets `path`'s modification time `age` in the past.
fn age(path: &Path, age: Duration) {
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open to age");
    let when = std::time::SystemTime::now() - age;
    file.set_modified(when).expect("set the modification time");
}
