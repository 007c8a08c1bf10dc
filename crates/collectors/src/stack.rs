//! Stack traces as the reference prints them. It builds them with the DevTools frontend, so a
//! frame reads `at <function> (<file>:<line>:<column>)` with DevTools' file names: the script's
//! last path component for scripts loaded from a URL (or given a `sourceURL`) and, as 1.11.0
//! does, for scripts inline in a document (at document positions), `VM<id> <name>` for
//! anonymous ones, and the raw 0-based
//! position when the script is gone (after the page navigated). Frames from `node_modules`
//! are ignore-listed. Source maps are not applied.

use super::urls::{complete_url, extract_name, ignore_listed, parse_url, source_name};
use serde_json::Value;
use std::collections::HashMap;

/// The reference's cap on printed stack lines.
const MAX_LINES: usize = 50;
/// Scripts remembered per page before the oldest are forgotten wholesale.
const MAX_SCRIPTS: usize = 20_000;

/// An error resolved like the reference's `SymbolizedError`: message, raw stack, cause.
#[derive(Debug, Clone, PartialEq)]
pub struct Symbolized {
    pub message: String,
    /// A `Runtime.StackTrace`.
    pub stack: Option<Value>,
    pub cause: Option<Box<Symbolized>>,
}

#[derive(Debug, Clone)]
struct Script {
    url: String,
    start_line: i64,
    start_column: i64,
    has_source_url: bool,
    context: i64,
    content_script: bool,
    wasm: bool,
    /// The URL DevTools' resource mapping gives the script, while it holds it.
    resource_url: Option<String>,
}

impl Script {
    fn inline(&self) -> bool {
        !self.wasm && !self.url.is_empty() && (self.start_line != 0 || self.start_column != 0)
    }
}

/// The scripts of a page (`Debugger.scriptParsed`), to name stack frames.
#[derive(Debug, Default)]
pub(crate) struct Scripts {
    by_id: HashMap<String, Script>,
    /// Which script holds each resource URL (a newer script with the same URL replaces it).
    owners: HashMap<String, String>,
    page_url: String,
}

impl Scripts {
    pub fn set_page_url(&mut self, url: &str) {
        self.page_url = url.to_string();
    }

    /// `Debugger.scriptParsed`.
    pub fn parsed(&mut self, params: &Value) {
        let Some(id) = params["scriptId"].as_str() else {
            return;
        };
        if self.by_id.contains_key(id) {
            return;
        }
        if self.by_id.len() >= MAX_SCRIPTS {
            self.by_id.clear();
            self.owners.clear();
        }
        let aux = &params["executionContextAuxData"];
        let mut script = Script {
            url: params["url"].as_str().unwrap_or_default().to_string(),
            start_line: params["startLine"].as_i64().unwrap_or(0),
            start_column: params["startColumn"].as_i64().unwrap_or(0),
            has_source_url: params["hasSourceURL"].as_bool().unwrap_or(false),
            context: params["executionContextId"].as_i64().unwrap_or(0),
            content_script: aux.get("isDefault").is_some_and(|default| default == false),
            wasm: params["scriptLanguage"] == "WebAssembly",
            resource_url: None,
        };
        let live_edit = params["isLiveEdit"].as_bool().unwrap_or(false);
        let accepted = !live_edit
            && !script.url.is_empty()
            && (script.has_source_url || !script.inline())
            && (!script.content_script
                || script.has_source_url
                || parse_url(&script.url).is_some());
        if accepted {
            let url = if script.has_source_url {
                complete_url(&self.page_url, &script.url).unwrap_or_else(|| script.url.clone())
            } else {
                script.url.clone()
            };
            if let Some(previous) = self.owners.insert(url.clone(), id.to_string())
                && let Some(old) = self.by_id.get_mut(&previous)
            {
                old.resource_url = None;
            }
            script.resource_url = Some(url);
        }
        self.by_id.insert(id.to_string(), script);
    }

    /// `Runtime.executionContextDestroyed`: its scripts lose their resource names.
    pub fn context_destroyed(&mut self, context: i64) {
        for script in self
            .by_id
            .values_mut()
            .filter(|script| script.context == context)
        {
            if let Some(url) = script.resource_url.take() {
                self.owners.remove(&url);
            }
        }
    }

    /// `Runtime.executionContextsCleared`: DevTools forgets every script.
    pub fn cleared(&mut self) {
        self.by_id.clear();
        self.owners.clear();
    }

