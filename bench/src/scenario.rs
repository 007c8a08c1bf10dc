//! The scenario: one fresh server process, driven through the steps an agent's first minute
//! takes, each timed as one MCP round trip seen from the client.
//!
//! Every run starts a new server so that spawn -> initialize and the first `new_page` (which
//! launches the browser) are measured each time, not once.

use std::time::Duration;

use serde_json::json;

use crate::fixtures::FixtureServer;
use crate::server::{Launch, Output, Server};

/// The timed steps, in the order they run and are printed.
pub const STEPS: [&str; 12] = [
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
const FILL: usize = 7;
const EVALUATE: usize = 8;
pub const SCREENSHOT: usize = 9;
pub const FETCH_WAIT: usize = 10;
const UNKNOWN_ARGUMENT: usize = 11;

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
    fixtures: &FixtureServer,
    timeout: Duration,
    index: usize,
    think: Duration,
) -> Result<Run, String> {
    let (mut server, init) = Server::start(launch, timeout, index).await?;
    let mut run = Run {
        times: [Duration::ZERO; STEPS.len()],
        cpu: [Duration::ZERO; STEPS.len()],
        texts: Default::default(),
        peak_rss: None,
        peak_rss_small_pages: None,
        tools_list_bytes: 0,
        tool_count: 0,
        surprises: Vec::new(),
    };
    run.times[INITIALIZE] = init;
    run.cpu[INITIALIZE] = server.cpu_time();
    let outcome = steps(&mut server, fixtures, &mut run, think).await;
    run.peak_rss = server.peak_rss();
    server.shutdown().await;
    outcome.map(|()| run)
}

async fn steps(
    server: &mut Server,
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
    run.tool_count = tools.len();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    run.texts[TOOLS_LIST] = names.join("\n");

    let mut s = Steps {
        server,
        run,
        port: fixtures.port(),
    };
    let url = |path: &str| fixtures.url(path);
    // The agent's first model turn: the first tool call comes this long after the tool list.
    tokio::time::sleep(think).await;
    s.expect_ok(NEW_PAGE, "new_page", json!({ "url": url("/start.html") }))
        .await?;
    let args = json!({ "type": "url", "url": url("/small.html") });
    s.expect_ok(NAVIGATE, "navigate_page", args).await?;
    let snapshot = s
        .expect_ok(SNAPSHOT_SMALL, "take_snapshot", json!({}))
        .await?;
    let uid = |needle: &str| {
        find_uid(&snapshot.text, needle)
            .ok_or_else(|| format!("no {needle} in the small snapshot:\n{}", snapshot.text))
    };
    let (button, textbox) = (uid("button \"Go\"")?, uid("textbox \"Name\"")?);
    s.expect_ok(CLICK, "click", json!({ "uid": button }))
        .await?;
    let args = json!({ "uid": textbox, "value": "Ada Lovelace" });
    s.expect_ok(FILL, "fill", args).await?;
    let function = "() => document.getElementById('out').textContent + ' / ' + \
                    document.getElementById('name').value";
    let args = json!({ "function": function });
    let out = s.step(EVALUATE, "evaluate_script", args).await?;
    if !out.text.contains(EXPECTED_EVALUATION) {
        let line = first_line(&out.text).to_owned();
        s.surprise(format!(
            "evaluate_script did not see the click and the fill: {line}"
        ));
    }
    let out = s
        .expect_ok(SCREENSHOT, "take_screenshot", json!({}))
        .await?;
    if out.images != 1 {
        s.surprise(format!("take_screenshot returned {} images", out.images));
    }

    // A page that fetches data on load, and an agent waiting for it: timed from the
    // navigation to the wait's answer, so it does not matter which of the two waits.
    let args = json!({ "type": "url", "url": url("/fetch.html") });
    let navigated = s.step(FETCH_WAIT, "navigate_page", args).await?;
    let (took, cpu) = (s.run.times[FETCH_WAIT], s.run.cpu[FETCH_WAIT]);
    let args = json!({ "text": ["Data loaded"] });
    let out = s.expect_ok(FETCH_WAIT, "wait_for", args).await?;
    s.run.times[FETCH_WAIT] += took;
    s.run.cpu[FETCH_WAIT] += cpu;
    if navigated.is_error || !out.text.contains("Data loaded: 42") {
        s.surprise(format!(
            "wait_for did not see the fetched data: {}",
            first_line(&out.text)
        ));
    }

    s.run.peak_rss_small_pages = s.server.peak_rss();
    // Loading the big page is setup, not a measured step.
    let args = json!({ "type": "url", "url": url("/big.html") });
    let (out, _) = s.server.call("navigate_page", args).await?;
    if out.is_error {
        let line = first_line(&out.text).to_owned();
        s.surprise(format!("navigate_page (big page) failed: {line}"));
    }
    s.expect_ok(SNAPSHOT_BIG, "take_snapshot", json!({}))
        .await?;
    let args = json!({ "notAParameter": true });
    let out = s.step(UNKNOWN_ARGUMENT, "list_pages", args).await?;
    if !out.is_error {
        s.surprise("list_pages accepted an unknown argument".to_owned());
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
    async fn step(
        &mut self,
        index: usize,
        tool: &str,
        args: serde_json::Value,
    ) -> Result<Output, String> {
        let cpu_before = self.server.cpu_time();
        let (output, took) = self.server.call(tool, args).await?;
        self.run.times[index] = took;
        self.run.cpu[index] = self.server.cpu_time().saturating_sub(cpu_before);
        self.run.texts[index] = normalize(&output.text, self.port);
        Ok(output)
    }

    /// [`Steps::step`], noting a surprise when the tool reports an error (still timed: the
    /// table must show what happened, and the surprise says it was not a success).
    async fn expect_ok(
        &mut self,
        index: usize,
        tool: &str,
        args: serde_json::Value,
    ) -> Result<Output, String> {
        let output = self.step(index, tool, args).await?;
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

/// The uid on the first snapshot line containing `needle` (lines read `uid=1_3 button "Go"`).
fn find_uid(snapshot: &str, needle: &str) -> Option<String> {
    let line = snapshot.lines().find(|l| l.contains(needle))?;
    let start = line.find("uid=")? + "uid=".len();
    let uid: String = line[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    Some(uid)
}

fn first_line(text: &str) -> &str {
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

    #[test]
    fn find_uid_reads_the_first_matching_line() {
        let snapshot = "uid=1_0 RootWebArea\n  uid=1_4 button \"Go\"\n";
        assert_eq!(find_uid(snapshot, "button \"Go\""), Some("1_4".to_owned()));
        assert_eq!(find_uid(snapshot, "textbox"), None);
    }
}
