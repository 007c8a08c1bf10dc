//! The scenario's actions in each server's own tools: chrome-devtools-mcp's (which
//! devtools-mcp shares) and Playwright MCP's, so one scenario drives all three servers.

use serde_json::{Value, json};

/// Which tool set a server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// chrome-devtools-mcp's tools: `new_page`, `take_snapshot`, `click {uid}`, …
    DevTools,
    /// Playwright MCP's: `browser_navigate`, `browser_snapshot`, `browser_click {target}`, …
    Playwright,
}

/// One tool call: its name and arguments.
pub type Call = (&'static str, Value);

impl Dialect {
    /// Opens the first page (which launches the browser). Playwright MCP has a tab from the
    /// start and launches its browser on the first call, so it navigates that tab.
    pub fn new_page(self, url: &str) -> Call {
        match self {
            Dialect::DevTools => ("new_page", json!({ "url": url })),
            Dialect::Playwright => ("browser_navigate", json!({ "url": url })),
        }
    }

    pub fn navigate(self, url: &str) -> Call {
        match self {
            Dialect::DevTools => ("navigate_page", json!({ "type": "url", "url": url })),
            Dialect::Playwright => ("browser_navigate", json!({ "url": url })),
        }
    }

    pub fn snapshot(self) -> Call {
        match self {
            Dialect::DevTools => ("take_snapshot", json!({})),
            Dialect::Playwright => ("browser_snapshot", json!({})),
        }
    }

    /// The snapshot of one element's subtree (devtools-mcp needs
    /// `--experimentalScopedSnapshots`; chrome-devtools-mcp 1.11.0 has none).
    pub fn scoped_snapshot(self, target: &str) -> Call {
        match self {
            Dialect::DevTools => ("take_snapshot", json!({ "uid": target })),
            Dialect::Playwright => ("browser_snapshot", json!({ "target": target })),
        }
    }

    /// Elements matching `text` (devtools-mcp's `find_in_page`, Playwright's `browser_find`).
    pub fn find(self, text: &str) -> Call {
        match self {
            Dialect::DevTools => ("find_in_page", json!({ "query": text })),
            Dialect::Playwright => ("browser_find", json!({ "text": text })),
        }
    }

    pub fn click(self, target: &str) -> Call {
        match self {
            Dialect::DevTools => ("click", json!({ "uid": target })),
            Dialect::Playwright => ("browser_click", json!({ "target": target })),
        }
    }

    pub fn fill(self, target: &str, value: &str) -> Call {
        match self {
            Dialect::DevTools => ("fill", json!({ "uid": target, "value": value })),
            Dialect::Playwright => ("browser_type", json!({ "target": target, "text": value })),
        }
    }

    pub fn evaluate(self, function: &str) -> Call {
        match self {
            Dialect::DevTools => ("evaluate_script", json!({ "function": function })),
            Dialect::Playwright => ("browser_evaluate", json!({ "function": function })),
        }
    }

    pub fn screenshot(self) -> Call {
        match self {
            Dialect::DevTools => ("take_screenshot", json!({})),
            Dialect::Playwright => ("browser_take_screenshot", json!({ "type": "png" })),
        }
    }

    pub fn wait_for(self, text: &str) -> Call {
        match self {
            Dialect::DevTools => ("wait_for", json!({ "text": [text] })),
            Dialect::Playwright => ("browser_wait_for", json!({ "text": text })),
        }
    }

    /// The open pages (tabs).
    pub fn list_pages(self) -> Call {
        match self {
            Dialect::DevTools => ("list_pages", json!({})),
            Dialect::Playwright => ("browser_tabs", json!({ "action": "list" })),
        }
    }

    /// A page listing with an argument the tool does not have: it must be rejected.
    pub fn unknown_argument(self) -> Call {
        match self {
            Dialect::DevTools => ("list_pages", json!({ "notAParameter": true })),
            Dialect::Playwright => (
                "browser_tabs",
                json!({ "action": "list", "notAParameter": true }),
            ),
        }
    }

    /// The target of the first snapshot line containing `needle` (`button "Go"`): the uid in
    /// `uid=1_3 button "Go"`, the ref in `- button "Go" [ref=e5]`.
    pub fn target(self, snapshot: &str, needle: &str) -> Option<String> {
        let line = snapshot.lines().find(|l| l.contains(needle))?;
        let (marker, end): (&str, &[char]) = match self {
            Dialect::DevTools => ("uid=", &[' ', '\t']),
            Dialect::Playwright => ("[ref=", &[']']),
        };
        let start = line.find(marker)? + marker.len();
        let rest = &line[start..];
        let target = &rest[..rest.find(end).unwrap_or(rest.len())];
        (!target.is_empty()).then(|| target.to_owned())
    }

    /// The target of the page's main region (the first element whose role is `main`), for
    /// the scoped snapshot: `uid=1_7 main` or `- main [ref=e9]:`.
    pub fn main_target(self, snapshot: &str) -> Option<String> {
        let is_main = |line: &str| {
            let line = line.trim_start();
            let role = match self {
                Dialect::DevTools => line.strip_prefix("uid=").and_then(|rest| {
                    let mut words = rest.split(' ');
                    words.next();
                    words.next()
                }),
                Dialect::Playwright => line
                    .strip_prefix("- ")
                    .and_then(|rest| rest.split([' ', ':']).next()),
            };
            role == Some("main")
        };
        let line = snapshot.lines().find(|l| is_main(l))?;
        self.target(line, "main")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_targets_in_both_snapshot_formats() {
        let ours = "uid=1_0 RootWebArea\n  uid=1_4 button \"Go\"\n  uid=1_7 main\n";
        assert_eq!(
            Dialect::DevTools.target(ours, "button \"Go\""),
            Some("1_4".into())
        );
        assert_eq!(Dialect::DevTools.main_target(ours), Some("1_7".into()));
        let theirs = "- generic [ref=e2]:\n  - button \"Go\" [ref=e5]\n  - main [ref=e9]:\n";
        assert_eq!(
            Dialect::Playwright.target(theirs, "button \"Go\""),
            Some("e5".into())
        );
        assert_eq!(Dialect::Playwright.main_target(theirs), Some("e9".into()));
        assert_eq!(Dialect::Playwright.target(theirs, "textbox"), None);
    }

    #[test]
    fn main_is_a_role_not_a_word_in_a_name() {
        let ours = "uid=1_2 link \"the main menu\"\n  uid=1_3 main \"Content\"\n";
        assert_eq!(Dialect::DevTools.main_target(ours), Some("1_3".into()));
        let theirs = "- link \"the main thing\" [ref=e3]\n- main [ref=e4]:\n";
        assert_eq!(Dialect::Playwright.main_target(theirs), Some("e4".into()));
    }
}
