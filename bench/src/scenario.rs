//! The scenario: one fresh server process, driven through the steps an agent's first minute
//! takes (in the server's own tools, see `dialect.rs`), each timed as one MCP round trip seen
//! from the client, then a full snapshot of each real page.
//!
//! Every run starts a new server so that spawn -> initialize and the first `new_page` (which
//! launches the browser) are measured each time, not once.

use std::time::Duration;

use serde_json::json;

use crate::dialect::{Call, Dialect};
use crate::fixtures::FixtureServer;
use crate::real_pages::RealPage;
use crate::server::{Launch, Output, Server};

/// The timed steps, in the order they run and are printed.
pub const STEPS: [&str; 13] = [
    "spawn -> initialize",
    "tools/list",
    "first new_page (browser launch)",
    "navigate_page",
    "take_snapshot (small page)",
    "take_snapshot (4,000 nodes)",
    "click",
    "fill",
    "evaluate_script",
    "take_screenshot",
    "take_screenshot (page idle)",
    "page fetch, then wait_for",
    "unknown-argument reject",
];
const INITIALIZE: usize = 0;
const TOOLS_LIST: usize = 1;
pub const NEW_PAGE: usize = 2;
pub const NAVIGATE: usize = 3;
pub const SNAPSHOT_SMALL: usize = 4;
pub const SNAPSHOT_BIG: usize = 5;
const CLICK: usize = 6;
pub const FILL: usize = 7;
const EVALUATE: usize = 8;
pub const SCREENSHOT: usize = 9;
pub const SCREENSHOT_IDLE: usize = 10;
pub const FETCH_WAIT: usize = 11;
const UNKNOWN_ARGUMENT: usize = 12;
/// How long the page is left alone before the second screenshot: what it costs once the
/// page has rendered what the click and the fill changed, whatever the server did before.
pub const IDLE: Duration = Duration::from_millis(500);

/// What evaluate_script returns once click and fill have both taken effect.
const EXPECTED_EVALUATION: &str = "Clicked / Ada Lovelace";

/// One run of one server.
pub struct Run {
    /// Round-trip time of each of [`STEPS`].
    pub times: [Duration; STEPS.len()],
    /// CPU time the server process used during each step (its threads, not the browser's).
    pub cpu: [Duration; STEPS.len()],
    /// The normalised text each step answered (tools/list: the tool names), to compare servers.
    pub texts: [String; STEPS.len()],
    /// Bytes of text each step answered: what it puts into the agent's context (tools/list:
    /// the result as compact JSON).
    pub bytes: [usize; STEPS.len()],
    /// Per real page (in the order given to [`run`]): the full snapshot's round trip and its
    /// text bytes.
    pub real: Vec<(Duration, usize)>,
    /// Peak RSS of the server process, read just before shutdown.
    pub peak_rss: Option<u64>,
    /// The same, read before the 4,000-node page is loaded: the big snapshot is what sets
    /// the peak, so this shows what the rest of the scenario needs.
    pub peak_rss_small_pages: Option<u64>,
    /// Bytes of the `tools/list` result as compact JSON, and the number of tools.
    pub tools_list_bytes: usize,
    pub tool_count: usize,
    /// Steps whose answer was not what the scenario expected (still timed).
    pub surprises: Vec<String>,
}

/// Runs the whole scenario on a fresh server; always shuts it down.
pub async fn run(
    launch: &Launch,
    dialect: Dialect,
    fixtures: &FixtureServer,
    timeout: Duration,
    index: usize,
    think: Duration,
    real_pages: &[&RealPage],
) -> Result<Run, String> {
    let (mut server, init) = Server::start(launch, timeout, index).await?;
    let mut run = Run {
        times: [Duration::ZERO; STEPS.len()],
        cpu: [Duration::ZERO; STEPS.len()],
        texts: Default::default(),
        bytes: [0; STEPS.len()],
        real: Vec::new(),
        peak_rss: None,
        peak_rss_small_pages: None,
        tools_list_bytes: 0,
        tool_count: 0,
        surprises: Vec::new(),
    };
    run.times[INITIALIZE] = init;
    run.cpu[INITIALIZE] = server.cpu_time();
    let mut outcome = steps(&mut server, dialect, fixtures, &mut run, think).await;
    if outcome.is_ok() {
        outcome = real(&mut server, dialect, fixtures, &mut run, real_pages).await;
    }
    run.peak_rss = server.peak_rss();
    server.shutdown().await;
    outcome.map(|()| run)
}

