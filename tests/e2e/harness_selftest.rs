//! Tests of the harness itself, runnable without the server, so a broken harness is told
//! apart from a broken server.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::support::{self, FixtureServer, Route};

/// Sends `request` verbatim and returns the whole answer (the server closes the connection).
fn raw_request(server: &FixtureServer, request: &str) -> String {
    let mut stream =
        TcpStream::connect(("127.0.0.1", server.port())).expect("connect to fixture server");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("set read timeout");
    stream.write_all(request.as_bytes()).expect("send request");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read answer");
    answer
}

fn get(server: &FixtureServer, path: &str) -> String {
    raw_request(
        server,
        &format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n"),
    )
}

fn fixtures() -> FixtureServer {
    FixtureServer::start(vec![
        Route::html("/page.html", "<title>Fixture</title><p>hello</p>"),
        Route::new("/data.json", "application/json", r#"{"ok":true}"#),
    ])
}

#[tokio::test]
async fn fixture_server_serves_routes() {
    let server = fixtures();
    let answer = get(&server, "/page.html?cache=bust");
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(
        answer.contains("Content-Type: text/html; charset=utf-8\r\n"),
        "{answer}"
    );
    assert!(answer.contains("Content-Length: 34\r\n"), "{answer}");
    assert!(answer.contains("Connection: close\r\n"), "{answer}");
    assert!(
        answer.ends_with("\r\n\r\n<title>Fixture</title><p>hello</p>"),
        "{answer}"
    );

    let json = get(&server, "/data.json");
    assert!(
        json.contains("Content-Type: application/json\r\n"),
        "{json}"
    );
    assert!(json.ends_with(r#"{"ok":true}"#), "{json}");
    assert_eq!(
        server.requests(),
        ["GET /page.html?cache=bust", "GET /data.json"]
    );
}

#[tokio::test]
async fn fixture_server_404s_unknown_paths_and_answers_head() {
    let server = fixtures();
    let missing = get(&server, "/missing.html");
    assert!(
        missing.starts_with("HTTP/1.1 404 Not Found\r\n"),
        "{missing}"
    );

    let head = raw_request(&server, "HEAD /page.html HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert!(head.contains("Content-Length: 34\r\n"), "{head}");
    assert!(
        head.ends_with("\r\n\r\n"),
        "HEAD must not carry a body: {head}"
    );
}

#[tokio::test]
async fn fixture_server_survives_bad_requests() {
    let server = fixtures();
    assert!(raw_request(&server, "garbage\r\n\r\n").starts_with("HTTP/1.1 400 "));
    assert!(raw_request(&server, "POST /page.html HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405 "));
    // A client that connects and hangs up without a request.
    drop(TcpStream::connect(("127.0.0.1", server.port())).expect("connect"));
    assert!(get(&server, "/page.html").starts_with("HTTP/1.1 200 OK\r\n"));
}

#[tokio::test]
async fn fixture_server_routes_extras_and_stops_when_dropped() {
    let server = FixtureServer::start(vec![
        Route::html("/gone", "moved")
            .with_status(301)
            .with_header("Location", "/page.html"),
    ]);
    let answer = get(&server, "/gone");
    assert!(
        answer.starts_with("HTTP/1.1 301 Moved Permanently\r\n"),
        "{answer}"
    );
    assert!(answer.contains("Location: /page.html\r\n"), "{answer}");

    let port = server.port();
    assert_eq!(
        server.url("/a?b=1"),
        format!("http://127.0.0.1:{port}/a?b=1")
    );
    assert_eq!(server.url("a"), format!("http://127.0.0.1:{port}/a"));
    drop(server);
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the port must be closed once the server is dropped"
    );
}

#[tokio::test]
async fn normalize_hides_the_fixture_port() {
    let server = fixtures();
    let text = format!("loaded {} and {}", server.url("/a"), server.url("/b"));
    assert_eq!(
        support::normalize(&text, &server),
        "loaded http://127.0.0.1:PORT/a and http://127.0.0.1:PORT/b"
    );
    assert_eq!(support::normalize("127.0.0.1:1", &server), "127.0.0.1:1");
}

#[tokio::test]
async fn descendants_include_a_spawned_child() {
    let mut child = crate::support::command("sleep")
        .arg("5")
        .spawn()
        .expect("spawn sleep");
    let pid = child.id();
    let found = support::descendants(std::process::id());
    assert!(found.contains(&pid), "{pid} not among {found:?}");
    assert!(support::is_alive(pid));

    child.kill().expect("kill sleep");
    child.wait().expect("reap sleep");
    assert!(!support::descendants(std::process::id()).contains(&pid));
    assert!(
        support::wait_until_gone(&[pid], Duration::from_secs(5))
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn kill_tree_kills_grandchildren() {
    let mut shell = crate::support::command("sh")
        .args(["-c", "sleep 30 & wait"])
        .spawn()
        .expect("spawn sh");
    let shell_pid = shell.id();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let grandchildren = loop {
        let found = support::descendants(shell_pid);
        if !found.is_empty() || std::time::Instant::now() > deadline {
            break found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        grandchildren.len(),
        1,
        "expected the sleep under sh: {grandchildren:?}"
    );

    support::kill_tree(shell_pid);
    shell.wait().expect("reap sh");
    let survivors = support::wait_until_gone(&grandchildren, Duration::from_secs(5)).await;
    assert!(survivors.is_empty(), "still alive: {survivors:?}");
}

/// Every process a test starts goes through `support::command` (or `tokio_command`), which
/// gives it the servers' private temp dir: a server started by a test directly, by the
/// one-shot CLI, the Inspector, the Python client or a shell refuses no cache then, wherever
/// the clone is. A `Command::new` written anywhere else in the tests would bypass it.
#[test]
fn tests_start_processes_only_through_the_harness() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/e2e");
    let mut files = vec![];
    for dir in [folder.clone(), folder.join("support")] {
        for entry in std::fs::read_dir(&dir).expect("read the tests folder") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|ext| ext == "rs") {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 30, "{files:?}");
    let needle = ["Command", "::new("].concat();
    let offenders: Vec<String> = files
        .iter()
        .filter(|path| !path.ends_with("support/process.rs"))
        .filter(|path| {
            std::fs::read_to_string(path)
                .expect("read a test file")
                .contains(&needle)
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "start processes with crate::support::command or tokio_command: {offenders:?}"
    );
    let env = support::command("true");
    let tmpdir = env
        .get_envs()
        .find(|(name, _)| *name == "TMPDIR")
        .and_then(|(_, value)| value);
    assert_eq!(tmpdir, Some(support::server_temp_dir().as_os_str()));
}
