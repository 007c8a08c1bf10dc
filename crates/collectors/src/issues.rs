//! DevTools issues (`Audits.issueAdded`) as console messages, the way chrome-devtools-mcp
//! 1.11.0 lists them: DevTools' own issue model makes each protocol issue, repeats (equal
//! primary keys) are dropped, issues aggregate by code until the next cross-document navigation,
//! and each aggregate is one message (`msgid=N [issue] <title> (count: N)`). An aggregate whose
//! description DevTools cannot title still takes its id but is never shown.

mod deprecations;
mod descriptions;
mod js;
mod kinds;

use descriptions::DESCRIPTIONS;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};

/// Primary keys remembered per navigation; a page that raises more gets no further issues.
const MAX_SEEN: usize = 10_000;
/// Instances kept per aggregate for `### Affected resources`; the count goes on beyond.
const MAX_INSTANCES: usize = 100;

/// Cookie issues DevTools leaves out of its aggregates (third-party cookie phase-out).
const NOT_AGGREGATED: &[&str] = &[
    "WarnThirdPartyCookieHeuristic",
    "WarnDeprecationTrialMetadata",
    "WarnThirdPartyPhaseout",
    "ExcludeThirdPartyPhaseout",
];

/// One aggregate: its title and text, from the first instance's description.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Aggregated {
    /// `None`: DevTools has no titled description for it (the message is never shown).
    pub title: Option<String>,
    /// The markdown with its placeholders filled.
    pub markdown: Option<String>,
    pub links: Vec<(String, String)>,
    pub count: u64,
    /// Each kept instance's details (the `…IssueDetails` object).
    pub instances: Vec<Value>,
}

/// What one protocol issue changes.
#[derive(Debug, PartialEq)]
pub(crate) enum Added {
    /// A new aggregate (of `code`): a new console message.
    New {
        code: String,
        aggregated: Box<Aggregated>,
    },
    /// Another instance of the aggregate shown as message `id`.
    Instance {
        id: u64,
        details: Value,
    },
    Nothing,
}

/// The aggregation state of the current document.
#[derive(Debug, Default)]
pub(crate) struct Issues {
    seen: HashSet<String>,
    /// Aggregate code to the id of its message.
    by_code: HashMap<String, u64>,
}

impl Issues {
    /// `Audits.issueAdded`'s `issue`.
    pub fn add(&mut self, protocol: &Value) -> Added {
        let Some(kind) = kinds::kind(protocol) else {
            return Added::Nothing;
        };
        if self.seen.len() >= MAX_SEEN || !self.seen.insert(kind.primary_key) {
            return Added::Nothing;
        }
        if NOT_AGGREGATED.iter().any(|name| kind.code.contains(name)) {
            return Added::Nothing;
        }
        let details = details_of(protocol);
        if let Some(id) = self.by_code.get(&kind.code) {
            return Added::Instance { id: *id, details };
        }
        let (title, markdown, links) = match kind.description {
            Some(description) => match text(&description) {
                Some((title, markdown)) => (Some(title), Some(markdown), description.links),
                None => (None, None, Vec::new()),
            },
            None => (None, None, Vec::new()),
        };
        Added::New {
            code: kind.code,
            aggregated: Box::new(Aggregated {
                title,
                markdown,
                links,
                count: 1,
                instances: vec![details],
            }),
        }
    }

    /// Remembers which message shows the aggregate of `code`.
    pub fn shown_as(&mut self, code: String, id: u64) {
        self.by_code.insert(code, id);
    }

    /// A cross-document navigation of the main frame: aggregation starts over.
    pub fn reset(&mut self) {
        self.seen.clear();
        self.by_code.clear();
    }
}

impl Aggregated {
    pub fn add_instance(&mut self, details: Value) {
        self.count += 1;
        if self.instances.len() < MAX_INSTANCES {
            self.instances.push(details);
        }
    }

    /// `msgid=N [issue] <title> (count: N)` and its structured form; `None` when untitled.
    pub fn listed(&self, id: u64) -> Option<(String, Value)> {
        let title = self.title.as_ref()?;
        Some((
            format!("msgid={id} [issue] {title} (count: {})", self.count),
            json!({"type": "issue", "title": title, "count": self.count, "id": id}),
        ))
    }

    /// `get_console_message`'s lines and `consoleMessage` for this aggregate. `node` gives the
    /// uid of a backend node in the page's last snapshot (`None`: no snapshot was taken);
    /// `request` the reqid of a protocol request id.
    pub fn detail(
        &self,
        id: u64,
        node: Option<&dyn Fn(i64) -> Option<String>>,
        request: &dyn Fn(&str) -> Option<u64>,
    ) -> Result<(Vec<String>, Value), String> {
        let title = self
            .title
            .as_ref()
            .ok_or_else(|| format!("Can't provide details for the msgid {id}"))?;
        let markdown = self.markdown.clone().unwrap_or_default();
        let mut body = Vec::new();
        let trimmed = markdown.trim();
        let trimmed = trimmed
            .strip_prefix("# ")
            .map(str::trim_start)
            .unwrap_or(trimmed);
        body.push(if trimmed.is_empty() {
            title.clone()
        } else {
            trimmed.to_string()
        });
        if !self.links.is_empty() {
            body.push("Learn more:".to_string());
            for (link, link_title) in &self.links {
                body.push(format!("[{link_title}]({link})"));
            }
        }
        let resources: Vec<Map<String, Value>> = self
            .instances
            .iter()
            .map(|details| affected(details, node, request))
            .collect();
        if !resources.is_empty() {
            body.push("### Affected resources".to_string());
            for resource in &resources {
                let mut parts = Vec::new();
                if let Some(uid) = resource.get("uid").and_then(Value::as_str) {
                    parts.push(format!("uid={uid}"));
                }
                match resource.get("request") {
                    Some(Value::Number(reqid)) => parts.push(format!("reqid={reqid}")),
                    Some(Value::String(url)) if !url.is_empty() => parts.push(format!("url={url}")),
                    _ => {}
                }
                if let Some(data) = resource.get("data") {
                    parts.push(format!("data={}", js::stringify(data)));
                }
                body.push(parts.join(" "));
            }
        }
        let mut lines = vec![format!("ID: {id}")];
        lines.extend(
            format!("Message: issue> {}", body.join("\n"))
                .split('\n')
                .map(str::to_string),
        );
        let links: Vec<Value> = self
            .links
            .iter()
            .map(|(link, link_title)| json!({"link": link, "linkTitle": link_title}))
            .collect();
        let message = json!({"id": id, "type": "issue", "count": self.count, "title": title,
                             "description": markdown, "links": links,
                             "affectedResources": resources});
        Ok((lines, json!({ "consoleMessage": message })))
    }
}

