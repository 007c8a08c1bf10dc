//! Console messages of a page, as the reference's `ConsoleCollector` gathers them (console API
//! calls, `Log` entries, uncaught exceptions) and its `ConsoleFormatter` prints them.

use super::Buckets;
use super::issues::{Added, Aggregated, Issues};
use super::stack::{Scripts, Symbolized};
use super::values::{exception_message, primitive_arg, text_token};
use serde_json::Value;

/// A safety cap per navigation (the reference keeps every message).
const MAX_PER_NAVIGATION: usize = 10_000;

/// One argument as `get_console_message` prints it.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Text(String),
    Error(Symbolized),
    /// Could not be read back (`<error: Argument N is no longer available>`).
    Unavailable,
}

#[derive(Debug, Clone)]
pub(crate) struct Message {
    pub id: u64,
    pub kind: String,
    pub text: String,
    pub arg_count: usize,
    /// The raw `Runtime.StackTrace`.
    pub stack: Option<Value>,
    /// An uncaught exception's `cause` chain.
    pub cause: Option<Symbolized>,
    /// Arguments as `get_console_message` prints them; `None` while still being read.
    pub args: Vec<Option<Arg>>,
    /// An uncaught exception (`Runtime.exceptionThrown`).
    pub uncaught: bool,
    /// A DevTools issue aggregate (`kind` is `issue`).
    pub issue: Option<Box<Aggregated>>,
}

/// What still needs the browser after a message was recorded.
#[derive(Debug, Clone, PartialEq)]
pub enum Pending {
    /// Object arguments to read back (`jsonValue`) or symbolize (errors), by position.
    Args {
        id: u64,
        objects: Vec<(usize, Value)>,
    },
    /// The `cause` chain of an uncaught exception.
    Cause { id: u64, exception: Value },
    /// A stack whose async parents are only referenced (`parentId`, e.g. `Promise.then`).
    Stack { id: u64, stack: Value },
}

/// Whether a stack's async chain continues through a `parentId` to fetch.
pub(crate) fn has_parent_id(stack: &Value) -> bool {
    let mut level = Some(stack);
    while let Some(current) = level {
        if current.get("parentId").is_some() {
            return true;
        }
        level = current.get("parent");
    }
    false
}

fn stack_job(id: u64, stack: Option<&Value>) -> Option<Pending> {
    let stack = stack.filter(|stack| has_parent_id(stack))?;
    Some(Pending::Stack {
        id,
        stack: stack.clone(),
    })
}

#[derive(Debug)]
pub(crate) struct Console {
    pub(super) buckets: Buckets<Message>,
    next_id: u64,
    pub scripts: Scripts,
    pub issues: Issues,
}

impl Default for Console {
    fn default() -> Self {
        Console {
            buckets: Buckets::new(MAX_PER_NAVIGATION),
            next_id: 1,
            scripts: Scripts::default(),
            issues: Issues::default(),
        }
    }
}

