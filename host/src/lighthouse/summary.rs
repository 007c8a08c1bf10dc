//! The text 1.11.0 prints for a Lighthouse result (`## Lighthouse audit results`): scores,
//! the audit counts, each failed audit with the DOM nodes it flags, and the report paths.

use serde_json::{Map, Value};

/// Nodes shown inline per failed audit; the reports keep them all.
const MAX_NODES_PER_AUDIT: usize = 10;

/// The response lines for `lhr` (Lighthouse's JSON result).
pub fn report_lines(mode: &str, device: &str, lhr: &Value, reports: &[String]) -> Vec<String> {
    let mut lines = vec![
        "## Lighthouse audit results".to_string(),
        format!("Mode: {mode}"),
        format!("Device: {device}"),
        format!("URL: {}", text(&lhr["finalDisplayedUrl"])),
        "### Category scores".to_string(),
    ];
    let categories = lhr["categories"].as_object().cloned().unwrap_or_default();
    for category in categories.values() {
        let score = match category["score"].as_f64() {
            Some(score) => format_number((score * 100.0).round()),
            None => "n/a".to_string(),
        };
        lines.push(format!(
            "- {}: {score} ({})",
            text(&category["title"]),
            text(&category["id"])
        ));
    }
    let audits = lhr["audits"].as_object().cloned().unwrap_or_default();
    let failed = failed_audits(&categories, &audits);
    let passed = audits
        .values()
        .filter(|audit| audit["score"].as_f64() == Some(1.0))
        .count();
    lines.push("### Audit summary".to_string());
    lines.push(format!("Passed: {passed}"));
    lines.push(format!("Failed: {}", failed.len()));
    lines.push(format!(
        "Total timing: {}ms",
        number_text(&lhr["timing"]["total"])
    ));
    if !failed.is_empty() {
        lines.push("### Failed audits".to_string());
        for audit in &failed {
            audit.write(&mut lines);
        }
    }
    lines.push("### Reports".to_string());
    lines.extend(reports.iter().map(|report| format!("- {report}")));
    lines
}

struct FailedAudit {
    id: String,
    title: String,
    score: String,
    categories: Vec<String>,
    description: Option<String>,
    display_value: Option<String>,
    nodes: Vec<Node>,
    total_nodes: usize,
}

#[derive(Default, Clone)]
struct Node {
    selector: Option<String>,
    snippet: Option<String>,
    label: Option<String>,
    explanation: Option<String>,
}

impl FailedAudit {
    fn write(&self, lines: &mut Vec<String>) {
        let categories = if self.categories.is_empty() {
            String::new()
        } else {
            format!(" [{}]", self.categories.join(", "))
        };
        let display = self
            .display_value
            .as_ref()
            .map(|value| format!(" ({value})"))
            .unwrap_or_default();
        lines.push(format!(
            "- {}{categories}: {}{display} (score: {})",
            self.id, self.title, self.score
        ));
        if let Some(description) = &self.description {
            lines.push(format!("  {}", collapse(description)));
        }
        if self.total_nodes > 0 {
            let shown = if self.total_nodes > self.nodes.len() {
                format!(", showing {}", self.nodes.len())
            } else {
                String::new()
            };
            lines.push(format!("  Nodes ({}{shown}):", self.total_nodes));
        }
        for node in &self.nodes {
            let mut parts = Vec::new();
            if let Some(selector) = &node.selector {
                parts.push(format!("selector={}", json_string(selector)));
            }
            if let Some(label) = &node.label {
                parts.push(format!("label={}", json_string(&collapse(label))));
            }
            if let Some(snippet) = &node.snippet {
                parts.push(format!("snippet={}", json_string(&collapse(snippet))));
            }
            lines.push(format!("  - {}", parts.join(" ")));
            if let Some(explanation) = &node.explanation {
                lines.push(format!("    {}", collapse(explanation)));
            }
        }
    }
}

/// Audits with a score below 1 (not null), in the report's order, with the categories that
/// reference them and their deduplicated nodes.
fn failed_audits(categories: &Map<String, Value>, audits: &Map<String, Value>) -> Vec<FailedAudit> {
    let mut by_audit: Vec<(String, Vec<String>)> = Vec::new();
    for category in categories.values() {
        let id = text(&category["id"]);
        for reference in category["auditRefs"].as_array().into_iter().flatten() {
            let audit_id = text(&reference["id"]);
            match by_audit.iter_mut().find(|(name, _)| *name == audit_id) {
                Some((_, list)) => list.push(id.clone()),
                None => by_audit.push((audit_id, vec![id.clone()])),
            }
        }
    }
    let mut failed = Vec::new();
    for audit in audits.values() {
        let Some(score) = audit["score"].as_f64() else {
            continue;
        };
        if score >= 1.0 {
            continue;
        }
        let mut nodes: Vec<(String, Node)> = Vec::new();
        collect_nodes(&audit["details"], &mut nodes);
        let id = text(&audit["id"]);
        let total_nodes = nodes.len();
        failed.push(FailedAudit {
            categories: by_audit
                .iter()
                .find(|(name, _)| *name == id)
                .map(|(_, list)| list.clone())
                .unwrap_or_default(),
            id,
            title: text(&audit["title"]),
            score: number_text(&audit["score"]),
            description: non_empty(&audit["description"]),
            display_value: non_empty(&audit["displayValue"]),
            nodes: nodes
                .into_iter()
                .take(MAX_NODES_PER_AUDIT)
                .map(|(_, node)| node)
                .collect(),
            total_nodes,
        });
    }
    failed
}

