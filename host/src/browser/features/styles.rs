//! `get_css_styles`: the CSS cascade of the element behind a snapshot uid, read over CDP
//! (`CSS.getMatchedStylesForNode`, style sheet headers, container lookups) and printed as
//! chrome-devtools-mcp 1.11.0 prints DevTools' matched styles.

use crate::browser::cdp::run;
use crate::browser::page::McpPage;
use crate::snapshot::SnapshotNode;
use chromiumoxide::cdp::browser_protocol::css::EventStyleSheetAdded;
use devtools_styles::{Input, NodeRef, RuleInfo};
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};
use std::collections::HashMap;

/// Walks from the element (a text node stands for its parent) up the flat tree: slots,
/// shadow hosts, parents, as Chromium's inherited styles do.
const FLAT_TREE_CHAIN: &str = r"function() {
  let node = this;
  if (node.nodeType === Node.TEXT_NODE) node = node.parentNode;
  if (!node || node.nodeType !== Node.ELEMENT_NODE) return null;
  const chain = [node];
  for (;;) {
    let parent = node.assignedSlot || node.parentNode;
    if (parent && parent.nodeType === Node.DOCUMENT_FRAGMENT_NODE && parent.host) parent = parent.host;
    if (!parent || parent.nodeType !== Node.ELEMENT_NODE) break;
    chain.push(parent);
    node = parent;
  }
  return chain;
}";

/// One element as `DOM.describeNode` tells it.
struct Described {
    backend_node_id: Option<i64>,
    local_name: String,
    selector: String,
}

/// What a style sheet header says about where its rules come from.
struct Sheet {
    source_url: String,
    start_line: i64,
    constructed: bool,
}

/// The styles feature of one page: reads what the page's last snapshot points at.
pub struct Styles<'a> {
    page: &'a McpPage,
}