impl Console {
    fn record(&mut self, message: impl FnOnce(u64) -> Message) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.buckets.push(message(id));
        id
    }

    /// `Runtime.consoleAPICalled`.
    pub fn api_called(&mut self, params: &Value) -> Vec<Pending> {
        if params["executionContextId"] == 0 {
            return Vec::new();
        }
        let raw = params["args"].as_array().cloned().unwrap_or_default();
        let kind = level(params["type"].as_str().unwrap_or("log"));
        let text = raw.iter().map(text_token).collect::<Vec<_>>().join(" ");
        let mut objects = Vec::new();
        let args = raw
            .iter()
            .enumerate()
            .map(|(index, arg)| {
                if arg.get("objectId").is_some() {
                    objects.push((index, arg.clone()));
                    None
                } else {
                    Some(Arg::Text(primitive_arg(arg)))
                }
            })
            .collect();
        let id = self.record(|id| Message {
            id,
            kind,
            text,
            arg_count: raw.len(),
            stack: params.get("stackTrace").cloned(),
            cause: None,
            args,
            uncaught: false,
            issue: None,
        });
        let args = (!objects.is_empty()).then_some(Pending::Args { id, objects });
        args.into_iter()
            .chain(stack_job(id, params.get("stackTrace")))
            .collect()
    }

    /// `Log.entryAdded` (worker entries excluded, as puppeteer does).
    pub fn log_entry(&mut self, entry: &Value) -> Vec<Pending> {
        if entry["source"] == "worker" {
            return Vec::new();
        }
        let id = self.record(|id| Message {
            id,
            kind: level(entry["level"].as_str().unwrap_or("info")),
            text: entry["text"].as_str().unwrap_or_default().to_string(),
            arg_count: 0,
            stack: entry.get("stackTrace").cloned(),
            cause: None,
            args: Vec::new(),
            uncaught: false,
            issue: None,
        });
        stack_job(id, entry.get("stackTrace")).into_iter().collect()
    }

    /// `Runtime.exceptionThrown`: an error message without arguments.
    pub fn exception_thrown(&mut self, details: &Value) -> Vec<Pending> {
        let id = self.record(|id| Message {
            id,
            kind: "error".to_string(),
            text: exception_message(details),
            arg_count: 0,
            stack: details.get("stackTrace").cloned(),
            cause: None,
            args: Vec::new(),
            uncaught: true,
            issue: None,
        });
        let mut jobs: Vec<Pending> = stack_job(id, details.get("stackTrace"))
            .into_iter()
            .collect();
        if let Some(exception) = details.get("exception")
            && (exception["type"] == "object" || exception["subtype"] == "error")
            && exception.get("objectId").is_some()
        {
            jobs.push(Pending::Cause {
                id,
                exception: exception.clone(),
            });
        }
        jobs
    }

    /// `Audits.issueAdded`: a new aggregate is a message; another instance counts in its own.
    pub fn issue_added(&mut self, issue: &Value) {
        match self.issues.add(issue) {
            Added::New { code, aggregated } => {
                let id = self.record(|id| Message {
                    id,
                    kind: "issue".to_string(),
                    text: aggregated.title.clone().unwrap_or_default(),
                    arg_count: 0,
                    stack: None,
                    cause: None,
                    args: Vec::new(),
                    uncaught: false,
                    issue: Some(aggregated),
                });
                self.issues.shown_as(code, id);
            }
            Added::Instance { id, details } => {
                if let Some(issue) = self
                    .buckets
                    .find_mut(|m| m.id == id)
                    .and_then(|m| m.issue.as_mut())
                {
                    issue.add_instance(details);
                }
            }
            Added::Nothing => {}
        }
    }

    /// Main-frame navigation: a new bucket.
    pub fn navigated(&mut self) {
        self.buckets.split(None);
    }

    pub fn set_arg(&mut self, id: u64, index: usize, arg: Arg) {
        if let Some(slot) = self
            .buckets
            .find_mut(|m| m.id == id)
            .and_then(|m| m.args.get_mut(index))
        {
            *slot = Some(arg);
        }
    }

    pub fn set_stack(&mut self, id: u64, stack: Value) {
        if let Some(message) = self.buckets.find_mut(|m| m.id == id) {
            message.stack = Some(stack);
        }
    }

    pub fn set_cause(&mut self, id: u64, cause: Symbolized) {
        if let Some(message) = self.buckets.find_mut(|m| m.id == id) {
            message.cause = Some(cause);
        }
    }
}

