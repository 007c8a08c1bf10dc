//! The differential test: this server and chrome-devtools-mcp 1.11.0 (the npm release, run with
//! Node against the same Chromium) go through one scenario on the same fixture pages, step by
//! step, and must answer with the same texts, and list the same tools.
//!
//! Only what differs by nature is normalised: the fixture port, temporary paths, timings and
//! dates, and ids that are random. Every other difference must be listed, once, below: either
//! on purpose (also in README's "Differences on purpose", with the reason), or not matched yet
//! (README's "Not identical yet").

use crate::fixtures;
use crate::support::reference::{reference_ready, start_reference};
use crate::support::{FixtureServer, McpServer, Route, ToolOutput, browser_args};
use serde_json::{Map, Value, json};
use std::path::Path;

/// Differences kept on purpose: `(step label, reason)`. README lists the same.
pub const DIFFERENCES_ON_PURPOSE: &[(&str, &str)] = &[(
    "tools/list type_text",
    "type_text also takes includeSnapshot, as every other input tool does",
)];

/// Steps whose texts still differ because this server does not do the same yet: `(step
/// label, what is missing)`. README lists them under "Not identical yet".
pub const NOT_YET_MATCHED: &[(&str, &str)] = &[(
    "performance_stop_trace",
    "the trace summary is computed from raw trace events, not by the DevTools trace engine",
)];

/// A page for get_css_styles: a rule, an overridden declaration, inline and inherited styles.
const STYLED: &str = r#"<!doctype html>
<html><head><title>Styled</title><style>
  body { color: rgb(10, 20, 30); font-family: serif; }
  .box { padding: 4px; margin: 2px; }
  #target { padding: 8px; }
</style></head>
<body><div class="box" id="target" style="border: 1px solid red">Styled box</div></body></html>"#;

/// A page that raises DevTools issues: quirks mode (no doctype), an inline script its CSP
/// refuses, a synchronous XHR (a deprecation), and form fields autofill cannot place.
const ISSUES: &str = r#"<html><head><title>Issues</title>
<meta http-equiv="Content-Security-Policy" content="script-src 'self'"></head>
<body><script>console.log('inline')</script><script src="/issues.js"></script>
<form><label for="nowhere">Ghost</label><input id="city"><input name="zip">
<label>Lonely</label></form></body></html>"#;

const ISSUES_SCRIPT: &str = "const request = new XMLHttpRequest();\n\
request.open('GET', '/data.json', false);\nrequest.send();\nconsole.log('sync', request.status);\n";

/// The label of the issues page's listing, which must list several issues.
const ISSUES_LISTING: &str = "list_console_messages of the issues page";

/// One step: a label (unique), the tool, and its arguments computed from the side's state
/// (uids come from that side's own last snapshot).
pub(crate) struct Step {
    pub(crate) label: &'static str,
    pub(crate) tool: &'static str,
    args: Box<dyn Fn(&Side) -> Value>,
}

fn step(label: &'static str, tool: &'static str, args: Value) -> Step {
    Step {
        label,
        tool,
        args: Box::new(move |_| args.clone()),
    }
}

fn step_with(
    label: &'static str,
    tool: &'static str,
    args: impl Fn(&Side) -> Value + 'static,
) -> Step {
    Step {
        label,
        tool,
        args: Box::new(args),
    }
}

/// What one server said so far.
pub(crate) struct Side {
    pub(crate) name: &'static str,
    pub(crate) server: McpServer,
    /// The text of the last answer that held a snapshot.
    snapshot: String,
    /// The text of the last answer.
    last: String,
    /// The text of the last console listing.
    console: String,
    /// The last answer as it came (`Err`: a JSON-RPC error).
    pub(crate) output: Result<ToolOutput, String>,
}

impl Side {
    pub(crate) fn new(name: &'static str, server: McpServer) -> Side {
        Side {
            name,
            server,
            snapshot: String::new(),
            last: String::new(),
            console: String::new(),
            output: Err("no call yet".into()),
        }
    }
}

impl Side {
    /// The uid of the snapshot line with this role and name, or a uid no page has.
    fn uid(&self, role_and_name: &str) -> String {
        self.snapshot
            .lines()
            .find(|line| line.contains(role_and_name))
            .and_then(|line| line.trim_start().strip_prefix("uid="))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or("0_404")
            .to_string()
    }

