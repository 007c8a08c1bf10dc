//! The mixed calls of a long run, ten to a round, as an agent makes them: navigate, snapshot,
//! click, fill, evaluate (which also logs to the console), screenshot, console and network
//! listings, and a page opened in one round and closed in the next.

use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::fixtures::FixtureServer;
use crate::server::flatten;

/// Calls in one round.
pub const CALLS_PER_ROUND: usize = 10;
/// Error answers quoted in the report, at most.
const QUOTED_ERRORS: usize = 5;

/// One client's walk through the rounds: the pages it opened and what went wrong.
pub struct Walker {
    /// Names this walker's URLs, so every navigation of the run is to a new address.
    tag: String,
    first_page: Option<u32>,
    opened: Option<u32>,
    round: usize,
    /// Answer times, in the order the calls were made.
    pub latencies: Vec<Duration>,
    /// Calls answered with `isError` (or a JSON-RPC error), and the first few of them.
    pub errors: usize,
    pub quoted_errors: Vec<String>,
}

impl Walker {
    pub fn new(tag: &str) -> Walker {
        Walker {
            tag: tag.to_owned(),
            first_page: None,
            opened: None,
            round: 0,
            latencies: Vec::new(),
            errors: 0,
            quoted_errors: Vec::new(),
        }
    }

    /// One round of [`CALLS_PER_ROUND`] calls. A timeout or a broken session ends the walk;
    /// an error answer is counted and the round goes on.
    pub async fn round(
        &mut self,
        client: &RunningService<RoleClient, ()>,
        fixtures: &FixtureServer,
        timeout: Duration,
    ) -> Result<(), String> {
        if self.first_page.is_none() {
            let pages = call(client, "list_pages", json!({}), timeout).await?.0;
            self.first_page = Some(selected_page(&pages).ok_or_else(|| {
                format!("list_pages named no selected page at the start:\n{pages}")
            })?);
        }
        let round = self.round;
        self.round += 1;
        let url = fixtures.url(&format!("/small.html?soak={}-{round}", self.tag));
        self.timed(
            client,
            "navigate_page",
            json!({ "type": "url", "url": url }),
            timeout,
        )
        .await?;
        let snapshot = self
            .timed(client, "take_snapshot", json!({}), timeout)
            .await?;
        let button = find_uid(&snapshot, "button \"Go\"");
        let textbox = find_uid(&snapshot, "textbox \"Name\"");
        self.timed(client, "click", json!({ "uid": button }), timeout)
            .await?;
        let value = format!("round {round}");
        self.timed(
            client,
            "fill",
            json!({ "uid": textbox, "value": value }),
            timeout,
        )
        .await?;
        let function = "() => { console.log('soak', location.search); \
            return document.getElementById('out').textContent + ' / ' + \
            document.getElementById('name').value; }";
        self.timed(
            client,
            "evaluate_script",
            json!({ "function": function }),
            timeout,
        )
        .await?;
        self.timed(client, "take_screenshot", json!({}), timeout)
            .await?;
        self.timed(client, "list_console_messages", json!({}), timeout)
            .await?;
        self.timed(client, "list_network_requests", json!({}), timeout)
            .await?;
        match self.opened.take() {
            None => {
                let url = fixtures.url(&format!("/start.html?soak={}-{round}", self.tag));
                let opened = self
                    .timed(client, "new_page", json!({ "url": url }), timeout)
                    .await?;
                self.opened = selected_page(&opened);
                self.timed(client, "list_pages", json!({}), timeout).await?;
            }
            Some(page) => {
                self.timed(client, "close_page", json!({ "pageId": page }), timeout)
                    .await?;
                let first = self.first_page.unwrap_or(1);
                self.timed(client, "select_page", json!({ "pageId": first }), timeout)
                    .await?;
            }
        }
        Ok(())
    }

    /// Whether the walker is between rounds with only its first page open.
    pub fn is_settled(&self) -> bool {
        self.opened.is_none()
    }

    async fn timed(
        &mut self,
        client: &RunningService<RoleClient, ()>,
        tool: &str,
        arguments: Value,
        timeout: Duration,
    ) -> Result<String, String> {
        let (text, is_error, took) = call(client, tool, arguments, timeout).await?;
        self.latencies.push(took);
        if is_error {
            self.errors += 1;
            if self.quoted_errors.len() < QUOTED_ERRORS {
                let first = text.lines().next().unwrap_or_default();
                self.quoted_errors.push(format!("{tool}: {first}"));
            }
        }
        Ok(text)
    }
}

/// One `tools/call`: the answer's text, whether it is an error, and the round trip.
async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    arguments: Value,
    timeout: Duration,
) -> Result<(String, bool, Duration), String> {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let Value::Object(map) = arguments {
        params = params.with_arguments(map);
    }
    let started = Instant::now();
    let answer = tokio::time::timeout(timeout, client.call_tool(params)).await;
    let took = started.elapsed();
    match answer {
        Ok(Ok(result)) => {
            let output = flatten(result);
            Ok((output.text, output.is_error, took))
        }
        Ok(Err(rmcp::service::ServiceError::McpError(error))) => {
            Ok((format!("<protocol error> {}", error.message), true, took))
        }
        Ok(Err(error)) => Err(format!("{tool} failed: {error}")),
        Err(_) => Err(format!("{tool} got no answer in {} s", timeout.as_secs())),
    }
}

/// The id on the `## Pages` line marked `[selected]` (lines read `2: http://... [selected]`).
fn selected_page(text: &str) -> Option<u32> {
    text.lines()
        .find(|line| line.trim_end().ends_with("[selected]"))?
        .split(':')
        .next()?
        .trim()
        .parse()
        .ok()
}

/// The uid on the first snapshot line containing `needle`, or a uid no page has (the call is
/// then an error answer, counted as one).
fn find_uid(snapshot: &str, needle: &str) -> String {
    snapshot
        .lines()
        .find(|line| line.contains(needle))
        .and_then(|line| {
            let start = line.find("uid=")? + "uid=".len();
            Some(
                line[start..]
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .collect(),
            )
        })
        .unwrap_or_else(|| "missing".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selected_page_and_uids_are_read_from_answers() {
        let pages = "## Pages\n1: http://127.0.0.1:9/small.html\n2: http://127.0.0.1:9/start.html [selected]";
        assert_eq!(selected_page(pages), Some(2));
        assert_eq!(selected_page("## Pages\n"), None);
        let snapshot = "uid=1_0 RootWebArea \"Small form\"\n  uid=1_4 button \"Go\"";
        assert_eq!(find_uid(snapshot, "button \"Go\""), "1_4");
        assert_eq!(find_uid(snapshot, "textbox"), "missing");
    }
}
