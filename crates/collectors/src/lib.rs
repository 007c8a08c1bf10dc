//! Console messages and network requests of one page, collected from DevTools protocol events
//! and printed as chrome-devtools-mcp 1.11.0's `list_console_messages`, `get_console_message`,
//! `list_network_requests` and `get_network_request` print them.
//!
//! An engine: events in, text out. No I/O, no async runtime, no browser types. The host
//! feeds [`Collected::dispatch`] every event of a page's collecting session, performs the
//! read-backs it returns ([`Pending`]: object arguments, error causes, async stacks) and hands
//! their results back; listings and details are computed here.

mod buckets;
mod console;
mod console_output;
mod detail;
mod http;
mod issues;
mod network;
mod pagination;
mod records;
mod stack;
mod urls;
mod values;

pub use console::{Arg, Pending};
pub use detail::{NetworkDetail, Snapshot};
pub use http::base64_decode;
pub use network::NOTHING_SELECTED;
pub use pagination::Page;
pub use records::{MessageRecord, RequestRecord, RequestState};
pub use stack::Symbolized;
pub use values::{description_message, exception_message, format_value, primitive_arg};

use buckets::Buckets;
use console::Console;
use network::Network;
use serde_json::Value;

/// Everything collected for one page; fed one protocol event at a time.
#[derive(Debug, Default)]
pub struct Collected {
    console: Console,
    network: Network,
}

impl Collected {
    /// The page's main frame (from `Page.getFrameTree` at attach, or a navigation): scripts
    /// and requests are judged against it; a navigation starts new buckets.
    pub fn main_frame(&mut self, frame: &Value, navigated: bool) {
        let url = format!(
            "{}{}",
            frame["url"].as_str().unwrap_or_default(),
            frame["urlFragment"].as_str().unwrap_or_default()
        );
        self.network.main_frame = frame["id"].as_str().unwrap_or_default().to_string();
        self.console.scripts.set_page_url(&url);
        if navigated {
            self.console.navigated();
            self.network.navigated();
        }
    }

    /// Records one event; returns what must still be read from the browser.
    pub fn dispatch(&mut self, method: &str, params: &Value) -> Vec<Pending> {
        match method {
            "Runtime.consoleAPICalled" => return self.console.api_called(params),
            "Runtime.exceptionThrown" => {
                return self.console.exception_thrown(&params["exceptionDetails"]);
            }
            "Log.entryAdded" => return self.console.log_entry(&params["entry"]),
            "Audits.issueAdded" => self.console.issue_added(&params["issue"]),
            "Debugger.scriptParsed" => self.console.scripts.parsed(params),
            "Runtime.executionContextDestroyed" => {
                let id = params["executionContextId"].as_i64().unwrap_or_default();
                self.console.scripts.context_destroyed(id);
            }
            "Runtime.executionContextsCleared" => self.console.scripts.cleared(),
            "Page.frameNavigated"
                if params["frame"].is_object() && params["frame"].get("parentId").is_none() =>
            {
                // Issues aggregate per document: same-document navigations keep them.
                self.console.issues.reset();
                self.main_frame(&params["frame"], true);
            }
            "Page.navigatedWithinDocument"
                if params["frameId"].as_str() == Some(&self.network.main_frame) =>
            {
                self.console
                    .scripts
                    .set_page_url(params["url"].as_str().unwrap_or_default());
                self.console.navigated();
                self.network.navigated();
            }
            _ if method.starts_with("Network.") => self.network.event(method, params),
            _ => {}
        }
        Vec::new()
    }

    /// The `## Console messages` section and the structured keys (`consoleMessages`,
    /// `pagination`) to merge into structured content.
    pub fn console_list(
        &self,
        page: Page,
        types: Option<&[String]>,
        include_preserved: bool,
        include_stack_traces: bool,
    ) -> (Vec<String>, Value) {
        self.console
            .list(page, types, include_preserved, include_stack_traces)
    }

    /// One message and its `consoleMessage` key, or the reference's not-found error. `node`
    /// gives the uid of a backend node in the page's last snapshot (`None`: none was taken),
    /// for the elements an issue names.
    pub fn console_detail(
        &self,
        msgid: u64,
        node: Option<&dyn Fn(i64) -> Option<String>>,
    ) -> Result<(Vec<String>, Value), String> {
        let request = |cdp_id: &str| self.network.reqid_of(cdp_id);
        self.console.detail(msgid, node, &request)
    }

    /// The `## Network requests` section and the structured keys (`networkRequests`,
    /// `pagination`).
    pub fn network_list(
        &self,
        page: Page,
        resource_types: Option<&[String]>,
        include_preserved: bool,
    ) -> (Vec<String>, Value) {
        self.network.list(page, resource_types, include_preserved)
    }

    /// A request's printable state, or the reference's not-found error; its bodies are read
    /// from the browser afterwards, off the lock.
    pub fn network_snapshot(&self, reqid: u64) -> Result<Snapshot, String> {
        self.network.snapshot(reqid)
    }

    /// The requests as data (`preserved`: also those of the 3 navigations before); header
    /// values are redacted as `get_network_request` redacts them when `redact`.
    pub fn network_records(&self, preserved: bool, redact: bool) -> Vec<RequestRecord> {
        self.network.records(preserved, redact)
    }