    /// The msgid of the `nth` DevTools issue of the last console listing.
    fn issue_id(&self, nth: usize) -> u64 {
        self.console
            .lines()
            .filter(|line| line.contains(" [issue] "))
            .nth(nth)
            .and_then(|line| line.strip_prefix("msgid="))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|id| id.parse().ok())
            .unwrap_or(9999)
    }

    /// The first `msgid=`/`reqid=` number of the last answer.
    fn first_id(&self, key: &str) -> u64 {
        self.last
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|id| id.parse().ok())
            .unwrap_or(9999)
    }

    pub(crate) async fn run(&mut self, step: &Step) -> String {
        let args = (step.args)(self);
        self.output = self.server.call_raw(step.tool, args).await;
        let rendered = match &self.output {
            Ok(output) => render(output),
            Err(error) => format!("protocol error: {error}"),
        };
        if rendered.contains("## Latest page snapshot") {
            self.snapshot = rendered.clone();
        }
        if rendered.contains("## Console messages") {
            self.console = rendered.clone();
        }
        self.last = rendered.clone();
        rendered
    }
}

/// The answer as compared: the error flag, the texts, and each image's type (not its bytes).
pub(crate) fn render(output: &ToolOutput) -> String {
    let mut text = format!("isError={}\n{}", output.is_error, output.text);
    for (mime, _) in &output.images {
        text.push_str(&format!("\n<image {mime}>"));
    }
    text
}

/// Replaces what differs by nature: the fixture port, temp paths, dates and timings.
pub(crate) fn normalize(text: &str, pages: &FixtureServer) -> String {
    let temp = std::env::temp_dir()
        .to_string_lossy()
        .trim_end_matches('/')
        .to_string();
    let mut out = Vec::new();
    for line in crate::support::normalize(text, pages).lines() {
        let line = replace_paths(line, &temp);
        let lower = line.to_ascii_lowercase();
        if lower.starts_with("- date:") {
            out.push("- date:<DATE>".to_string());
        } else {
            out.push(replace_browser_ids(&replace_axe_version(&replace_timings(
                &line,
            ))));
        }
    }
    out.join("\n")
}

/// The ids Chromium gives frames, loaders and scripts (in an issue's affected resources):
/// `"frameId":"<ID>"`.
fn replace_browser_ids(line: &str) -> String {
    let mut out = line.to_string();
    for key in ["\"frameId\":\"", "\"loaderId\":\"", "\"scriptId\":\""] {
        let mut replaced = String::new();
        let mut rest = out.as_str();
        while let Some(index) = rest.find(key) {
            replaced.push_str(&rest[..index + key.len()]);
            let tail = &rest[index + key.len()..];
            replaced.push_str("<ID>");
            rest = &tail[tail.find('"').unwrap_or(tail.len())..];
        }
        replaced.push_str(rest);
        out = replaced;
    }
    out
}

