//! A tiny HTTP/1.1 server for fixture pages, bound to loopback only.
//!
//! It runs on plain std threads rather than a tokio task so that it keeps serving while a
//! `#[tokio::test]` (a current-thread runtime) blocks, and so that tests can talk to it with
//! blocking `std::net` sockets.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Requests larger than this are answered with 431 rather than buffered without bound.
const MAX_HEAD: usize = 64 * 1024;
/// Chromium opens speculative connections that may never send a request; they are dropped
/// after this long so that their threads end.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);

/// One fixture: a path (without query string) and what to answer for it.
#[derive(Clone, Debug)]
pub struct Route {
    path: String,
    content_type: String,
    body: Vec<u8>,
    status: u16,
    headers: Vec<(String, String)>,
    delay: Duration,
    /// A page that greets whoever the request's cookie of this name says is signed in.
    greets_cookie: Option<String>,
}

impl Route {
    /// A `200 OK` answer with the given content type and body.
    pub fn new(path: &str, content_type: &str, body: impl Into<Vec<u8>>) -> Route {
        Route {
            path: path.to_owned(),
            content_type: content_type.to_owned(),
            body: body.into(),
            status: 200,
            headers: Vec::new(),
            delay: Duration::ZERO,
            greets_cookie: None,
        }
    }

    /// A page that says `logged in as VALUE` when the request carries the cookie `name`
    /// (the server sees it, so an HttpOnly one counts), and `not logged in` otherwise.
    pub fn account(path: &str, name: &str) -> Route {
        let mut route = Route::html(path, "");
        route.greets_cookie = Some(name.to_owned());
        route
    }

    /// An HTML page, the most common fixture.
    pub fn html(path: &str, body: impl Into<Vec<u8>>) -> Route {
        Route::new(path, "text/html; charset=utf-8", body)
    }

    /// Answers with another status code (e.g. to test how failed requests are reported).
    pub fn with_status(mut self, status: u16) -> Route {
        self.status = status;
        self
    }

    /// Adds a response header (e.g. `Location`, `Set-Cookie`).
    pub fn with_header(mut self, name: &str, value: &str) -> Route {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Waits this long before answering, for tests of slow loads and timeouts.
    pub fn with_delay(mut self, delay: Duration) -> Route {
        self.delay = delay;
        self
    }
}

/// State shared between the accept thread, connection threads and the handle.
struct Shared {
    routes: HashMap<String, Route>,
    /// `"GET /path?query"` for every request line received, so tests can check what loaded.
    requests: Mutex<Vec<String>>,
    stop: AtomicBool,
}

/// Serves fixed routes on `127.0.0.1:<ephemeral port>` until dropped.
pub struct FixtureServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept_thread: Option<JoinHandle<()>>,
}

impl FixtureServer {
    /// Binds a loopback port and starts serving `routes` on a background thread.
    pub fn start(routes: Vec<Route>) -> FixtureServer {
        FixtureServer::start_at([127, 0, 0, 1], routes)
    }