/// The `…IssueDetails` object of a protocol issue.
fn details_of(protocol: &Value) -> Value {
    protocol["details"]
        .as_object()
        .and_then(|details| details.values().find(|value| value.is_object()))
        .cloned()
        .unwrap_or_else(|| json!({}))
}

/// One affected resource: the instance's details without what the uid and reqid replace.
fn affected(
    details: &Value,
    node: Option<&dyn Fn(i64) -> Option<String>>,
    request: &dyn Fn(&str) -> Option<u64>,
) -> Map<String, Value> {
    let mut data = details.as_object().cloned().unwrap_or_default();
    let mut uid = None;
    if let Some(node) = node {
        for field in ["violatingNodeId", "nodeId", "documentNodeId"] {
            if let Some(backend) = details[field].as_i64().filter(|id| *id != 0) {
                uid = node(backend);
                data.shift_remove(field);
            }
        }
    }
    let mut shown_request = None;
    if let Some(sent) = details["request"].as_object() {
        shown_request = sent.get("url").cloned();
        let resolved = sent
            .get("requestId")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .and_then(request);
        if let Some(reqid) = resolved {
            shown_request = Some(json!(reqid));
            if let Some(Value::Object(sent)) = data.get_mut("request") {
                sent.shift_remove("requestId");
            }
        }
    }
    data.shift_remove("errorType");
    data.shift_remove("frameId");
    let mut resource = Map::new();
    if let Some(uid) = uid.filter(|uid| !uid.is_empty()) {
        resource.insert("uid".into(), json!(uid));
    }
    resource.insert("data".into(), Value::Object(data));
    if let Some(shown) = shown_request.filter(|shown| !shown.is_null()) {
        resource.insert("request".into(), shown);
    }
    resource
}

/// The title and filled-in markdown of a description, or `None` where DevTools' markdown
/// parser throws (no file, no level-one heading first, placeholders that do not match).
fn text(description: &kinds::Description) -> Option<(String, String)> {
    let index = DESCRIPTIONS
        .binary_search_by_key(&description.file.as_str(), |(file, _)| file)
        .ok()?;
    let raw = DESCRIPTIONS[index]
        .1
        .replace("\r\n", "\n")
        .replace('\r', "\n");
    let markdown = match &description.substitutions {
        None => raw.clone(),
        Some(substitutions) => {
            let used = placeholders(&raw);
            let valid = substitutions
                .iter()
                .all(|(key, _)| is_placeholder_name(key) && used.contains(&key.as_str()))
                && used
                    .iter()
                    .all(|name| substitutions.iter().any(|(key, _)| key == name));
            if !valid {
                return None;
            }
            fill(&raw, substitutions)
        }
    };
    Some((title(&raw)?, markdown))
}

/// A level-one ATX heading's text as `marked` reads it from the first line.
fn title(markdown: &str) -> Option<String> {
    let line = markdown.split('\n').next()?;
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = line[indent.min(3)..].strip_prefix('#')?;
    if indent > 3 || !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let mut text = rest.trim().to_string();
    if text.ends_with('#') {
        let stripped = text.trim_end_matches('#');
        if stripped.is_empty() || stripped.ends_with(' ') {
            text = stripped.trim().to_string();
        }
    }
    (!text.is_empty()).then_some(text)
}

fn is_placeholder_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("PLACEHOLDER_") else {
        return false;
    };
    let mut chars = rest.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Every `{PLACEHOLDER_…}` in `markdown`, in order, with the byte range it spans.
fn placeholder_spans(markdown: &str) -> Vec<(usize, usize, &str)> {
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(start) = markdown[from..].find("{PLACEHOLDER_").map(|at| from + at) {
        let name_start = start + 1;
        let name_end = markdown[name_start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(markdown.len(), |at| name_start + at);
        let name = &markdown[name_start..name_end];
        if markdown[name_end..].starts_with('}') && is_placeholder_name(name) {
            spans.push((start, name_end + 1, name));
            from = name_end + 1;
        } else {
            from = name_start;
        }
    }
    spans
}

fn placeholders(markdown: &str) -> Vec<&str> {
    placeholder_spans(markdown)
        .into_iter()
        .map(|(_, _, name)| name)
        .collect()
}

/// The markdown with each placeholder replaced by its value.
fn fill(markdown: &str, substitutions: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut last = 0;
    for (start, end, name) in placeholder_spans(markdown) {
        out.push_str(&markdown[last..start]);
        if let Some((_, value)) = substitutions.iter().find(|(key, _)| key == name) {
            out.push_str(value);
        }
        last = end;
    }
    out.push_str(&markdown[last..]);
    out
}

#[cfg(test)]
mod tests;