/// Lighthouse's "Learn more" links name the axe-core release (`.../rules/axe/4.12/...`): the
/// npm Lighthouse 13.5.0 we run depends on axe-core ^4.13, 1.11.0's bundle carries 4.12.1.
/// A dependency's version, not a behaviour: `axe/<AXE>/`.
fn replace_axe_version(line: &str) -> String {
    const MARK: &str = "/rules/axe/";
    let mut out = String::new();
    let mut rest = line;
    while let Some(index) = rest.find(MARK) {
        out.push_str(&rest[..index + MARK.len()]);
        let tail = &rest[index + MARK.len()..];
        let end = tail.find('/').unwrap_or(tail.len());
        out.push_str("<AXE>");
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `<temp>/anything-up-to-a-space-or-quote` becomes `<TEMP>`.
fn replace_paths(line: &str, temp: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(index) = rest.find(temp) {
        out.push_str(&rest[..index]);
        out.push_str("<TEMP>");
        let tail = &rest[index + temp.len()..];
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ')' | ','))
            .unwrap_or(tail.len());
        // A sentence may end with the path: keep its full stop.
        let end = if tail[..end].ends_with('.') {
            end - 1
        } else {
            end
        };
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Numbers followed by `ms`, `µs` or `s` (durations and trace times) become `<N>`.
fn replace_timings(line: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = line.chars().collect();
    let mut index = 0;
    while index < chars.len() {
        if chars[index].is_ascii_digit() && (index == 0 || !chars[index - 1].is_alphanumeric()) {
            let start = index;
            while index < chars.len() && (chars[index].is_ascii_digit() || chars[index] == '.') {
                index += 1;
            }
            let unit: String = chars[index..].iter().take(3).collect();
            let unit = unit.trim_start();
            let duration = unit.starts_with("ms")
                || unit.starts_with("µs")
                || unit.starts_with("s ")
                || unit == "s"
                || unit.starts_with("s,");
            if duration {
                out.push_str("<N>");
            } else {
                out.extend(&chars[start..index]);
            }
            continue;
        }
        out.push(chars[index]);
        index += 1;
    }
    out
}

/// The scenario: every default tool, errors and dialogs.
pub(crate) fn scenario(pages: &FixtureServer, workspace: &std::path::Path) -> Vec<Step> {
    let url = |path: &str| pages.url(path);
    let script = workspace.join("title.js").to_string_lossy().into_owned();
    let upload = workspace.join("upload.txt").to_string_lossy().into_owned();
    let heap = workspace
        .join("page.heapsnapshot")
        .to_string_lossy()
        .into_owned();
    let saved = workspace.join("result.json").to_string_lossy().into_owned();
    vec![
        step("list_pages at start", "list_pages", json!({})),
        step(
            "navigate to the index",
            "navigate_page",
            json!({"pageId": 1, "url": url("/")}),
        ),
        step(
            "take_snapshot of the index",
            "take_snapshot",
            json!({"pageId": 1}),
        ),
        step_with(
            "click Add item with a snapshot",
            "click",
            |side| json!({"pageId": 1, "uid": side.uid("button \"Add item\""), "includeSnapshot": true}),
        ),
        step_with(
            "hover the link",
            "hover",
            |side| json!({"pageId": 1, "uid": side.uid("link \"Next page\"")}),
        ),
        step(
            "navigate to the console page",
            "navigate_page",
            json!({"pageId": 1, "url": url("/console")}),
        ),
        step(
            "list_console_messages",
            "list_console_messages",
            json!({"pageId": 1}),
        ),
        step_with(
            "get_console_message",
            "get_console_message",
            |side| json!({"pageId": 1, "msgid": side.first_id("msgid=")}),
        ),
        step(
            "list_console_messages errors only",
            "list_console_messages",
            json!({"pageId": 1, "types": ["error"]}),
        ),
        step(
            "list_console_messages preserved",
            "list_console_messages",
            json!({"pageId": 1, "includePreservedMessages": true}),
        ),
        step(
            "list_console_messages of a service worker",
            "list_console_messages",
            json!({"pageId": 1, "serviceWorkerId": "none"}),
        ),
        step(
            "get_console_message unknown",
            "get_console_message",
            json!({"pageId": 1, "msgid": 4242}),
        ),
        step(
            "list_network_requests",
            "list_network_requests",
            json!({"pageId": 1}),
        ),
        step_with(
            "get_network_request",
            "get_network_request",
            |side| json!({"pageId": 1, "reqid": side.first_id("reqid=") + 1}),
        ),
        step(
            "get_network_request unknown",
            "get_network_request",
            json!({"pageId": 1, "reqid": 4242}),
        ),
        step(
            "navigate to the form",
            "navigate_page",
            json!({"pageId": 1, "url": url("/form")}),
        ),
        step(
            "take_snapshot of the form",
            "take_snapshot",
            json!({"pageId": 1}),
        ),
        step_with(
            "fill the name",
            "fill",
            |side| json!({"pageId": 1, "uid": side.uid("textbox \"Name\""), "value": "Ada"}),
        ),
        step_with(
            "fill the select",
            "fill",
            |side| json!({"pageId": 1, "uid": side.uid("combobox \"Color\""), "value": "Green"}),
        ),
        step_with(
            "fill the checkbox",
            "fill",
            |side| json!({"pageId": 1, "uid": side.uid("checkbox \"Agree\""), "value": "true"}),
        ),
        step_with("fill_form", "fill_form", |side| {
            json!({"pageId": 1, "elements": [
                {"uid": side.uid("textbox \"Name\""), "value": "Grace"},
                {"uid": side.uid("textbox \"Bio\""), "value": "Compilers"}
            ], "includeSnapshot": true})
        }),
        step_with(
            "click the name field",
            "click",
            |side| json!({"pageId": 1, "uid": side.uid("textbox \"Name\"")}),
        ),
        step(
            "type_text with Enter",
            "type_text",
            json!({"pageId": 1, "text": " Hopper", "submitKey": "Enter"}),
        ),
        step(
            "press_key Tab",
            "press_key",
            json!({"pageId": 1, "key": "Tab"}),
        ),
        step(
            "take_snapshot after typing",
            "take_snapshot",
            json!({"pageId": 1}),
        ),
        step_with(
            "drag",
            "drag",
            |side| json!({"pageId": 1, "from_uid": side.uid("\"Drag me\""), "to_uid": side.uid("\"Drop here\"")}),
        ),
        step_with(
            "upload_file",
            "upload_file",
            move |side| json!({"pageId": 1, "uid": side.uid("\"Attachment\""), "filePaths": [upload.clone()]}),
        ),
        step_with(
            "click Load later",
            "click",
            |side| json!({"pageId": 1, "uid": side.uid("button \"Load later\"")}),
        ),
        step(
            "wait_for late text",
            "wait_for",
            json!({"pageId": 1, "text": ["Later content", "Never"]}),
        ),
        step(
            "wait_for a missing text",
            "wait_for",
            json!({"pageId": 1, "text": ["Never there"], "timeout": 300}),
        ),
        step(
            "evaluate_script function",
            "evaluate_script",
            json!({"pageId": 1, "function": "() => document.title"}),
        ),
        step(
            "evaluate_script script format",
            "evaluate_script",
            json!({"pageId": 1, "function": "1 + 2", "format": "script"}),
        ),
        step(
            "evaluate_script sourcePath",
            "evaluate_script",
            json!({"pageId": 1, "sourcePath": script}),
        ),
        step(
            "evaluate_script to a file",
            "evaluate_script",
            json!({"pageId": 1, "function": "() => ({a: 1})", "filePath": saved}),
        ),
        step(
            "evaluate_script both sources",
            "evaluate_script",
            json!({"pageId": 1, "function": "() => 1", "sourcePath": "/x.js"}),
        ),
        step(
            "evaluate_script throws",
            "evaluate_script",
            json!({"pageId": 1, "function": "() => { throw new Error('boom') }"}),
        ),
        step(
            "list_console_messages after the form",
            "list_console_messages",
            json!({"pageId": 1, "includePreservedMessages": true}),
        ),
        // The form's DevTools issue (message 6 above): its description, link and element.
        step(
            "get_console_message of an issue",
            "get_console_message",
            json!({"pageId": 1, "msgid": 6}),
        ),
        step(
            "emulate everything",
            "emulate",
            json!({"pageId": 1, "networkConditions": "Fast 4G", "cpuThrottlingRate": 2,
            "geolocation": "48.85,2.35", "userAgent": "DiffBot/1.0", "colorScheme": "dark", "forcedColors": "active",
            "prefersContrast": "more", "prefersReducedMotion": "reduce", "viewport": "800x600x1"}),
        ),
        step("emulate reset", "emulate", json!({"pageId": 1})),
        step(
            "emulate invalid geolocation",
            "emulate",
            json!({"pageId": 1, "geolocation": "100,0"}),
        ),
        step(
            "resize_page",
            "resize_page",
            json!({"pageId": 1, "width": 700, "height": 500}),
        ),
        step("take_screenshot", "take_screenshot", json!({"pageId": 1})),
        step(
            "take_screenshot uid and fullPage",
            "take_screenshot",
            json!({"pageId": 1, "uid": "1_1", "fullPage": true}),
        ),
        step(
            "take_heapsnapshot",
            "take_heapsnapshot",
            json!({"pageId": 1, "filePath": heap}),
        ),
        step(
            "performance_start_trace",
            "performance_start_trace",
            json!({"pageId": 1, "reload": false, "autoStop": false}),
        ),
        step(
            "performance_start_trace again",
            "performance_start_trace",
            json!({"pageId": 1, "reload": false, "autoStop": false}),
        ),
        step(
            "performance_stop_trace",
            "performance_stop_trace",
            json!({"pageId": 1}),
        ),
        step(
            "performance_stop_trace idle",
            "performance_stop_trace",
            json!({"pageId": 1}),
        ),
        step(
            "performance_analyze_insight unknown",
            "performance_analyze_insight",
            json!({"pageId": 1, "insightSetId": "none", "insightName": "LCPBreakdown"}),
        ),
        step(
            "navigate to the styled page",
            "navigate_page",
            json!({"pageId": 1, "url": url("/styled")}),
        ),
        step(
            "take_snapshot of the styled page",
            "take_snapshot",
            json!({"pageId": 1}),
        ),
        step_with(
            "get_css_styles",
            "get_css_styles",
            |side| json!({"pageId": 1, "uid": side.uid("\"Styled box\"")}),
        ),
        step(
            "get_css_styles without a uid",
            "get_css_styles",
            json!({"pageId": 1, "uid": "0_404"}),
        ),
        step("screencast_start", "screencast_start", json!({"pageId": 1})),
        step("screencast_stop", "screencast_stop", json!({"pageId": 1})),
        step(
            "lighthouse_audit",
            "lighthouse_audit",
            json!({"pageId": 1, "mode": "snapshot"}),
        ),
        step(
            "new_page with dialogs",
            "new_page",
            json!({"url": url("/dialog")}),
        ),
        step(
            "take_snapshot of the dialog page",
            "take_snapshot",
            json!({"pageId": 2}),
        ),
        step_with(
            "click that opens an alert",
            "click",
            |side| json!({"pageId": 2, "uid": side.uid("button \"Show alert\"")}),
        ),
        step(
            "take_snapshot while a dialog is open",
            "take_snapshot",
            json!({"pageId": 2}),
        ),
        step("list_pages while a dialog is open", "list_pages", json!({})),
        step(
            "handle_dialog accept",
            "handle_dialog",
            json!({"pageId": 2, "action": "accept"}),
        ),
        step(
            "handle_dialog without a dialog",
            "handle_dialog",
            json!({"pageId": 2, "action": "dismiss"}),
        ),
        step_with(
            "click that opens a prompt",
            "click",
            |side| json!({"pageId": 2, "uid": side.uid("button \"Ask name\"")}),
        ),
        step(
            "handle_dialog with prompt text",
            "handle_dialog",
            json!({"pageId": 2, "action": "accept", "promptText": "Bob"}),
        ),
        step(
            "evaluate_script reads the answer",
            "evaluate_script",
            json!({"pageId": 2, "function": "() => document.getElementById('answer').textContent"}),
        ),
        step(
            "select_page",
            "select_page",
            json!({"pageId": 1, "bringToFront": true}),
        ),
        step(
            "navigate back",
            "navigate_page",
            json!({"pageId": 1, "type": "back"}),
        ),
        step(
            "navigate forward",
            "navigate_page",
            json!({"pageId": 1, "type": "forward"}),
        ),
        step(
            "navigate reload",
            "navigate_page",
            json!({"pageId": 1, "type": "reload"}),
        ),
        step(
            "navigate without url or type",
            "navigate_page",
            json!({"pageId": 1}),
        ),
        // DevTools issues of several kinds: quirks mode, CSP, a deprecation, forms.
        step(
            "navigate to the issues page",
            "navigate_page",
            json!({"pageId": 1, "url": url("/issues")}),
        ),
        step(
            "take_snapshot of the issues page",
            "take_snapshot",
            json!({"pageId": 1}),
        ),
        step(
            ISSUES_LISTING,
            "list_console_messages",
            json!({"pageId": 1}),
        ),
        step_with(
            "get_console_message of issue 1",
            "get_console_message",
            |side| json!({"pageId": 1, "msgid": side.issue_id(0)}),
        ),
        step_with(
            "get_console_message of issue 2",
            "get_console_message",
            |side| json!({"pageId": 1, "msgid": side.issue_id(1)}),
        ),
        step_with(
            "get_console_message of issue 3",
            "get_console_message",
            |side| json!({"pageId": 1, "msgid": side.issue_id(2)}),
        ),
        step_with(
            "get_console_message of issue 4",
            "get_console_message",
            |side| json!({"pageId": 1, "msgid": side.issue_id(3)}),
        ),
        step(
            "list_console_messages of issues only",
            "list_console_messages",
            json!({"pageId": 1, "types": ["issue"]}),
        ),
        step("close_page", "close_page", json!({"pageId": 2})),
        step("close the last page", "close_page", json!({"pageId": 1})),
        step(
            "a page that does not exist",
            "take_snapshot",
            json!({"pageId": 99}),
        ),
        step(
            "click an unknown uid",
            "click",
            json!({"pageId": 1, "uid": "9_99"}),
        ),
        step(
            "unknown argument",
            "click",
            json!({"pageId": 1, "uid": "1_1", "bogus": true}),
        ),
        step("missing pageId", "take_snapshot", json!({})),
        step(
            "wrong type",
            "resize_page",
            json!({"pageId": 1, "width": "wide", "height": 0}),
        ),
        step(
            "invalid enum",
            "navigate_page",
            json!({"pageId": 1, "type": "sideways"}),
        ),
        step(
            "new_page to a chrome URL",
            "new_page",
            json!({"url": "chrome://settings"}),
        ),
        step("list_pages at the end", "list_pages", json!({})),
    ]
}

pub(crate) fn fixture_pages() -> FixtureServer {
    FixtureServer::start(vec![
        Route::html("/", fixtures::INDEX),
        Route::html("/next", fixtures::NEXT),
        Route::html("/dialog", fixtures::DIALOG),
        Route::html("/form", fixtures::FORM),
        Route::html("/console", fixtures::CONSOLE),
        Route::html("/styled", STYLED),
        Route::html("/issues", ISSUES),
        Route::new("/issues.js", "text/javascript", ISSUES_SCRIPT),
        Route::new("/data.json", "application/json", r#"{"value": 7}"#),
    ])
}

/// Each tool as compared. The rmcp client keeps MCP's annotations only, so the reference's
/// `category` and `conditions` do not survive parsing; ours travel in `_meta` (a difference on
/// purpose) and are checked against 1.11.0's stored list by `parity.rs`.
pub(crate) fn tools_by_name(tools: &[rmcp::model::Tool]) -> Map<String, Value> {
    let mut by_name = Map::new();
    for tool in tools {
        let Ok(Value::Object(mut value)) = serde_json::to_value(tool) else {
            continue;
        };
        value.remove("_meta");
        by_name.insert(tool.name.to_string(), Value::Object(value));
    }
    by_name
}

/// Parameter names in order, then the whole tool (key order inside objects aside).
pub(crate) fn same_tool(ours: &Value, theirs: &Value) -> bool {
    let names = |tool: &Value| -> Vec<String> {
        tool["inputSchema"]["properties"]
            .as_object()
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default()
    };
    names(ours) == names(theirs) && ours == theirs
}

fn listed(list: &[(&str, &str)], label: &str) -> bool {
    list.iter().any(|(listed, _)| *listed == label)
}

/// The folder the scenario reads and writes files in (a script, a file to upload).
pub(crate) fn scenario_workspace() -> tempfile::TempDir {
    let workspace = tempfile::Builder::new()
        .prefix("devtools-mcp-scenario-")
        .tempdir_in(std::env::temp_dir())
        .expect("workspace");
    std::fs::write(
        workspace.path().join("title.js"),
        "() => document.title + '!'",
    )
    .expect("script");
    std::fs::write(workspace.path().join("upload.txt"), "hello").expect("upload");
    workspace
}

/// Our server's arguments for the scenario: page ids routed, as 1.11.0 does by default, and
/// Lighthouse from the npm package scripts/test installs (1.11.0 bundles it).
pub(crate) fn scenario_args() -> Vec<String> {
    let mut args = browser_args();
    args.retain(|arg| arg != "--no-page-id-routing");
    args.extend([
        "--lighthousePath".to_owned(),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/.lighthouse")
            .display()
            .to_string(),
    ]);
    args
}

#[tokio::test]
async fn texts_and_tools_match_chrome_devtools_mcp_1_11_0() {
    if !reference_ready("the differential test against chrome-devtools-mcp 1.11.0") {
        return;
    }
    let pages = fixture_pages();
    let workspace = scenario_workspace();
    let theirs = start_reference(&[]).await;
    let ours = match McpServer::start_with(scenario_args(), Vec::new()).await {
        Ok(server) => server,
        Err(message) => panic!("{message}"),
    };
    let mut mismatches: Vec<(String, String, String)> = Vec::new();

    let their_tools = tools_by_name(&theirs.list_tools().await);
    let our_tools = tools_by_name(&ours.list_tools().await);
    let mut names: Vec<&String> = their_tools.keys().chain(our_tools.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let (mine, reference) = (our_tools.get(name), their_tools.get(name));
        let same = match (mine, reference) {
            (Some(mine), Some(reference)) => same_tool(mine, reference),
            _ => false,
        };
        if !same {
            let pretty = |tool: Option<&Value>| {
                tool.map(|tool| serde_json::to_string_pretty(tool).unwrap_or_default())
                    .unwrap_or_else(|| "<not listed>".into())
            };
            mismatches.push((
                format!("tools/list {name}"),
                pretty(mine),
                pretty(reference),
            ));
        }
    }

    let mut sides = [Side::new("ours", ours), Side::new("1.11.0", theirs)];
    let steps = scenario(&pages, workspace.path());
    assert!(steps.len() >= 40, "the scenario has {} steps", steps.len());
    for step in &steps {
        let mut answers = Vec::new();
        for side in sides.iter_mut() {
            answers.push(normalize(&side.run(step).await, &pages));
        }
        if step.label == ISSUES_LISTING {
            let issues = answers[0].matches(" [issue] ").count();
            assert!(
                issues >= 3,
                "the issues page raised {issues} issues:\n{}",
                answers[0]
            );
        }
        if answers[0] != answers[1] {
            mismatches.push((
                step.label.to_string(),
                answers[0].clone(),
                answers[1].clone(),
            ));
        }
    }
    for side in sides {
        eprintln!("shutting down {}", side.name);
        side.server.shutdown().await;
    }

    let mut unexpected = Vec::new();
    for (label, mine, reference) in &mismatches {
        let known = listed(DIFFERENCES_ON_PURPOSE, label) || listed(NOT_YET_MATCHED, label);
        eprintln!(
            "--- {} {label}\n--- ours:\n{mine}\n--- 1.11.0:\n{reference}\n",
            if known {
                "known difference:"
            } else {
                "DIFFERENCE:"
            }
        );
        if !known {
            unexpected.push(label.clone());
        }
    }
    let lists = DIFFERENCES_ON_PURPOSE.iter().chain(NOT_YET_MATCHED);
    for (label, _) in lists {
        if !mismatches.iter().any(|(found, _, _)| found == label) {
            eprintln!(
                "note: \"{label}\" is listed as a difference but now matches 1.11.0; remove it from the list."
            );
        }
    }
    assert!(
        unexpected.is_empty(),
        "{} step(s) answer differently from chrome-devtools-mcp 1.11.0 (diffs above): {unexpected:?}",
        unexpected.len()
    );
}

#[cfg(test)]
mod tests {
    use super::{replace_axe_version, replace_browser_ids, replace_paths, replace_timings};

    #[test]
    fn normalisation_keeps_sentences_and_replaces_only_what_varies() {
        assert_eq!(
            replace_browser_ids(
                r#"data={"affectedFrame":{"frameId":"82E6"},"scriptId":"108","url":"u"}"#
            ),
            r#"data={"affectedFrame":{"frameId":"<ID>"},"scriptId":"<ID>","url":"u"}"#
        );
        assert_eq!(
            replace_paths("Saved screenshot to /tmp/x-1/shot.png.", "/tmp"),
            "Saved screenshot to <TEMP>."
        );
        assert_eq!(
            replace_timings("LCP: 120 ms, TTFB: 3ms"),
            "LCP: <N> ms, TTFB: <N>ms"
        );
        assert_eq!(
            replace_axe_version(
                "[Learn more](https://dequeuniversity.com/rules/axe/4.13/html-has-lang)."
            ),
            "[Learn more](https://dequeuniversity.com/rules/axe/<AXE>/html-has-lang)."
        );
        assert_eq!(
            replace_timings("msgid=12 [log] 3 items"),
            "msgid=12 [log] 3 items"
        );
    }
}
