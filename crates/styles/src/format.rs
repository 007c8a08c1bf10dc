//! The text of `get_css_styles`: the pagination lines, then `CssFormatter.toString()`.

use super::cascade::{NodeRef, OutKind, OutRule};

/// Lines indented by two spaces per level (`IndentedWriter`).
struct Writer {
    lines: Vec<String>,
    indent: usize,
}

impl Writer {
    fn line(&mut self, text: &str) {
        self.lines
            .push(format!("{}{text}", " ".repeat(self.indent)));
    }

    fn open(&mut self, header: &str) {
        self.line(&format!("{header} {{"));
        self.indent += 2;
    }

    fn close(&mut self) {
        self.indent = self.indent.saturating_sub(2);
        self.line("}");
    }
}

/// The response lines for one page of `rules` (`pageSize` rules, page `page_idx`).
pub fn render(
    element: &NodeRef,
    uid: &str,
    rules: &[OutRule],
    page_size: u32,
    page_idx: u32,
) -> Vec<String> {
    let mut lines = Vec::new();
    let total = rules.len();
    let size = usize::try_from(page_size.max(1)).unwrap_or(usize::MAX);
    let pages = total.div_ceil(size).max(1);
    let requested = usize::try_from(page_idx).unwrap_or(usize::MAX);
    let current = if requested < pages {
        requested
    } else {
        lines.push("Invalid page number provided. Showing first page.".to_string());
        0
    };
    let start = current * size;
    let shown = &rules[start.min(total)..(start + size).min(total)];
    let end = start + shown.len();
    let first = if total == 0 { 0 } else { start + 1 };
    lines.push(format!(
        "Showing {first}-{end} of {total} (Page {} of {pages}).",
        current + 1
    ));
    if current + 1 < pages {
        lines.push(format!("Next page: {}", current + 1));
    }
    if current > 0 {
        lines.push(format!("Previous page: {}", current - 1));
    }
    lines.push(format!("Styles for {} (uid: \"{uid}\"):", element.selector));
    if shown.is_empty() {
        lines.push(String::new());
        lines.push("  (no styles)".to_string());
        return lines;
    }
    let mut writer = Writer {
        lines: Vec::new(),
        indent: 2,
    };
    for rule in shown {
        writer.lines.push(String::new());
        match &rule.kind {
            OutKind::Inherited(node) => {
                writer.line(&format!(
                    "Inherited from {}{}:",
                    node.selector,
                    uid_suffix(node, |uid| format!(" (uid: \"{uid}\")"))
                ));
                writer.indent += 2;
                write_rule(&mut writer, rule);
                writer.indent -= 2;
            }
            OutKind::Pseudo { pseudo_type, node } => {
                let inherited = match node {
                    Some(node) => format!(
                        " (inherited from {}{})",
                        node.selector,
                        uid_suffix(node, |uid| format!(", uid: \"{uid}\""))
                    ),
                    None => String::new(),
                };
                writer.line(&format!("/* Pseudo {pseudo_type} element{inherited} */"));
                write_rule(&mut writer, rule);
            }
            OutKind::Keyframes(steps) => {
                writer.open(&rule.header);
                for (key, properties) in steps {
                    writer.open(key);
                    for property in properties {
                        writer.line(property);
                    }
                    writer.close();
                }
                writer.close();
            }
            OutKind::Plain => write_rule(&mut writer, rule),
        }
    }
    lines.extend(writer.lines);
    lines
}

fn uid_suffix(node: &NodeRef, format: impl Fn(&str) -> String) -> String {
    node.uid.as_deref().map(format).unwrap_or_default()
}

/// `appendRuleWithAncestors`: the wrappers (with their comments), the rule, the closings.
fn write_rule(writer: &mut Writer, rule: &OutRule) {
    for (comment, header) in &rule.ancestors {
        if let Some(comment) = comment {
            writer.line(&format!("/* {comment} */"));
        }
        writer.open(header);
    }
    writer.open(&rule.header);
    for property in &rule.lines {
        writer.line(property);
    }
    writer.close();
    for _ in &rule.ancestors {
        writer.close();
    }
}
