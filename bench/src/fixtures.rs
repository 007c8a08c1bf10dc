//! The pages the scenario loads, served over HTTP/1.1 on `127.0.0.1:<ephemeral port>`.
//!
//! Plain std threads rather than tokio tasks, so that serving never competes with the MCP
//! client's runtime for a worker and a slow page load cannot be an artifact of the bench.
//! The listener is bound to loopback only: nothing outside the machine can reach it.

use std::borrow::Cow;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Rows of the large table: a `<tr>` and three `<td>` each make 4,000 elements.
pub const BIG_TABLE_ROWS: usize = 1000;
/// Chromium opens speculative connections that may never send a request; their threads end
/// after this long.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// A request head larger than this is dropped rather than buffered without bound.
const MAX_HEAD: usize = 64 * 1024;

/// The page `new_page` opens: as small as a page gets, so the step is dominated by the
/// browser launch and target creation, not by loading.
const START_PAGE: &str = "<!doctype html><title>Start</title><p>Start page</p>";

/// The page of the small snapshot, click, fill, evaluate and screenshot steps: one of each
/// kind of node an agent typically acts on.
const SMALL_PAGE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Small form</title></head>
<body>
<h1>Benchmark form</h1>
<p>A page with a heading, a link, a text box and a button.</p>
<a href="/start.html">Back to start</a>
<label>Name <input id="name" type="text"></label>
<button id="go" onclick="document.getElementById('out').textContent = 'Clicked'">Go</button>
<p id="out">Not clicked</p>
</body></html>"#;

/// The page of the fetch-then-wait_for step: on load it fetches `/slow` (answered after
/// [`SLOW_RESPONSE`]) and then writes the answer into the document.
const FETCH_PAGE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Fetch</title></head>
<body>
<h1>Loading data</h1>
<script>
fetch('/slow').then(r => r.text()).then(t => {
  const p = document.createElement('p');
  p.textContent = 'Data loaded: ' + t;
  document.body.append(p);
});
</script>
</body></html>"#;

/// How long `/slow` takes to answer: a typical API call.
pub const SLOW_RESPONSE: Duration = Duration::from_millis(300);

/// `/big.html`: a 1000-row, three-column table (4,000 elements) written out in the HTML, so
/// both servers snapshot exactly the same static document.
pub fn big_page() -> String {
    let mut html = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Big table</title></head>\n<body>\n<table>\n",
    );
    for row in 0..BIG_TABLE_ROWS {
        html.push_str(&format!(
            "<tr><td>Row {row}</td><td>Item {}</td><td>{}</td></tr>\n",
            row * 7 % 1000,
            row * 13
        ));
    }
    html.push_str("</table>\n</body></html>\n");
    html
}

/// Rows of `/packages.html`.
pub const PACKAGES: usize = 500;

/// A package row's cells: name, version, license, weekly downloads.
pub fn package_row(index: usize) -> [String; 4] {
    const LICENSES: [&str; 4] = ["MIT", "Apache-2.0", "BSD-3-Clause", "MPL-2.0"];
    [
        format!("pkg-{index}"),
        format!("{}.{}.{}", index % 5, index * 7 % 31, index * 13 % 17),
        LICENSES[index % LICENSES.len()].to_owned(),
        (index * 7919 % 100_000).to_string(),
    ]
}

/// `/packages.html`: a data table (header cells, so Chromium exposes table, rows and cells),
/// [`PACKAGES`] rows of [`package_row`], for the agent task that finds one row.
fn packages_page() -> String {
    let mut html = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Packages</title></head>\n<body>\n<h1>Packages</h1>\n<table>\n\
         <thead><tr><th>Package</th><th>Version</th><th>License</th><th>Weekly downloads</th></tr></thead>\n<tbody>\n",
    );
    for index in 0..PACKAGES {
        let cells = package_row(index);
        html.push_str("<tr>");
        for cell in cells {
            html.push_str(&format!("<td>{cell}</td>"));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table>\n</body></html>\n");
    html
}

/// Serves `/start.html`, `/packages.html`, `/small.html`, `/fetch.html` (+ `/slow`) and `/big.html` until
/// dropped.
pub struct FixtureServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept_thread: Option<JoinHandle<()>>,
}

impl FixtureServer {
    pub fn start() -> std::io::Result<FixtureServer> {
        FixtureServer::start_with(Vec::new())
    }

