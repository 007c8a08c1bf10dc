//! DevTools' clean-up of user-agent rules before building the cascade: only the selectors
//! that matched are kept, and consecutive user-agent rules with the same selectors and media
//! merge, so `h1` from two UA rules prints once.

use serde_json::Value;

/// `cleanUserAgentPayload`: user-agent rules keep only the selectors that matched, and
/// consecutive user-agent rules with the same selectors and media merge into one (later
/// values win), as DevTools shows them.
pub fn clean_user_agent(matches: Option<&Vec<Value>>) -> Vec<Value> {
    let mut cleaned: Vec<Value> = Vec::new();
    for original in matches.into_iter().flatten() {
        let mut rule_match = original.clone();
        narrow_user_agent_selectors(&mut rule_match);
        let mergeable = cleaned.last().is_some_and(|last| {
            is_user_agent(last)
                && is_user_agent(&rule_match)
                && last["rule"]["selectorList"]["text"]
                    == rule_match["rule"]["selectorList"]["text"]
                && media_text(last) == media_text(&rule_match)
        });
        if !mergeable {
            cleaned.push(rule_match);
            continue;
        }
        if let Some(last) = cleaned.last_mut() {
            merge_rule(&rule_match, last);
        }
    }
    cleaned
}

fn is_user_agent(rule_match: &Value) -> bool {
    rule_match["rule"]["origin"] == "user-agent"
}

fn media_text(rule_match: &Value) -> Option<String> {
    rule_match["rule"]["media"].as_array().map(|media| {
        media
            .iter()
            .map(|m| m["text"].as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join(", ")
    })
}

fn narrow_user_agent_selectors(rule_match: &mut Value) {
    let matching: Vec<usize> = rule_match["matchingSelectors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i.as_u64().and_then(|i| usize::try_from(i).ok()))
        .collect();
    if !is_user_agent(rule_match) || matching.is_empty() {
        return;
    }
    let selectors: Vec<Value> = rule_match["rule"]["selectorList"]["selectors"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(i, _)| matching.contains(i))
        .map(|(_, s)| s.clone())
        .collect();
    let text = selectors
        .iter()
        .map(|s| s["text"].as_str().unwrap_or_default())
        .collect::<Vec<_>>()
        .join(", ");
    rule_match["rule"]["selectorList"]["selectors"] = Value::Array(selectors);
    rule_match["rule"]["selectorList"]["text"] = Value::from(text);
    rule_match["matchingSelectors"] = (0..matching.len()).collect::<Vec<_>>().into();
}

/// Name/value pairs only, first appearance keeps its place, the later value wins.
fn merge_rule(from: &Value, to: &mut Value) {
    let merged = |key: &str| -> Value {
        let mut pairs: Vec<(String, Value)> = Vec::new();
        for source in [&to["rule"]["style"][key], &from["rule"]["style"][key]] {
            for entry in source.as_array().into_iter().flatten() {
                let name = entry["name"].as_str().unwrap_or_default().to_string();
                match pairs.iter_mut().find(|(n, _)| *n == name) {
                    Some(slot) => slot.1 = entry["value"].clone(),
                    None => pairs.push((name, entry["value"].clone())),
                }
            }
        }
        pairs
            .into_iter()
            .map(|(name, value)| serde_json::json!({ "name": name, "value": value }))
            .collect::<Vec<_>>()
            .into()
    };
    let shorthands = merged("shorthandEntries");
    let properties = merged("cssProperties");
    to["rule"]["style"]["shorthandEntries"] = shorthands;
    to["rule"]["style"]["cssProperties"] = properties;
}