async fn steps(
    server: &mut Server,
    dialect: Dialect,
    fixtures: &FixtureServer,
    run: &mut Run,
    think: Duration,
) -> Result<(), String> {
    let cpu_before = server.cpu_time();
    let (tools, took) = server.list_tools().await?;
    run.times[TOOLS_LIST] = took;
    run.cpu[TOOLS_LIST] = server.cpu_time().saturating_sub(cpu_before);
    run.tools_list_bytes = serde_json::to_vec(&json!({ "tools": tools }))
        .map(|bytes| bytes.len())
        .unwrap_or(0);
    run.bytes[TOOLS_LIST] = run.tools_list_bytes;
    run.tool_count = tools.len();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    run.texts[TOOLS_LIST] = names.join("\n");

    let mut s = Steps {
        server,
        run,
        port: fixtures.port(),
    };
    let d = dialect;
    let url = |path: &str| fixtures.url(path);
    // The agent's first model turn: the first tool call comes this long after the tool list.
    tokio::time::sleep(think).await;
    s.expect_ok(NEW_PAGE, d.new_page(&url("/start.html")))
        .await?;
    s.expect_ok(NAVIGATE, d.navigate(&url("/small.html")))
        .await?;
    let snapshot = s.expect_ok(SNAPSHOT_SMALL, d.snapshot()).await?;
    let target = |needle: &str| {
        d.target(&snapshot.text, needle)
            .ok_or_else(|| format!("no {needle} in the small snapshot:\n{}", snapshot.text))
    };
    let (button, textbox) = (target("button \"Go\"")?, target("textbox \"Name\"")?);
    s.expect_ok(CLICK, d.click(&button)).await?;
    s.expect_ok(FILL, d.fill(&textbox, "Ada Lovelace")).await?;
    let function = "() => document.getElementById('out').textContent + ' / ' + \
                    document.getElementById('name').value";
    let out = s.step(EVALUATE, d.evaluate(function)).await?;
    if !out.text.contains(EXPECTED_EVALUATION) {
        let line = first_line(&out.text).to_owned();
        s.surprise(format!(
            "evaluate_script did not see the click and the fill: {line}"
        ));
    }
    for step in [SCREENSHOT, SCREENSHOT_IDLE] {
        if step == SCREENSHOT_IDLE {
            tokio::time::sleep(IDLE).await;
        }
        let out = s.expect_ok(step, d.screenshot()).await?;
        if out.images != 1 {
            s.surprise(format!("{} returned {} images", STEPS[step], out.images));
        }
    }

    // A page that fetches data on load, and an agent waiting for it: timed from the
    // navigation to the wait's answer, so it does not matter which of the two waits.
    let navigated = s.step(FETCH_WAIT, d.navigate(&url("/fetch.html"))).await?;
    let (took, cpu, bytes) = (
        s.run.times[FETCH_WAIT],
        s.run.cpu[FETCH_WAIT],
        s.run.bytes[FETCH_WAIT],
    );
    let out = s.expect_ok(FETCH_WAIT, d.wait_for("Data loaded")).await?;
    s.run.times[FETCH_WAIT] += took;
    s.run.cpu[FETCH_WAIT] += cpu;
    s.run.bytes[FETCH_WAIT] += bytes;
    // chrome-devtools-mcp's tools answer with a snapshot holding the text, Playwright MCP's
    // with a confirmation (its snapshot goes to a file).
    let seen = match d {
        Dialect::DevTools => out.text.contains("Data loaded: 42"),
        Dialect::Playwright => out.text.contains("Waited for Data loaded"),
    };
    if navigated.is_error || !seen {
        s.surprise(format!(
            "wait_for did not see the fetched data: {}",
            first_line(&out.text)
        ));
    }

    s.run.peak_rss_small_pages = s.server.peak_rss();
    // Loading the big page is setup, not a measured step.
    let (tool, args) = d.navigate(&url("/big.html"));
    let (out, _) = s.server.call(tool, args).await?;
    if out.is_error {
        let line = first_line(&out.text).to_owned();
        s.surprise(format!("navigate_page (big page) failed: {line}"));
    }
    s.expect_ok(SNAPSHOT_BIG, d.snapshot()).await?;
    let out = s.step(UNKNOWN_ARGUMENT, d.unknown_argument()).await?;
    if !out.is_error {
        s.surprise("the page listing accepted an unknown argument".to_owned());
    }
    Ok(())
}