/// Every `node` value in an audit's details (tables, lists), sub-items and debug data aside;
/// duplicates (same `lhId`/`path`, or same selector and snippet) merge, first fields win.
fn collect_nodes(value: &Value, nodes: &mut Vec<(String, Node)>) {
    match value {
        Value::Array(items) => items.iter().for_each(|item| collect_nodes(item, nodes)),
        Value::Object(object) => {
            let kind = object.get("type").and_then(Value::as_str);
            if matches!(kind, Some("debugdata" | "subitems")) {
                return;
            }
            if kind == Some("node") {
                let key = node_key(object, nodes.len());
                let node = Node {
                    selector: non_empty(&value["selector"]),
                    snippet: non_empty(&value["snippet"]),
                    label: non_empty(&value["nodeLabel"]),
                    explanation: non_empty(&value["explanation"]),
                };
                match nodes.iter_mut().find(|(existing, _)| *existing == key) {
                    Some((_, existing)) => {
                        existing.selector = existing.selector.take().or(node.selector);
                        existing.snippet = existing.snippet.take().or(node.snippet);
                        existing.label = existing.label.take().or(node.label);
                        existing.explanation = existing.explanation.take().or(node.explanation);
                    }
                    None => nodes.push((key, node)),
                }
                return;
            }
            for (name, child) in object {
                if name != "subItems" {
                    collect_nodes(child, nodes);
                }
            }
        }
        _ => {}
    }
}

fn node_key(node: &Map<String, Value>, count: usize) -> String {
    let field = |name: &str| {
        node.get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    if let Some(id) = field("lhId").or_else(|| field("path")) {
        return format!("id:{id}");
    }
    let (selector, snippet) = (field("selector"), field("snippet"));
    if selector.is_some() || snippet.is_some() {
        return format!(
            "selector:{}|{}",
            selector.unwrap_or_default(),
            snippet.unwrap_or_default()
        );
    }
    format!("unidentified:{count}")
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => "undefined".to_string(),
        other => other.to_string(),
    }
}

fn non_empty(value: &Value) -> Option<String> {
    value
        .as_str()
        .filter(|text| !text.is_empty())
        .map(str::to_string)
}

/// A number as JavaScript prints it (`0.5`, `1`, `1234.5`).
fn number_text(value: &Value) -> String {
    match value.as_f64() {
        Some(number) => format_number(number),
        None => text(value),
    }
}

fn format_number(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        // Whole numbers print without a fraction, as in JavaScript.
        #[allow(clippy::cast_possible_truncation)]
        let whole = number as i64;
        whole.to_string()
    } else {
        number.to_string()
    }
}

fn collapse(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn json_string(value: &str) -> String {
    Value::from(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summary_lists_scores_failures_and_nodes() {
        let lhr = json!({
            "finalDisplayedUrl": "http://127.0.0.1:1/",
            "timing": { "total": 1234.5 },
            "categories": {
                "accessibility": { "id": "accessibility", "title": "Accessibility", "score": 0.53,
                    "auditRefs": [{ "id": "image-alt" }, { "id": "document-title" }] },
                "seo": { "id": "seo", "title": "SEO", "score": null, "auditRefs": [{ "id": "image-alt" }] }
            },
            "audits": {
                "document-title": { "id": "document-title", "title": "Has a title", "score": 1 },
                "image-alt": { "id": "image-alt", "title": "Images lack alt", "score": 0,
                    "description": "Informative  elements\nshould have alt.",
                    "details": { "type": "table", "items": [
                        { "node": { "type": "node", "lhId": "1", "selector": "body > img", "snippet": "<img src=\"x.png\">", "nodeLabel": "img" } },
                        { "node": { "type": "node", "lhId": "1", "explanation": "Fix this" } },
                        { "subItems": { "type": "subitems", "items": [{ "type": "node", "lhId": "9" }] } }
                    ] } },
                "manual": { "id": "manual", "title": "Manual", "score": null }
            }
        });
        let lines = report_lines("navigation", "desktop", &lhr, &["/tmp/report.json".into()]);
        assert_eq!(
            lines,
            vec![
                "## Lighthouse audit results",
                "Mode: navigation",
                "Device: desktop",
                "URL: http://127.0.0.1:1/",
                "### Category scores",
                "- Accessibility: 53 (accessibility)",
                "- SEO: n/a (seo)",
                "### Audit summary",
                "Passed: 1",
                "Failed: 1",
                "Total timing: 1234.5ms",
                "### Failed audits",
                "- image-alt [accessibility, seo]: Images lack alt (score: 0)",
                "  Informative elements should have alt.",
                "  Nodes (1):",
                "  - selector=\"body > img\" label=\"img\" snippet=\"<img src=\\\"x.png\\\">\"",
                "    Fix this",
                "### Reports",
                "- /tmp/report.json",
            ]
        );
    }
}
