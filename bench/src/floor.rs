//! The browser's own floor: the scenario's browser work sent straight to Chromium over its
//! DevTools pipe (`--remote-debugging-pipe=cbor`, fds 3 and 4: the browser's fastest wire, on
//! which it sends its replies without converting them to JSON), with no MCP server in between
//! and nothing but the commands each step needs. A server can only be slower than this, so a
//! goal below `floor / reference` cannot be met by any server driving this Chromium.
//!
//! The steps follow the scenario (same fixture pages, same order, same think time before the
//! first page): the first page is the target created and loaded after the think time with the
//! browser started at "initialize"; navigate is `Page.navigate` until `load`; a snapshot is
//! `Accessibility.getFullAXTree` read whole; the click is a script (untimed); a fill is one
//! round trip that clears and focuses the field, then Puppeteer's key events for each character,
//! all sent at once and each answered (as the servers type; no wait for a frame after them);
//! the screenshot is the servers' exact `Page.captureScreenshot` right after that, and again
//! after the scenario's idle pause; the fetch step is from `Page.navigate` until the fetched
//! text is in the document; each real page is `Page.navigate` until `load` (untimed), then
//! its `Accessibility.getFullAXTree`.

use std::io::{BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use command_fds::{CommandFdExt, FdMapping};
use serde_json::{Value, json};

use crate::scenario::{
    FETCH_WAIT, FILL, IDLE, NAVIGATE, NEW_PAGE, SCREENSHOT, SCREENSHOT_IDLE, SNAPSHOT_BIG,
    SNAPSHOT_SMALL, STEPS,
};

/// One run: the browser's time for each step it has a counterpart of.
pub struct Floor {
    pub times: [Option<Duration>; STEPS.len()],
    /// `getFullAXTree` of each real page given to [`run`], after its `load`.
    pub real: Vec<Duration>,
    /// The 4,000-element page's `getFullAXTree` reply, as a whole message: `--dump` saves
    /// it, for the snapshot engine's own probe (`devtools-snapshot`'s `engine` example).
    pub big_tree: Option<String>,
}

/// Puppeteer 24's default flags, the very file the server launches Chromium with.
#[path = "../../host/src/browser/cdp/launch/puppeteer.rs"]
mod puppeteer;

/// The flags both servers give their Chromium: Puppeteer 24's defaults, as chrome-devtools-mcp
/// 1.11.0 launches it and devtools-mcp does too (no throttling of background renderers and
/// timers, no first-run or background work), headless with the screen size that sets the
/// screenshot's size, and the pipe.
fn flags(profile: &Path) -> Vec<String> {
    let features = [
        format!(
            "--disable-features={}",
            puppeteer::DISABLED_FEATURES.join(",")
        ),
        format!(
            "--enable-features={}",
            puppeteer::ENABLED_FEATURES.join(",")
        ),
    ];
    ["--no-sandbox", "--remote-debugging-pipe=cbor"]
        .into_iter()
        .chain(puppeteer::ARGS)
        .map(String::from)
        .chain(features)
        .chain(
            puppeteer::HEADLESS_ARGS
                .into_iter()
                .chain([
                    "--disable-extensions",
                    "--disable-component-update",
                    "--screen-info={3840x2160}",
                ])
                .map(String::from),
        )
        .chain([format!("--user-data-dir={}", profile.display())])
        .chain(["about:blank".to_owned()])
        .collect()
}

/// Runs the floor scenario once with a fresh browser (blocking: call from a blocking task).
/// `base` is the fixture server's address (`http://127.0.0.1:<port>`).
/// With `keep_big_tree`, the big page's AX tree reply is kept whole (for `--dump`).
pub fn run(
    chromium: &Path,
    base: &str,
    think: Duration,
    timeout: Duration,
    keep_big_tree: bool,
    real_paths: &[String],
) -> Result<Floor, String> {
    let profile = tempfile::Builder::new()
        .prefix("devtools-mcp-bench-floor-")
        .tempdir()
        .map_err(|e| format!("cannot create a profile folder: {e}"))?;
    let started = Instant::now();
    let mut browser = Browser::launch(chromium, &flags(profile.path()), timeout, keep_big_tree)?;
    let outcome = steps(&mut browser, base, started, think, real_paths);
    browser.close();
    outcome
}

fn steps(
    b: &mut Browser,
    base: &str,
    started: Instant,
    think: Duration,
    real_paths: &[String],
) -> Result<Floor, String> {
    let url = |path: &str| format!("{base}{path}");
    let mut times = [None; STEPS.len()];
    b.call(None, "Browser.getVersion", json!({}))?;
    // The browser starts while the client initializes; the first call comes after the think.
    std::thread::sleep(think.saturating_sub(started.elapsed()));
    let clock = Instant::now();
    let target = b.call(None, "Target.createTarget", json!({ "url": "about:blank" }))?;
    let target_id = target["targetId"].as_str().unwrap_or_default().to_owned();
    let attached = b.call(
        None,
        "Target.attachToTarget",
        json!({ "targetId": target_id, "flatten": true }),
    )?;
    let session = attached["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let s = Some(session.as_str());
    b.call(s, "Page.enable", json!({}))?;
    b.navigate(s, &url("/start.html"))?;
    times[NEW_PAGE] = Some(clock.elapsed());

    let clock = Instant::now();
    b.navigate(s, &url("/small.html"))?;
    times[NAVIGATE] = Some(clock.elapsed());
    times[SNAPSHOT_SMALL] = Some(b.timed(s, "Accessibility.getFullAXTree", json!({}))?);

    b.call(s, "Runtime.evaluate", json!({ "expression": CLICK }))?;
    let clock = Instant::now();
    b.call(s, "Runtime.evaluate", json!({ "expression": PREPARE_FILL }))?;
    let keys: Vec<u64> = FILLED
        .chars()
        .flat_map(key_events)
        .map(|event| b.send(s, "Input.dispatchKeyEvent", event))
        .collect::<Result<_, _>>()?;
    b.replies(&keys, "Input.dispatchKeyEvent")?;
    times[FILL] = Some(clock.elapsed());
    let capture = json!({ "format": "png", "optimizeForSpeed": true, "fromSurface": true,
                          "captureBeyondViewport": false });
    times[SCREENSHOT] = Some(b.timed(s, "Page.captureScreenshot", capture.clone())?);
    std::thread::sleep(IDLE);
    times[SCREENSHOT_IDLE] = Some(b.timed(s, "Page.captureScreenshot", capture)?);

    let clock = Instant::now();
    b.navigate(s, &url("/fetch.html"))?;
    let loaded = "new Promise(done => { \
        const seen = () => document.body && document.body.innerText.includes('Data loaded'); \
        if (seen()) return done(true); \
        new MutationObserver((_, o) => { if (seen()) { o.disconnect(); done(true); } }) \
          .observe(document, { subtree: true, childList: true, characterData: true }); })";
    let params = json!({ "expression": loaded, "awaitPromise": true });
    b.call(s, "Runtime.evaluate", params)?;
    times[FETCH_WAIT] = Some(clock.elapsed());

    b.navigate(s, &url("/big.html"))?;
    let clock = Instant::now();
    let tree = b.call_message(s, "Accessibility.getFullAXTree", json!({}))?;
    times[SNAPSHOT_BIG] = Some(clock.elapsed());
    let big_tree = tree["rawText"].as_str().map(str::to_owned);
    let mut real = Vec::new();
    for path in real_paths {
        b.navigate(s, &url(path))?;
        real.push(b.timed(s, "Accessibility.getFullAXTree", json!({}))?);
    }
    Ok(Floor {
        times,
        real,
        big_tree,
    })
}

/// The scenario's click, by script: the floor times no click.
const CLICK: &str = "document.getElementById('go').click()";
/// What the scenario's fill types into the text box.
const FILLED: &str = "Ada Lovelace";
/// The fill's one round trip before its keys, as the servers' (clear the field, focus it).
const PREPARE_FILL: &str =
    "(() => { const field = document.getElementById('name'); field.value = ''; field.focus(); })()";

/// The two events a character of the scenario's text is typed with: Puppeteer's key down (with
/// its text) and key up, from its US layout, for letters and the space.
fn key_events(ch: char) -> [Value; 2] {
    let (code, key_code) = match ch {
        ' ' => ("Space".to_owned(), 32),
        _ => (
            format!("Key{}", ch.to_ascii_uppercase()),
            ch.to_ascii_uppercase() as u32,
        ),
    };
    let key = ch.to_string();
    [
        json!({ "type": "keyDown", "modifiers": 0, "windowsVirtualKeyCode": key_code, "code": code,
                "key": key, "text": key, "unmodifiedText": key, "autoRepeat": false,
                "location": 0, "isKeypad": false }),
        json!({ "type": "keyUp", "modifiers": 0, "key": key, "windowsVirtualKeyCode": key_code,
                "code": code, "location": 0 }),
    ]
}

/// Replies bigger than this keep only their envelope: the steps never read a big result, and
/// parsing megabytes here would be counted as the browser's time.
const WHOLE_MESSAGE_LIMIT: usize = 64 << 10;

/// One message (CBOR, converted to JSON as a server would): whole when small, else its `id`
/// alone (a big message is a reply), plus, with `keep_big`, its JSON text as `rawText`.
fn read_message(frame: Vec<u8>, keep_big: bool) -> Option<Value> {
    if frame.len() <= WHOLE_MESSAGE_LIMIT {
        return serde_json::from_slice(&devtools_cbor::to_json(&frame).ok()?).ok();
    }
    let mut message = serde_json::Map::new();
    if let Some(id) = devtools_cbor::reply_id(&frame) {
        message.insert("id".to_owned(), Value::from(id));
    } else {
        return serde_json::from_slice(&devtools_cbor::to_json(&frame).ok()?).ok();
    }
    if keep_big {
        let text = String::from_utf8(devtools_cbor::to_json(&frame).ok()?).ok()?;
        message.insert("rawText".to_owned(), Value::String(text));
    }
    Some(Value::Object(message))
}

/// The next whole message on the pipe: an envelope's header, then what it announces.
fn next_frame(reader: &mut impl Read) -> Option<Vec<u8>> {
    let mut header = [0u8; devtools_cbor::HEADER_LEN];
    reader.read_exact(&mut header).ok()?;
    let len = devtools_cbor::content_len(&header).ok()?;
    let mut frame = header.to_vec();
    frame.resize(devtools_cbor::HEADER_LEN + len, 0);
    reader
        .read_exact(&mut frame[devtools_cbor::HEADER_LEN..])
        .ok()?;
    Some(frame)
}

/// A Chromium driven over its DevTools pipe: commands out, replies and events in (a reader
/// thread splits the messages).
struct Browser {
    child: Child,
    to_browser: std::fs::File,
    messages: Receiver<Value>,
    /// Events read while waiting for a reply, for `wait_event`.
    events: Vec<Value>,
    next_id: u64,
    timeout: Duration,
}

impl Browser {
    /// `keep_big`: big replies keep their whole text as `rawText` (see [`read_message`]).
    fn launch(
        chromium: &Path,
        args: &[String],
        timeout: Duration,
        keep_big: bool,
    ) -> Result<Browser, String> {
        let (browser_reads, we_write) = std::io::pipe().map_err(|e| e.to_string())?;
        let (we_read, browser_writes) = std::io::pipe().map_err(|e| e.to_string())?;
        let mut command = Command::new(chromium);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
            .fd_mappings(vec![
                FdMapping {
                    parent_fd: OwnedFd::from(browser_reads),
                    child_fd: 3,
                },
                FdMapping {
                    parent_fd: OwnedFd::from(browser_writes),
                    child_fd: 4,
                },
            ])
            .map_err(|e| e.to_string())?;
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", chromium.display()))?;
        // Only the child holds its ends now: a dead browser reads as end-of-file.
        drop(command);
        let (sender, messages) = channel();
        let mut reader = BufReader::new(std::fs::File::from(OwnedFd::from(we_read)));
        std::thread::spawn(move || {
            while let Some(frame) = next_frame(&mut reader) {
                let Some(message) = read_message(frame, keep_big) else {
                    continue;
                };
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        Ok(Browser {
            child,
            to_browser: std::fs::File::from(OwnedFd::from(we_write)),
            messages,
            events: Vec::new(),
            next_id: 0,
            timeout,
        })
    }

    /// Writes one command; its id.
    fn send(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<u64, String> {
        self.next_id += 1;
        let mut message = json!({ "id": self.next_id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = session.into();
        }
        let bytes = devtools_cbor::from_json(&message).map_err(|e| e.to_string())?;
        self.to_browser
            .write_all(&bytes)
            .map_err(|e| format!("the browser's pipe is closed: {e}"))?;
        Ok(self.next_id)
    }

    /// Sends one command and waits for its answer; a protocol error is `Err`.
    fn call(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        self.call_message(session, method, params)
            .map(|mut message| message["result"].take())
    }

    /// [`Browser::call`], answering with the whole reply message.
    fn call_message(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        let id = self.send(session, method, params)?;
        loop {
            let message = self.next_message(method)?;
            if message["id"].as_u64() == Some(id) {
                if let Some(error) = message.get("error") {
                    return Err(format!("{method}: {error}"));
                }
                return Ok(message);
            }
            if message.get("method").is_some() {
                self.events.push(message);
            }
        }
    }

    /// Waits for the answers to commands already sent, in any order; a protocol error is `Err`.
    fn replies(&mut self, ids: &[u64], method: &str) -> Result<(), String> {
        let mut left: std::collections::HashSet<u64> = ids.iter().copied().collect();
        while !left.is_empty() {
            let message = self.next_message(method)?;
            match message["id"].as_u64() {
                Some(id) if left.remove(&id) => {
                    if let Some(error) = message.get("error") {
                        return Err(format!("{method}: {error}"));
                    }
                }
                _ if message.get("method").is_some() => self.events.push(message),
                _ => {}
            }
        }
        Ok(())
    }

    /// `call`, timed from sending to the whole reply read.
    fn timed(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Duration, String> {
        let clock = Instant::now();
        self.call(session, method, params)?;
        Ok(clock.elapsed())
    }

    /// `Page.navigate` to `url`, then the session's next `Page.loadEventFired`.
    fn navigate(&mut self, session: Option<&str>, url: &str) -> Result<(), String> {
        self.events.clear();
        let answer = self.call(session, "Page.navigate", json!({ "url": url }))?;
        if let Some(error) = answer["errorText"].as_str().filter(|e| !e.is_empty()) {
            return Err(format!("navigating to {url}: {error}"));
        }
        self.wait_event(session, "Page.loadEventFired")
    }

    fn wait_event(&mut self, session: Option<&str>, method: &str) -> Result<(), String> {
        let matches =
            |m: &Value| m["method"].as_str() == Some(method) && m["sessionId"].as_str() == session;
        if let Some(at) = self.events.iter().position(matches) {
            self.events.drain(..=at);
            return Ok(());
        }
        loop {
            let message = self.next_message(method)?;
            if matches(&message) {
                self.events.clear();
                return Ok(());
            }
        }
    }

    fn next_message(&mut self, waiting_for: &str) -> Result<Value, String> {
        match self.messages.recv_timeout(self.timeout) {
            Ok(message) => Ok(message),
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "the browser did not answer {waiting_for} within {} s",
                self.timeout.as_secs()
            )),
            Err(RecvTimeoutError::Disconnected) => Err("the browser closed its pipe".to_owned()),
        }
    }

    fn close(mut self) {
        let _closed = self.send(None, "Browser.close", json!({}));
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _killed = self.child.kill();
        let _reaped = self.child.wait();
    }
}