    /// Whether DevTools can build this stack: every frame's script must still be known (the
    /// reference waits for unknown scripts, times out and drops the whole stack).
    fn known(&self, stack: &Value) -> bool {
        let mut level = Some(stack);
        while let Some(current) = level {
            let frames = current["callFrames"].as_array().into_iter().flatten();
            if !frames.into_iter().all(|frame| {
                frame["scriptId"]
                    .as_str()
                    .is_some_and(|id| self.by_id.contains_key(id))
            }) {
                return false;
            }
            level = current.get("parent");
        }
        true
    }

    /// `formatStackTrace`: the lines (capped at 50), then an optional 1-based note; `None` when
    /// the reference could not build the stack.
    pub fn format(&self, stack: &Value, cause: Option<&Symbolized>, note: bool) -> Option<String> {
        if !self.known(stack) {
            return None;
        }
        let lines = self.inner(Some(stack), cause, 0);
        let mut out: Vec<String> = lines.iter().take(MAX_LINES).cloned().collect();
        if lines.len() > MAX_LINES {
            out.push(format!("... and {} more frames", lines.len() - MAX_LINES));
        }
        if note {
            out.push("Note: line and column numbers use 1-based indexing".to_string());
        }
        out.retain(|line| !line.is_empty());
        Some(out.join("\n"))
    }

    /// An error argument or cause: its message, then its stack when it has one.
    pub fn format_error(&self, error: &Symbolized) -> String {
        let mut parts = vec![error.message.clone()];
        if let Some(stack) = error
            .stack
            .as_ref()
            .and_then(|stack| self.format(stack, error.cause.as_deref(), true))
        {
            parts.push(stack);
        }
        parts.retain(|part| !part.is_empty());
        parts.join("\n")
    }

    fn inner(
        &self,
        stack: Option<&Value>,
        cause: Option<&Symbolized>,
        depth: usize,
    ) -> Vec<String> {
        let Some(stack) = stack.filter(|stack| self.known(stack)) else {
            return Vec::new();
        };
        let mut lines = self.fragment(&stack["callFrames"]);
        let mut parent = stack.get("parent");
        while let Some(async_stack) = parent {
            let frames = self.fragment(&async_stack["callFrames"]);
            if !frames.is_empty() {
                let description = async_stack["description"].as_str().unwrap_or_default();
                let description = if description.is_empty() {
                    "async"
                } else {
                    description
                };
                let prefix = format!("--- {description} ");
                let pad = 40usize.saturating_sub(prefix.encode_utf16().count());
                lines.push(format!("{prefix}{}", "-".repeat(pad)));
                lines.extend(frames);
            }
            parent = async_stack.get("parent");
        }
        if let Some(cause) = cause
            && depth < 16
        {
            lines.push(format!("Caused by: {}", cause.message));
            lines.extend(self.inner(cause.stack.as_ref(), cause.cause.as_deref(), depth + 1));
        }
        lines
    }

    fn fragment(&self, frames: &Value) -> Vec<String> {
        let Some(frames) = frames.as_array() else {
            return Vec::new();
        };
        frames
            .iter()
            .filter_map(|frame| self.frame(frame))
            .collect()
    }