    /// [`FixtureServer::start`], also serving each folder of `mounts` under its prefix
    /// (`/docs/rust/` → a folder): the real pages and everything they load.
    pub fn start_with(mounts: Vec<(String, PathBuf)>) -> std::io::Result<FixtureServer> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let site = Arc::new(Site {
            pages: vec![
                ("/start.html", START_PAGE.to_owned()),
                ("/small.html", SMALL_PAGE.to_owned()),
                ("/big.html", big_page()),
                ("/fetch.html", FETCH_PAGE.to_owned()),
                ("/packages.html", packages_page()),
                ("/slow", "42".to_owned()),
            ],
            mounts,
        });
        let accept_stop = Arc::clone(&stop);
        let accept_thread = std::thread::Builder::new()
            .name("fixture-accept".to_owned())
            .spawn(move || accept_loop(&listener, &accept_stop, &site))?;
        Ok(FixtureServer {
            addr,
            stop,
            accept_thread: Some(accept_thread),
        })
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.addr.port())
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }
}

impl Drop for FixtureServer {
    /// Sets the stop flag and wakes the blocking `accept` with a connection of our own, so the
    /// port is closed when `drop` returns.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let woke = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok();
        if let Some(thread) = self.accept_thread.take()
            && woke
        {
            let _ = thread.join();
        }
    }
}

/// What the server answers: generated pages by exact path, then files under mounted folders.
struct Site {
    pages: Vec<(&'static str, String)>,
    mounts: Vec<(String, PathBuf)>,
}

impl Site {
    /// Status, content type and body for `path`.
    fn answer(&self, path: &str) -> (&'static str, &'static str, Cow<'_, [u8]>) {
        if let Some((_, body)) = self.pages.iter().find(|(p, _)| *p == path) {
            return (
                "200 OK",
                "text/html; charset=utf-8",
                Cow::Borrowed(body.as_bytes()),
            );
        }
        let file = self.mounts.iter().find_map(|(prefix, root)| {
            let rest = path.strip_prefix(prefix.as_str())?;
            mounted_file(root, rest)
        });
        match file.and_then(|file| Some((content_type(&file), std::fs::read(&file).ok()?))) {
            Some((kind, body)) => ("200 OK", kind, Cow::Owned(body)),
            None => (
                "404 Not Found",
                "text/plain; charset=utf-8",
                Cow::Borrowed(b"not found\n"),
            ),
        }
    }
}

/// `root/rest` when `rest` is a plain relative path: no `..`, no empty or dot segments, no
/// escapes (pages link their files by plain names), so a request cannot leave `root`.
fn mounted_file(root: &Path, rest: &str) -> Option<PathBuf> {
    let plain = |segment: &str| {
        !segment.is_empty() && !segment.starts_with('.') && !segment.contains(['%', '\\', '\0'])
    };
    if !rest.split('/').all(plain) {
        return None;
    }
    Some(root.join(rest))
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn accept_loop(listener: &TcpListener, stop: &AtomicBool, site: &Arc<Site>) {
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let site = Arc::clone(site);
        // One thread per connection: Chromium keeps several sockets open at once.
        let _ = std::thread::Builder::new()
            .name("fixture-conn".to_owned())
            .spawn(move || serve(stream, &site));
    }
}

/// Answers one GET and closes the connection; every I/O error just ends it.
fn serve(mut stream: TcpStream, site: &Site) {
    let _ = stream.set_read_timeout(Some(IDLE_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IDLE_TIMEOUT));
    let Some(head) = read_head(&mut stream) else {
        return;
    };
    let target = head.split_whitespace().nth(1).unwrap_or_default();
    let path = target.split(['?', '#']).next().unwrap_or_default();
    if path == "/slow" {
        std::thread::sleep(SLOW_RESPONSE);
    }
    let (status, content_type, body) = site.answer(path);
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if stream.write_all(head.as_bytes()).is_err() || stream.write_all(&body).is_err() {
        return;
    }
    // Half-close and drain, so the kernel does not answer late client bytes with a RST that
    // could discard the response.
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut sink = [0u8; 4096];
    while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
}

/// The request head up to the blank line, or `None` if the peer closed or sent too much.
fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while head.len() <= MAX_HEAD {
        let n = stream.read(&mut buf).ok().filter(|&n| n > 0)?;
        head.extend_from_slice(&buf[..n]);
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            head.truncate(end);
            return Some(String::from_utf8_lossy(&head).into_owned());
        }
    }
    None
}