/// puppeteer's `convertConsoleMessageLevel`.
fn level(kind: &str) -> String {
    if kind == "warning" {
        "warn".to_string()
    } else {
        kind.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::{Arg, Console, Pending};
    use crate::pagination::Page;
    use serde_json::{Value, json};

    fn console() -> Console {
        let mut console = Console::default();
        console
            .scripts
            .parsed(&json!({"scriptId": "1", "url": "http://h/a.js"}));
        console
    }

    fn log(console: &mut Console, kind: &str, args: Value) -> Vec<Pending> {
        console.api_called(&json!({"type": kind, "args": args, "executionContextId": 1,
            "stackTrace": {"callFrames": [{"functionName": "f", "scriptId": "1", "url": "http://h/a.js",
                                           "lineNumber": 0, "columnNumber": 4}]}}))
    }

    fn text(lines: &[String]) -> String {
        lines.join("\n")
    }

    #[test]
    fn lists_group_consecutive_messages_and_filter_types() {
        let mut console = console();
        log(
            &mut console,
            "log",
            json!([{"type": "string", "value": "hello"}, {"type": "number", "value": 1},
            {"type": "object", "objectId": "o1", "className": "Object"}]),
        );
        log(
            &mut console,
            "warning",
            json!([{"type": "string", "value": "careful"}]),
        );
        for _ in 0..3 {
            log(
                &mut console,
                "log",
                json!([{"type": "string", "value": "same"}]),
            );
        }
        log(
            &mut console,
            "log",
            json!([{"type": "undefined"}, {"type": "object", "subtype": "null", "value": null},
            {"type": "bigint", "unserializableValue": "10n"}, {"type": "number", "unserializableValue": "-0"},
            {"type": "number", "value": 1.5}]),
        );
        console.log_entry(
            &json!({"source": "network", "level": "error", "text": "Failed to load resource"}),
        );
        console.log_entry(&json!({"source": "worker", "level": "info", "text": "hidden"}));
        console.exception_thrown(
            &json!({"text": "Uncaught", "exception": {"type": "object", "subtype": "error",
            "description": "TypeError: boom\n    at x (a.js:1:1)"}}),
        );
        let (lines, data) = console.list(Page::default(), None, false, false);
        assert_eq!(
            text(&lines),
            "## Console messages\nShowing 1-6 of 6 (Page 1 of 1).\n\
             msgid=1 [log] hello 1 [object Object] (3 args)\nmsgid=2 [warn] careful (1 args)\n\
             msgid=3 [log] same (1 args) [3 times]\nmsgid=6 [log]   10 0 1.5 (5 args)\n\
             msgid=7 [error] Failed to load resource (0 args)\n\
             msgid=8 [error] Uncaught TypeError: boom (0 args)"
        );
        assert_eq!(
            data["consoleMessages"][2],
            json!({"type": "log", "text": "same", "argsCount": 1, "id": 3, "count": 3})
        );
        let errors = ["error".to_string()];
        let (lines, _) = console.list(
            Page {
                size: Some(1),
                index: Some(1),
            },
            Some(&errors),
            false,
            false,
        );
        assert_eq!(
            text(&lines),
            "## Console messages\nShowing 2-2 of 2 (Page 2 of 2).\nPrevious page: 0\n\
             msgid=8 [error] Uncaught TypeError: boom (0 args)"
        );
    }

    #[test]
    fn details_print_arguments_and_stacks() {
        let mut console = console();
        let pending = log(
            &mut console,
            "log",
            json!([{"type": "string", "value": "Processing"},
            {"type": "object", "objectId": "o1", "className": "Object"}, {"type": "symbol", "objectId": "o2"}]),
        );
        assert_eq!(
            pending,
            [Pending::Args {
                id: 1,
                objects: vec![
                    (
                        1,
                        json!({"type": "object", "objectId": "o1", "className": "Object"})
                    ),
                    (2, json!({"type": "symbol", "objectId": "o2"}))
                ]
            }]
        );
        console.set_arg(1, 1, Arg::Text("{\"a\":1}".into()));
        let (lines, data) = console.detail(1, None, &|_| None).expect("message 1");
        assert_eq!(
            text(&lines),
            "ID: 1\nMessage: log> Processing [object Object] [symbol undefined]\n### Arguments\n\
             Arg #0: Processing\nArg #1: {\"a\":1}\nArg #2: <error: Argument 2 is no longer available>\n\
             ### Stack trace\nat f (a.js:1:5)\nNote: line and column numbers use 1-based indexing"
        );
        assert_eq!(data["consoleMessage"]["argsCount"], json!(3));
        assert_eq!(
            console.detail(5, None, &|_| None),
            Err("Request not found for selected page".to_string())
        );
        assert_eq!(console.detail(0, None, &|_| None), Ok((vec![], json!({}))));
    }

    #[test]
    fn empty_text_takes_the_first_argument() {
        let mut console = console();
        log(&mut console, "log", json!([{"type": "undefined"}]));
        let (lines, data) = console.detail(1, None, &|_| None).expect("message 1");
        assert_eq!(lines[1..3], ["Message: log> undefined", "### Stack trace"]);
        assert_eq!(data["consoleMessage"]["args"], json!([]));
        assert_eq!(data["consoleMessage"]["argsCount"], json!(1));
        let (lines, _) = console.list(Page::default(), None, false, true);
        assert_eq!(lines[2], "msgid=1 [log]  (1 args)");
        assert_eq!(lines[3], "  at f (a.js:1:5)");
        assert_eq!(
            lines[4],
            "Note: stack trace line and column numbers use 1-based indexing"
        );
    }

    #[test]
    fn navigations_keep_three_buckets_and_stable_ids() {
        let mut console = console();
        for round in 0..5 {
            log(
                &mut console,
                "log",
                json!([{"type": "string", "value": format!("nav {round}")}]),
            );
            console.navigated();
        }
        log(
            &mut console,
            "log",
            json!([{"type": "string", "value": "current"}]),
        );
        let (lines, _) = console.list(Page::default(), None, false, false);
        assert_eq!(lines[2], "msgid=6 [log] current (1 args)");
        let (lines, _) = console.list(Page::default(), None, true, false);
        assert_eq!(
            &lines[2..],
            [
                "msgid=4 [log] nav 3 (1 args)",
                "msgid=5 [log] nav 4 (1 args)",
                "msgid=6 [log] current (1 args)"
            ]
        );
        assert!(
            console.detail(5, None, &|_| None).is_ok()
                && console.detail(3, None, &|_| None).is_err()
        );
        console.navigated();
        let (lines, data) = console.list(Page::default(), None, false, false);
        assert_eq!(
            text(&lines),
            "## Console messages\n<no console messages found>"
        );
        assert_eq!(data, json!({}));
    }
}