    /// One frame, or `None` when it is ignore-listed.
    fn frame(&self, frame: &Value) -> Option<String> {
        let name = frame["functionName"].as_str().unwrap_or_default();
        let url = frame["url"].as_str().unwrap_or_default();
        let line = frame["lineNumber"].as_i64().unwrap_or(0);
        let column = frame["columnNumber"].as_i64().unwrap_or(0);
        let script = frame["scriptId"]
            .as_str()
            .and_then(|id| Some((id, self.by_id.get(id)?)));
        let Some((id, script)) = script else {
            if ignore_listed(url) {
                return None;
            }
            return Some(if url.is_empty() {
                format!("at {name}")
            } else {
                format!("at {name} ({url}:{line}:{column})")
            });
        };
        let (file, line, column) = match &script.resource_url {
            Some(resource) => {
                if script.content_script || ignore_listed(resource) {
                    return None;
                }
                (source_name(resource), line, column)
            }
            // 1.11.0 names an inline script's frames after its document, at document
            // positions (the raw ones).
            None if !script.has_source_url && script.inline() => {
                (source_name(&script.url), line, column)
            }
            None => {
                let short = extract_name(&script.url);
                let vm = if short.is_empty() {
                    format!("debugger:///VM{id}")
                } else {
                    format!("debugger:///VM{id} {short}")
                };
                (source_name(&vm), line, column)
            }
        };
        if script.wasm {
            return Some(format!("at {name} ({file}:0x{column:x})"));
        }
        Some(format!("at {name} ({file}:{}:{})", line + 1, column + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::{Scripts, Symbolized};
    use serde_json::{Value, json};

    fn scripts() -> Scripts {
        let mut scripts = Scripts::default();
        scripts.set_page_url("http://127.0.0.1:8000/console.html");
        let parsed = |id: &str, url: &str, line: i64, column: i64, source_url: bool| {
            json!({"scriptId": id, "url": url, "startLine": line, "startColumn": column,
                   "hasSourceURL": source_url, "executionContextId": 1,
                   "executionContextAuxData": {"isDefault": true}})
        };
        scripts.parsed(&parsed(
            "5",
            "http://127.0.0.1:8000/console.html",
            1,
            8,
            false,
        ));
        scripts.parsed(&parsed("6", "http://127.0.0.1:8000/lib.js", 0, 0, false));
        scripts.parsed(&parsed("7", "", 0, 0, false));
        scripts.parsed(&parsed("8", "./node_modules/foo.js", 3, 0, true));
        scripts.parsed(&parsed("9", "'main.js'", 12, 0, true));
        scripts
    }

    fn frame(name: &str, script: &str, url: &str, line: i64, column: i64) -> Value {
        json!({"functionName": name, "scriptId": script, "url": url,
               "lineNumber": line, "columnNumber": column})
    }

    #[test]
    fn frames_are_named_as_devtools_names_them() {
        let scripts = scripts();
        let page = "http://127.0.0.1:8000/console.html";
        let stack = json!({"callFrames": [
            frame("libLog", "6", "http://127.0.0.1:8000/lib.js", 1, 10),
            frame("", "5", page, 17, 0),
            frame("failingFn", "5", page, 1, 20),
            frame("", "7", "", 0, 8),
            frame("ignored", "8", "./node_modules/foo.js", 1, 1),
            frame("callback", "9", "'main.js'", 2, 20),
        ], "parent": {"description": "setTimeout", "callFrames": [frame("", "5", page, 19, 0)],
                      "parent": {"callFrames": [frame("", "5", page, 2, 0)]}}});
        assert_eq!(
            scripts
                .format(&stack, None, true)
                .as_deref()
                .unwrap_or_default(),
            "at libLog (lib.js:2:11)\nat  (console.html:18:1)\n\
             at failingFn (console.html:2:21)\nat  (VM7:1:9)\nat callback ('main.js':3:21)\n\
             --- setTimeout -------------------------\n\
             at  (console.html:20:1)\n--- async ------------------------------\n\
             at  (console.html:3:1)\nNote: line and column numbers use 1-based indexing"
        );
    }

    #[test]
    fn causes_follow_and_long_traces_are_cut() {
        let mut scripts = scripts();
        let frames: Vec<Value> = (0..60)
            .map(|i| {
                let url = format!("http://h/m{i}.js");
                scripts.parsed(&json!({"scriptId": format!("s{i}"), "url": url}));
                frame(&format!("fn{i}"), &format!("s{i}"), &url, i, i)
            })
            .collect();
        let text = scripts
            .format(&json!({"callFrames": frames}), None, false)
            .unwrap_or_default();
        assert!(
            text.ends_with("at fn49 (m49.js:50:50)\n... and 10 more frames"),
            "{text}"
        );
        let cause = Symbolized {
            message: "TypeError: b00m".into(),
            stack: Some(json!({"callFrames": [frame("compute", "6", "", 4, 7)]})),
            cause: None,
        };
        let error = Symbolized {
            message: "Error: foo failed".into(),
            stack: Some(json!({"callFrames": []})),
            cause: Some(Box::new(cause)),
        };
        assert_eq!(
            scripts.format_error(&error),
            "Error: foo failed\nCaused by: TypeError: b00m\nat compute (lib.js:5:8)\n\
             Note: line and column numbers use 1-based indexing"
        );
    }

    #[test]
    fn navigation_forgets_scripts_and_destroyed_contexts_lose_names() {
        let mut scripts = scripts();
        let lib = json!({"callFrames": [frame("f", "6", "http://127.0.0.1:8000/lib.js", 1, 2)]});
        scripts.context_destroyed(1);
        assert_eq!(
            scripts.format(&lib, None, false).as_deref(),
            Some("at f (VM6 lib.js:2:3)")
        );
        scripts.cleared();
        // The reference drops a stack whose scripts DevTools no longer knows.
        assert_eq!(scripts.format(&lib, None, false), None);
        let error = Symbolized {
            message: "Error: x".into(),
            stack: Some(lib),
            cause: None,
        };
        assert_eq!(scripts.format_error(&error), "Error: x");
    }
}
