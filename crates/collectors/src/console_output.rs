//! The console collector's output: `list_console_messages` (grouped, filtered, paginated) and
//! `get_console_message`, as the reference's `ConsoleFormatter` prints them.

use super::console::{Arg, Console};
use super::issues::Aggregated;
use super::pagination::{Page, paginate};
use serde_json::{Map, Value, json};

const NOT_FOUND: &str = "Request not found for selected page";

impl Console {
    /// The `## Console messages` section and its structured keys.
    pub fn list(
        &self,
        page: Page,
        types: Option<&[String]>,
        preserved: bool,
        stacks: bool,
    ) -> (Vec<String>, Value) {
        // (structured item, repeats, the issue line an issue prints instead)
        let mut groups: Vec<(Map<String, Value>, usize, Option<String>)> = Vec::new();
        let mut last: Option<(&str, &str, usize)> = None;
        for message in self.buckets.data(preserved) {
            if types.is_some_and(|types| !types.is_empty() && !types.contains(&message.kind)) {
                continue;
            }
            if let Some(issue) = &message.issue {
                // An issue never groups; an untitled one is never shown.
                last = None;
                if let Some((line, Value::Object(json))) = issue.listed(message.id) {
                    groups.push((json, 0, Some(line)));
                }
                continue;
            }
            let key = (
                message.kind.as_str(),
                message.text.as_str(),
                message.arg_count,
            );
            if last == Some(key)
                && let Some(group) = groups.last_mut()
            {
                group.1 += 1;
                continue;
            }
            last = Some(key);
            let mut json = Map::new();
            json.insert("type".into(), json!(message.kind));
            json.insert("text".into(), json!(message.text));
            json.insert("argsCount".into(), json!(message.arg_count));
            json.insert("id".into(), json!(message.id));
            let stack = message.stack.as_ref().filter(|_| stacks);
            if let Some(stack) =
                stack.and_then(|stack| self.scripts.format(stack, message.cause.as_ref(), false))
            {
                json.insert("stackTrace".into(), json!(stack));
            }
            groups.push((json, 1, None));
        }
        let mut lines = vec!["## Console messages".to_string()];
        if groups.is_empty() {
            lines.push("<no console messages found>".to_string());
            return (lines, json!({}));
        }
        let pages = paginate(groups.len(), page);
        lines.extend(pages.info.iter().cloned());
        let mut items = Vec::new();
        for (json, count, issue_line) in pages.slice(&groups) {
            let mut json = json.clone();
            if let Some(line) = issue_line {
                lines.push(line.clone());
                items.push(Value::Object(json));
                continue;
            }
            if *count > 1 {
                json.insert("count".into(), json!(count));
            }
            lines.push(format!(
                "msgid={} [{}] {} ({} args){}",
                json["id"],
                json["type"].as_str().unwrap_or_default(),
                json["text"].as_str().unwrap_or_default(),
                json["argsCount"],
                if *count > 1 {
                    format!(" [{count} times]")
                } else {
                    String::new()
                }
            ));
            if let Some(stack) = json
                .get("stackTrace")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                lines.extend(stack.split('\n').map(|line| format!("  {line}")));
            }
            items.push(Value::Object(json));
        }
        if items.iter().any(|item| item.get("stackTrace").is_some()) {
            lines
                .push("Note: stack trace line and column numbers use 1-based indexing".to_string());
        }
        (
            lines,
            json!({"pagination": pages.structured, "consoleMessages": items}),
        )
    }

    /// `get_console_message`: `ID`, `Message`, `### Arguments`, `### Stack trace`.
    pub fn detail(
        &self,
        msgid: u64,
        node: Option<&dyn Fn(i64) -> Option<String>>,
        request: &dyn Fn(&str) -> Option<u64>,
    ) -> Result<(Vec<String>, Value), String> {
        if msgid == 0 {
            // The reference treats msgid 0 as "no message attached" and prints nothing.
            return Ok((Vec::new(), json!({})));
        }
        let message = self.buckets.find(|m| m.id == msgid).ok_or(NOT_FOUND)?;
        if let Some(issue) = &message.issue {
            return Aggregated::detail(issue, msgid, node, request);
        }
        let mut args: Vec<String> = message
            .args
            .iter()
            .enumerate()
            .map(|(index, arg)| match arg {
                Some(Arg::Text(text)) => text.clone(),
                Some(Arg::Error(error)) => self.scripts.format_error(error),
                Some(Arg::Unavailable) | None => {
                    format!("<error: Argument {index} is no longer available>")
                }
            })
            .collect();
        let args_count = if args.is_empty() {
            message.arg_count
        } else {
            args.len()
        };
        let text = if !message.text.is_empty() || args.is_empty() {
            message.text.clone()
        } else {
            args.remove(0)
        };
        let stack = message
            .stack
            .as_ref()
            .and_then(|stack| self.scripts.format(stack, message.cause.as_ref(), true));
        let mut lines = vec![
            format!("ID: {}", message.id),
            format!("Message: {}> {text}", message.kind),
        ];
        if !args.is_empty() {
            lines.push("### Arguments".to_string());
            for (index, arg) in args.iter().enumerate() {
                lines.extend(
                    format!("Arg #{index}: {arg}")
                        .split('\n')
                        .map(str::to_string),
                );
            }
        }
        if let Some(stack) = stack.as_deref().filter(|stack| !stack.is_empty()) {
            lines.push("### Stack trace".to_string());
            lines.extend(stack.split('\n').map(str::to_string));
        }
        let mut json = json!({"id": message.id, "type": message.kind, "text": text,
                              "argsCount": args_count, "args": args});
        if let Some(stack) = stack {
            json["stackTrace"] = json!(stack);
        }
        Ok((lines, json!({ "consoleMessage": json })))
    }
}