/// The real pages: each loaded (untimed), then its full snapshot timed.
async fn real(
    server: &mut Server,
    dialect: Dialect,
    fixtures: &FixtureServer,
    run: &mut Run,
    pages: &[&RealPage],
) -> Result<(), String> {
    for page in pages {
        let (tool, args) = dialect.navigate(&fixtures.url(&format!("{}{}", page.mount, page.path)));
        let (out, _) = server.call(tool, args).await?;
        if out.is_error {
            let line = first_line(&out.text).to_owned();
            run.surprises
                .push(format!("loading {} failed: {line}", page.label));
        }
        let (tool, args) = dialect.snapshot();
        let (out, took) = server.call(tool, args).await?;
        if out.is_error {
            let line = first_line(&out.text).to_owned();
            run.surprises
                .push(format!("snapshot of {} failed: {line}", page.label));
        }
        run.real.push((took, out.text.len()));
    }
    Ok(())
}

/// The timed tool calls of one run.
struct Steps<'a> {
    server: &'a mut Server,
    run: &'a mut Run,
    port: u16,
}

impl Steps<'_> {
    /// Calls `tool` as step `index`: records its round-trip time, the server's CPU time
    /// meanwhile and the normalised text.
    async fn step(&mut self, index: usize, (tool, args): Call) -> Result<Output, String> {
        let cpu_before = self.server.cpu_time();
        let (output, took) = self.server.call(tool, args).await?;
        self.run.times[index] = took;
        self.run.cpu[index] = self.server.cpu_time().saturating_sub(cpu_before);
        self.run.texts[index] = normalize(&output.text, self.port);
        self.run.bytes[index] = output.text.len();
        Ok(output)
    }

    /// [`Steps::step`], noting a surprise when the tool reports an error (still timed: the
    /// table must show what happened, and the surprise says it was not a success).
    async fn expect_ok(&mut self, index: usize, call: Call) -> Result<Output, String> {
        let output = self.step(index, call).await?;
        if output.is_error {
            let line = first_line(&output.text).to_owned();
            self.surprise(format!("{} failed: {line}", STEPS[index]));
        }
        Ok(output)
    }

    fn surprise(&mut self, what: String) {
        self.run.surprises.push(what);
    }
}

pub fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}

/// Makes two servers' answers comparable: the fixture port becomes `PORT`, and the snapshot
/// number in uids (`uid=<snapshot>_<node>`) becomes `S`, since servers may count snapshots
/// differently while the node numbering must still agree.
pub fn normalize(text: &str, port: u16) -> String {
    let text = text.replace(&format!(":{port}"), ":PORT");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("uid=") {
        let (before, after) = rest.split_at(at + "uid=".len());
        out.push_str(before);
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with('_') {
            out.push('S');
            rest = &after[digits..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_hides_ports_and_snapshot_numbers() {
        let text = "uid=12_3 link \"x\" url=\"http://127.0.0.1:4242/a\"\nuid=abc";
        assert_eq!(
            normalize(text, 4242),
            "uid=S_3 link \"x\" url=\"http://127.0.0.1:PORT/a\"\nuid=abc"
        );
    }
}