    /// The console messages as data.
    pub fn console_records(&self, preserved: bool) -> Vec<MessageRecord> {
        self.console.records(preserved)
    }

    /// An object argument of message `id`, read back from the browser.
    pub fn set_arg(&mut self, id: u64, index: usize, arg: Arg) {
        self.console.set_arg(id, index, arg);
    }

    /// The full async stack of message `id`, fetched through its `parentId`s.
    pub fn set_stack(&mut self, id: u64, stack: Value) {
        self.console.set_stack(id, stack);
    }

    /// The `cause` chain of the uncaught exception `id`.
    pub fn set_cause(&mut self, id: u64, cause: Symbolized) {
        self.console.set_cause(id, cause);
    }
}

#[cfg(test)]
mod tests {
    use super::{Collected as State, Page};
    use serde_json::{Value, json};

    fn request(state: &mut State, id: &str, url: &str, kind: &str, frame: &str) {
        state.dispatch(
            "Network.requestWillBeSent",
            &json!({"requestId": id, "loaderId": if kind == "Document" { id } else { "L0" },
                    "frameId": frame, "type": kind,
                    "request": {"url": url, "method": "GET", "headers": {"User-Agent": "test"}}}),
        );
    }

    fn navigate(state: &mut State, frame: &str, parent: Option<&str>, url: &str) {
        let mut frame = json!({"id": frame, "url": url, "loaderId": "x"});
        if let Some(parent) = parent {
            frame["parentId"] = json!(parent);
        }
        state.dispatch("Page.frameNavigated", &json!({"frame": frame}));
    }

    fn network(state: &State, preserved: bool) -> Vec<String> {
        state.network.list(Page::default(), None, preserved).0
    }

    #[test]
    fn main_frame_navigations_split_buckets_and_ids_stay() {
        let mut state = State::default();
        navigate(&mut state, "F", None, "http://h/one");
        request(&mut state, "1", "http://h/one", "Document", "F");
        state.dispatch("Runtime.consoleAPICalled", &json!({"type": "log", "executionContextId": 1,
                                                          "args": [{"type": "string", "value": "one"}]}));
        request(&mut state, "2", "http://h/two", "Document", "F");
        navigate(&mut state, "F", None, "http://h/two");
        navigate(&mut state, "child", Some("F"), "http://h/frame");
        request(&mut state, "3", "http://h/two.js", "Script", "F");
        assert_eq!(
            network(&state, false)[2..],
            [
                "reqid=2 GET http://h/two [pending]",
                "reqid=3 GET http://h/two.js [pending]"
            ]
        );
        assert_eq!(network(&state, true).len(), 5);
        assert_eq!(
            state.console.list(Page::default(), None, false, false).0[1],
            "<no console messages found>"
        );
        assert_eq!(
            state.console.list(Page::default(), None, true, false).0[2],
            "msgid=1 [log] one (1 args)"
        );
        // A same-document navigation of the main frame splits too (puppeteer reports it as one).
        state.dispatch("Runtime.consoleAPICalled", &json!({"type": "log", "executionContextId": 2,
                                                          "args": [{"type": "string", "value": "two"}]}));
        state.dispatch(
            "Page.navigatedWithinDocument",
            &json!({"frameId": "F", "url": "http://h/two#x"}),
        );
        assert_eq!(network(&state, false).len(), 4);
        assert_eq!(
            state.console.list(Page::default(), None, false, false).0[1],
            "<no console messages found>"
        );
        assert_eq!(
            state.console.list(Page::default(), None, true, false).0[3],
            "msgid=2 [log] two (1 args)"
        );
        for round in 0..3 {
            request(
                &mut state,
                &format!("N{round}"),
                "http://h/next",
                "Document",
                "F",
            );
            navigate(&mut state, "F", None, "http://h/next");
        }
        assert_eq!(network(&state, true)[1], "Showing 1-3 of 3 (Page 1 of 1).");
        assert!(state.network.snapshot(3).is_err() && state.network.snapshot(4).is_ok());
        request(&mut state, "9", "http://h/four", "Other", "F");
        assert_eq!(
            network(&state, false)[2..],
            [
                "reqid=6 GET http://h/next [pending]",
                "reqid=7 GET http://h/four [pending]"
            ]
        );
    }

    #[test]
    fn odd_events_are_ignored() {
        let mut state = State::default();
        for method in [
            "Runtime.consoleAPICalled",
            "Runtime.exceptionThrown",
            "Log.entryAdded",
            "Network.responseReceived",
            "Network.loadingFailed",
            "Debugger.scriptParsed",
            "Page.frameNavigated",
            "Unknown.event",
        ] {
            state.dispatch(method, &Value::Null);
            state.dispatch(
                method,
                &json!({"requestId": 5, "frame": 1, "entry": [], "args": "x"}),
            );
        }
        let (lines, _) = state.console.list(Page::default(), None, true, true);
        assert!(lines.len() >= 2);
        assert!(
            state
                .console
                .detail(1, None, &|_| None)
                .map(|(lines, _)| lines.len())
                .unwrap_or(0)
                >= 2
        );
    }
}