impl<'a> Styles<'a> {
    pub fn of(page: &'a McpPage) -> Styles<'a> {
        Styles { page }
    }

    /// The response lines of `get_css_styles` for one page of rules.
    pub async fn css_styles(
        &self,
        uid: &str,
        page_size: u32,
        page_idx: u32,
    ) -> Result<Vec<String>, String> {
        let snapshot = self.page.last_snapshot().ok_or_else(|| {
            format!(
                "No snapshot found for page {}. Use take_snapshot to capture one.",
                self.page.id
            )
        })?;
        let node = snapshot
            .find(uid)
            .ok_or_else(|| format!("Element uid \"{uid}\" not found on page {}.", self.page.id))?;
        let backend_node_id = node.backend_node_id.ok_or_else(|| {
            format!("Failed to resolve backend node ID for element with uid \"{uid}\".")
        })?;
        let detached = || {
            format!(
                "Element with uid \"{uid}\" was detached or no longer exists on the page. Please take a new snapshot with take_snapshot."
            )
        };
        let object = self
            .call(
                "DOM.resolveNode",
                json!({ "backendNodeId": backend_node_id }),
            )
            .await
            .map_err(|_| detached())?;
        let object_id = object["object"]["objectId"]
            .as_str()
            .ok_or_else(detached)?
            .to_string();
        let chain = self.flat_tree_chain(&object_id).await?.ok_or_else(|| {
            format!("Element with uid \"{uid}\" is not an element node and has no parent element.")
        })?;
        let (element_object, ancestor_objects) = chain.split_first().ok_or_else(detached)?;
        let element = self.describe(json!({ "objectId": element_object })).await?;
        let mut ancestors = Vec::new();
        for object in ancestor_objects {
            let described = self.describe(json!({ "objectId": object })).await?;
            ancestors.push(node_ref(&snapshot.root, &described));
        }
        let matched = self.matched_styles(element_object).await;
        let (payload, sheets, containers) = matched?;
        let describe_rule = |rule: &Value| rule_info(rule, &sheets, &containers);
        let input = Input {
            payload: &payload,
            tag: element.local_name.clone(),
            ancestors,
            rule_info: &describe_rule,
        };
        let rules = devtools_styles::collect(&input);
        let element_ref = NodeRef {
            selector: element.selector,
            uid: None,
        };
        Ok(devtools_styles::render(
            &element_ref,
            uid,
            &rules,
            page_size,
            page_idx,
        ))
    }

    async fn call(&self, method: &'static str, params: Value) -> Result<Value, String> {
        run(self.page.cdp(), method, params).await
    }

    /// The element and its flat-tree ancestors as remote object ids; none when the node is
    /// neither an element nor a text node in one.
    async fn flat_tree_chain(&self, object_id: &str) -> Result<Option<Vec<String>>, String> {
        let array = self
            .call(
                "Runtime.callFunctionOn",
                json!({ "objectId": object_id, "functionDeclaration": FLAT_TREE_CHAIN }),
            )
            .await?;
        let Some(array_id) = array["result"]["objectId"].as_str() else {
            return Ok(None);
        };
        let properties = self
            .call(
                "Runtime.getProperties",
                json!({ "objectId": array_id, "ownProperties": true }),
            )
            .await?;
        let mut indexed: Vec<(usize, String)> = properties["result"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|property| {
                let index = property["name"].as_str()?.parse::<usize>().ok()?;
                let id = property["value"]["objectId"].as_str()?;
                Some((index, id.to_string()))
            })
            .collect();
        indexed.sort_by_key(|(index, _)| *index);
        Ok(Some(indexed.into_iter().map(|(_, id)| id).collect()))
    }

    async fn describe(&self, target: Value) -> Result<Described, String> {
        let described = self.call("DOM.describeNode", target).await?;
        Ok(described_node(&described["node"]))
    }

    /// `CSS.getMatchedStylesForNode` with what is needed to print it: the style sheet
    /// headers (sent when the CSS domain is enabled) and the containers of container queries.
    /// The DOM and CSS domains are switched off again on every path.
    async fn matched_styles(
        &self,
        element_object: &str,
    ) -> Result<(Value, HashMap<String, Sheet>, HashMap<String, String>), String> {
        let mut added = self
            .page
            .cdp()
            .event_listener::<EventStyleSheetAdded>()
            .await
            .map_err(|error| error.to_string())?;
        let outcome = async {
            self.call("DOM.enable", json!({})).await?;
            self.call("DOM.getDocument", json!({ "depth": 0 })).await?;
            let requested = self
                .call("DOM.requestNode", json!({ "objectId": element_object }))
                .await?;
            let node_id = requested["nodeId"].clone();
            self.call("CSS.enable", json!({})).await?;
            let mut payload = self
                .call("CSS.getMatchedStylesForNode", json!({ "nodeId": node_id }))
                .await?;
            // Transition and animation styles, as DevTools asks for them alongside.
            if let Ok(animated) = self
                .call("CSS.getAnimatedStylesForNode", json!({ "nodeId": node_id }))
                .await
            {
                payload[devtools_styles::ANIMATED] = animated;
            }
            let containers = self.containers(&payload, &node_id).await;
            Ok::<_, String>((payload, containers))
        }
        .await;
        let mut sheets = HashMap::new();
        while let Some(Some(event)) = added.next().now_or_never() {
            let header = &event.header;
            sheets.insert(
                header.style_sheet_id.inner().clone(),
                Sheet {
                    source_url: header.source_url.clone(),
                    // Line numbers are small; a fractional or huge value would be a bug.
                    #[allow(clippy::cast_possible_truncation)]
                    start_line: header.start_line as i64,
                    constructed: header.is_constructed,
                },
            );
        }
        for method in ["CSS.disable", "DOM.disable"] {
            if let Err(error) = self.call(method, json!({})).await {
                tracing::debug!(%error, method, "could not switch a domain off");
            }
        }
        let (payload, containers) = outcome?;
        Ok((payload, sheets, containers))
    }

    /// The container element each container query of the matched rules resolves to, keyed
    /// by `name|query`, printed as `selector` or `selector (uid: "...")`.
    async fn containers(&self, payload: &Value, node_id: &Value) -> HashMap<String, String> {
        let mut resolved = HashMap::new();
        let snapshot_root = self.page.last_snapshot().map(|snapshot| &snapshot.root);
        for query in container_queries(payload) {
            let key = container_key(&query);
            if resolved.contains_key(&key) {
                continue;
            }
            let mut params = json!({ "nodeId": node_id });
            for field in [
                "physicalAxes",
                "logicalAxes",
                "queriesScrollState",
                "queriesAnchored",
            ] {
                if !query[field].is_null() {
                    params[field] = query[field].clone();
                }
            }
            if let Some(name) = query["name"].as_str() {
                params["containerName"] = Value::from(name);
            }
            let Ok(container) = self.call("DOM.getContainerForNode", params).await else {
                continue;
            };
            let Some(container_id) = container["nodeId"].as_i64() else {
                continue;
            };
            let Ok(described) = self.describe(json!({ "nodeId": container_id })).await else {
                continue;
            };
            let node = match snapshot_root {
                Some(root) => node_ref(root, &described),
                None => NodeRef {
                    selector: described.selector.clone(),
                    uid: None,
                },
            };
            let text = match node.uid {
                Some(uid) => format!("{} (uid: \"{uid}\")", node.selector),
                None => node.selector,
            };
            resolved.insert(key, text);
        }
        resolved
    }
}

fn described_node(node: &Value) -> Described {
    let attributes: Vec<(String, String)> = node["attributes"]
        .as_array()
        .map(|flat| {
            flat.chunks(2)
                .filter_map(|pair| match pair {
                    [name, value] => Some((
                        name.as_str()?.to_string(),
                        value.as_str().unwrap_or_default().to_string(),
                    )),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let local_name = node["localName"]
        .as_str()
        .filter(|name| !name.is_empty())
        .or_else(|| node["nodeName"].as_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    Described {
        backend_node_id: node["backendNodeId"].as_i64(),
        selector: devtools_styles::simple_selector(&local_name, &attributes),
        local_name,
    }
}

/// An element with the uid the latest snapshot gave it, if any (`resolveCdpElementId`).
fn node_ref(root: &SnapshotNode, described: &Described) -> NodeRef {
    NodeRef {
        selector: described.selector.clone(),
        uid: described
            .backend_node_id
            .and_then(|id| uid_of(root, id))
            .map(str::to_string),
    }
}

fn uid_of(node: &SnapshotNode, backend_node_id: i64) -> Option<&str> {
    if node.backend_node_id == Some(backend_node_id) {
        return Some(&node.uid);
    }
    node.children
        .iter()
        .find_map(|child| uid_of(child, backend_node_id))
}

/// Every container query of the rules that apply to the element or its pseudo-elements.
fn container_queries(payload: &Value) -> Vec<Value> {
    let mut rules: Vec<&Value> = Vec::new();
    rules.extend(payload["matchedCSSRules"].as_array().into_iter().flatten());
    for entry in payload["pseudoElements"].as_array().into_iter().flatten() {
        rules.extend(entry["matches"].as_array().into_iter().flatten());
    }
    rules
        .iter()
        .flat_map(|rule_match| {
            rule_match["rule"]["containerQueries"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

fn container_key(query: &Value) -> String {
    format!(
        "{}|{}",
        query["name"].as_str().unwrap_or_default(),
        query["text"].as_str().unwrap_or_default()
    )
}

/// `getSourceLocation` and `collectAncestorRules` of 1.11.0's formatter.
fn rule_info(
    rule: &Value,
    sheets: &HashMap<String, Sheet>,
    containers: &HashMap<String, String>,
) -> RuleInfo {
    RuleInfo {
        selector_text: rule["selectorList"]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        source: source_location(rule, sheets),
        ancestors: ancestor_rules(rule, containers),
    }
}

fn source_location(rule: &Value, sheets: &HashMap<String, Sheet>) -> String {
    match rule["origin"].as_str() {
        Some("user-agent") => return "user agent stylesheet".into(),
        Some("injected") => return "injected stylesheet".into(),
        Some("inspector") => return "via inspector".into(),
        _ => {}
    }
    let sheet = rule["styleSheetId"].as_str().and_then(|id| sheets.get(id));
    let source_url = sheet.map(|sheet| sheet.source_url.as_str()).unwrap_or("");
    if sheet.is_some_and(|sheet| sheet.constructed) && source_url.is_empty() {
        return "constructed stylesheet".into();
    }
    let start = sheet.map_or(0, |sheet| sheet.start_line);
    let suffix = if rule.get("selectorList").is_some() {
        // A style rule: the line of its first selector, or 1 when that is unknown.
        let line = rule["selectorList"]["selectors"][0]["range"]["startLine"].as_i64();
        match (sheet, line) {
            (Some(_), Some(line)) => format!(":{}", start + line + 1),
            _ => ":1".into(),
        }
    } else {
        match (sheet, rule["style"]["range"]["startLine"].as_i64()) {
            (Some(_), Some(line)) => format!(":{}", start + line + 1),
            _ => String::new(),
        }
    };
    if source_url.is_empty() {
        return format!("<style>{suffix}");
    }
    format!("{}{suffix}", file_name(source_url))
}

/// `ParsedURL.lastPathComponent`, with DevTools' names for data and blob URLs.
fn file_name(url: &str) -> String {
    if url.starts_with("data:") {
        return "data-uri".into();
    }
    if url.starts_with("blob:") {
        return "blob".into();
    }
    let without_fragment = url.split('#').next().unwrap_or(url);
    let without_query = without_fragment
        .split('?')
        .next()
        .unwrap_or(without_fragment);
    let path = match without_query.find("://") {
        Some(at) => {
            let rest = &without_query[at + 3..];
            rest.find('/').map_or("", |slash| &rest[slash..])
        }
        None => without_query,
    };
    match path.rsplit('/').next() {
        Some(last) if !last.is_empty() => last.to_string(),
        _ => "index".into(),
    }
}

/// The at-rules around a style rule, outermost first, as (comment, header).
fn ancestor_rules(
    rule: &Value,
    containers: &HashMap<String, String>,
) -> Vec<(Option<String>, String)> {
    let mut counters: HashMap<&str, usize> = HashMap::new();
    let mut next = |list: &'static str| -> Option<Value> {
        let index = counters.entry(list).or_insert(0);
        let item = rule[list].get(*index).cloned();
        *index += 1;
        item
    };
    let text = |item: &Option<Value>| -> Option<String> {
        item.as_ref()
            .and_then(|value| value["text"].as_str())
            .filter(|text| !text.is_empty())
            .map(str::to_string)
    };
    let mut ancestors = Vec::new();
    for rule_type in rule["ruleTypes"].as_array().into_iter().flatten() {
        let entry = match rule_type.as_str().unwrap_or_default() {
            "MediaRule" => text(&next("media")).map(|query| (None, format!("@media {query}"))),
            "SupportsRule" => {
                text(&next("supports")).map(|query| (None, format!("@supports {query}")))
            }
            "LayerRule" => next("layers").map(|layer| {
                match layer["text"].as_str().filter(|name| !name.is_empty()) {
                    Some(name) => (None, format!("@layer {name}")),
                    None => (None, "@layer".to_string()),
                }
            }),
            "ContainerRule" => next("containerQueries").map(|query| {
                let query_text = query["text"].as_str().unwrap_or_default().to_string();
                let name = query["name"].as_str().filter(|name| !name.is_empty());
                let prefix = match name {
                    Some(name) if !query_text.starts_with(name) => format!("{name} "),
                    _ => String::new(),
                };
                let comment = containers
                    .get(&container_key(&query))
                    .map(|container| format!("container: {container}"));
                (comment, format!("@container {prefix}{query_text}"))
            }),
            "ScopeRule" => next("scopes").map(|scope| {
                match scope["text"]
                    .as_str()
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                {
                    Some(query) => (None, format!("@scope {query}")),
                    None => (None, "@scope".to_string()),
                }
            }),
            "StartingStyleRule" => Some((None, "@starting-style".to_string())),
            "StyleRule" => next("nestingSelectors")
                .and_then(|selector| selector.as_str().map(str::to_string))
                .map(|selector| (None, selector)),
            "NavigationRule" => {
                text(&next("navigations")).map(|query| (None, format!("@navigation {query}")))
            }
            _ => None,
        };
        if let Some(entry) = entry {
            ancestors.push(entry);
        }
    }
    ancestors.reverse();
    ancestors
}
