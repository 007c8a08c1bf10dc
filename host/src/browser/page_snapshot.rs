//! Accessibility snapshots of a page (descending into same-process iframes) and the lookup of
//! snapshot uids back to DOM nodes.

use super::cdp::{cdp, send};
use super::page::{COMMAND_TIMEOUT, McpPage};
use crate::snapshot::{AxNode, AxTree, Snapshot};
use serde_json::{Value, json};
use std::collections::HashMap;

/// Nested iframes followed by a snapshot.
const MAX_FRAME_DEPTH: usize = 8;

impl McpPage {
    /// Takes a fresh snapshot (descending into same-process iframes, as the reference's
    /// `includeIframes` does); later uid lookups use it.
    pub async fn take_snapshot(
        &mut self,
        snapshot_id: u64,
        verbose: bool,
    ) -> Result<&Snapshot, String> {
        let frames = send(
            &self.page,
            cdp("Page.getFrameTree", json!({})),
            COMMAND_TIMEOUT,
        )
        .await
        .map_err(|error| error.to_string())?;
        let mut loaders = HashMap::new();
        collect_loaders(&frames["frameTree"], &mut loaders);
        let main_frame = frames["frameTree"]["frame"]["id"]
            .as_str()
            .unwrap_or_default();
        let loader_id = loaders.get(main_frame).cloned().unwrap_or_default();
        let root = self
            .frame_snapshot(None, !verbose, &loaders, 0)
            .await?
            .ok_or("Failed to create accessibility snapshot")?;
        let snapshot = Snapshot::build(root, &loader_id, snapshot_id, verbose, &mut self.uids);
        Ok(self.snapshot.insert(snapshot))
    }

    /// One frame's serialized tree, with its child frames attached under their `Iframe` nodes.
    fn frame_snapshot<'a>(
        &'a self,
        frame_id: Option<String>,
        interesting_only: bool,
        loaders: &'a HashMap<String, String>,
        depth: usize,
    ) -> futures::future::BoxFuture<'a, Result<Option<AxNode>, String>> {
        Box::pin(async move {
            let params = match &frame_id {
                Some(id) => json!({ "frameId": id }),
                None => json!({}),
            };
            let tree = send(
                &self.page,
                cdp("Accessibility.getFullAXTree", params),
                COMMAND_TIMEOUT,
            )
            .await
            .map_err(|error| error.to_string())?;
            let nodes = tree["nodes"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            let Some(mut tree) = AxTree::from_cdp(nodes) else {
                return Ok(None);
            };
            if depth < MAX_FRAME_DEPTH {
                for backend_node_id in tree.iframe_backend_node_ids() {
                    let described = send(
                        &self.page,
                        cdp(
                            "DOM.describeNode",
                            json!({ "backendNodeId": backend_node_id }),
                        ),
                        COMMAND_TIMEOUT,
                    )
                    .await;
                    let Some(child) = described
                        .ok()
                        .and_then(|node| node["node"]["frameId"].as_str().map(String::from))
                    else {
                        continue;
                    };
                    // A cross-process frame has its own session; it stays a bare Iframe node.
                    if let Ok(Some(mut frame)) = self
                        .frame_snapshot(Some(child.clone()), interesting_only, loaders, depth + 1)
                        .await
                    {
                        frame.loader_id = loaders.get(&child).cloned();
                        tree.attach_iframe(backend_node_id, frame);
                    }
                }
            }
            Ok(tree.serialize(interesting_only))
        })
    }

    /// The DOM node behind a uid of the latest snapshot, with the reference's messages.
    pub(super) async fn resolve_uid(&self, uid: &str) -> Result<String, String> {
        let snapshot = self.snapshot.as_ref().ok_or_else(|| {
            format!(
                "No snapshot found for page {}. Use take_snapshot to capture one.",
                self.id
            )
        })?;
        let backend_node_id = snapshot
            .find(uid)
            .and_then(|node| node.backend_node_id)
            .ok_or_else(|| format!("Element uid \"{uid}\" not found on page {}.", self.id))?;
        let resolved = send(
            &self.page,
            cdp(
                "DOM.resolveNode",
                json!({ "backendNodeId": backend_node_id }),
            ),
            COMMAND_TIMEOUT,
        )
        .await
        .map_err(|_| format!("Element with uid {uid} no longer exists on the page."))?;
        resolved["object"]["objectId"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| format!("Element with uid {uid} no longer exists on the page."))
    }

    /// Like `resolve_uid`, but a text node (a `StaticText` uid) stands for the element that
    /// holds it, so it can be clicked, hovered or captured.
    pub(super) async fn resolve_element(&self, uid: &str) -> Result<String, String> {
        let object_id = self.resolve_uid(uid).await?;
        let parent = send(
            &self.page,
            cdp(
                "Runtime.callFunctionOn",
                json!({
                    "objectId": object_id,
                    "functionDeclaration": "function() { return this.nodeType === Node.TEXT_NODE ? this.parentElement : this; }",
                }),
            ),
            COMMAND_TIMEOUT,
        )
        .await
        .map_err(|error| error.to_string())?;
        Ok(parent["result"]["objectId"]
            .as_str()
            .map(String::from)
            .unwrap_or(object_id))
    }
}

/// frame id -> loaderId for the whole frame tree.
fn collect_loaders(tree: &Value, loaders: &mut HashMap<String, String>) {
    if let (Some(id), Some(loader)) = (
        tree["frame"]["id"].as_str(),
        tree["frame"]["loaderId"].as_str(),
    ) {
        loaders.insert(id.to_string(), loader.to_string());
    }
    for child in tree["childFrames"].as_array().into_iter().flatten() {
        collect_loaders(child, loaders);
    }
}