    /// Serves on another loopback address (`127.0.0.2` is another site than `127.0.0.1`, so
    /// the browser puts its frames in a process of their own).
    pub fn start_at(ip: [u8; 4], routes: Vec<Route>) -> FixtureServer {
        assert_eq!(ip[0], 127, "fixtures are served on loopback only");
        let listener = TcpListener::bind((std::net::Ipv4Addr::from(ip), 0))
            .expect("bind fixture server on a loopback address");
        let addr = listener.local_addr().expect("fixture server local address");
        let shared = Arc::new(Shared {
            routes: routes.into_iter().map(|r| (r.path.clone(), r)).collect(),
            requests: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let accept_shared = Arc::clone(&shared);
        let accept_thread = std::thread::Builder::new()
            .name(format!("fixture-server-{}", addr.port()))
            .spawn(move || accept_loop(&listener, &accept_shared))
            .expect("spawn fixture server thread");
        FixtureServer {
            addr,
            shared,
            accept_thread: Some(accept_thread),
        }
    }

    /// `http://127.0.0.1:<port><path>`; a missing leading `/` is added.
    pub fn url(&self, path: &str) -> String {
        let slash = if path.starts_with('/') { "" } else { "/" };
        format!("http://{}{slash}{path}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Request lines received so far, e.g. `"GET /index.html"`, in arrival order.
    pub fn requests(&self) -> Vec<String> {
        match self.shared.requests.lock() {
            Ok(requests) => requests.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl Drop for FixtureServer {
    /// Stops accepting: sets the flag, wakes the blocking `accept` with a connection of our own,
    /// and joins the thread so the port is closed when `drop` returns.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        let woke = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok();
        if let Some(thread) = self.accept_thread.take()
            && woke
        {
            // Without the wake-up connection `accept` could block forever: detach instead.
            let _ = thread.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let shared = Arc::clone(shared);
        // Each connection gets its own thread: Chromium keeps several sockets open at once.
        let _ = std::thread::Builder::new()
            .name("fixture-conn".to_owned())
            .spawn(move || handle_connection(stream, &shared));
    }
}

/// Answers one request and closes the connection; every I/O error just ends it.
fn handle_connection(mut stream: TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(IDLE_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IDLE_TIMEOUT));
    let response = match read_head(&mut stream) {
        Head::Complete(head) => respond(&head, shared),
        Head::TooLarge => Response::plain(431, "request head too large"),
        Head::Closed => return,
    };
    if response.delay > Duration::ZERO {
        std::thread::sleep(response.delay);
    }
    if stream.write_all(&response.bytes).is_err() {
        return;
    }
    let _ = stream.flush();
    // Half-close, then drain what the client still sends (e.g. a body we ignored), so the
    // kernel does not answer it with a RST that could discard our response.
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut sink = [0u8; 4096];
    while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
}

enum Head {
    Complete(String),
    TooLarge,
    Closed,
}

/// Reads up to the blank line that ends the request head.
fn read_head(stream: &mut TcpStream) -> Head {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return Head::Closed,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            head.truncate(end);
            return Head::Complete(String::from_utf8_lossy(&head).into_owned());
        }
        if head.len() > MAX_HEAD {
            return Head::TooLarge;
        }
    }
}

/// A fully rendered response plus how long to wait before sending it.
struct Response {
    bytes: Vec<u8>,
    delay: Duration,
}

impl Response {
    fn plain(status: u16, message: &str) -> Response {
        let route = Route::new("", "text/plain; charset=utf-8", format!("{message}\n"));
        Response::render(&route.with_status(status), true)
    }

    fn render(route: &Route, with_body: bool) -> Response {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
             Cache-Control: no-store\r\nConnection: close\r\n",
            route.status,
            reason(route.status),
            route.content_type,
            route.body.len()
        );
        for (name, value) in &route.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        if with_body {
            bytes.extend_from_slice(&route.body);
        }
        Response {
            bytes,
            delay: route.delay,
        }
    }
}

fn respond(head: &str, shared: &Shared) -> Response {
    let request_line = head.lines().next().unwrap_or_default();
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Response::plain(400, "bad request line");
    };
    if !version.starts_with("HTTP/1.") {
        return Response::plain(505, "only HTTP/1.x is served");
    }
    if let Ok(mut requests) = shared.requests.lock() {
        requests.push(format!("{method} {target}"));
    }
    let is_head = match method {
        "GET" => false,
        "HEAD" => true,
        _ => {
            let route = Route::new("", "text/plain", "only GET and HEAD are served\n")
                .with_status(405)
                .with_header("Allow", "GET, HEAD");
            return Response::render(&route, true);
        }
    };
    let path = target.split(['?', '#']).next().unwrap_or_default();
    match shared.routes.get(path) {
        Some(route) if route.greets_cookie.is_some() => {
            let name = route.greets_cookie.as_deref().unwrap_or_default();
            let body = match cookie(head, name) {
                Some(value) => {
                    format!("<!doctype html><title>Account</title><p>logged in as {value}</p>")
                }
                None => "<!doctype html><title>Account</title><p>not logged in</p>".to_owned(),
            };
            let mut greeting = route.clone();
            greeting.body = body.into_bytes();
            Response::render(&greeting, !is_head)
        }
        Some(route) => Response::render(route, !is_head),
        None => {
            let not_found =
                Route::new("", "text/plain; charset=utf-8", "not found\n").with_status(404);
            Response::render(&not_found, !is_head)
        }
    }
}

/// The value of the request's cookie `name`, if it sent one.
fn cookie(head: &str, name: &str) -> Option<String> {
    head.lines()
        .filter_map(|line| {
            let (header, value) = line.split_once(':')?;
            header.eq_ignore_ascii_case("cookie").then_some(value)
        })
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_owned())
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Status",
    }
}
