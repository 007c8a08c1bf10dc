//! Accessibility snapshots of a page, descending into its iframes as the reference's
//! `includeIframes` does (a cross-process iframe through its own target), and the lookup of
//! snapshot uids back to DOM nodes.
//!
//! The trees travel over the browser's thin CDP connection (`cdp::raw`): a big page's
//! `Accessibility.getFullAXTree` reply is megabytes, which chromiumoxide would parse twice.

use super::{McpPage, PageLink};
use crate::browser::cdp::raw::RawClient;
use crate::browser::cdp::{CdpError, cdp, send, timeouts};
use crate::snapshot::{AxNode, AxTree, Snapshot};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

/// The class `DOM.resolveNode` gives a text node's remote object.
const TEXT_NODE_CLASS: &str = "Text";
/// Nested iframes followed by a snapshot.
const MAX_FRAME_DEPTH: usize = 8;
/// Replies at least this large (a page of some thousand elements) leave enough freed memory
/// behind to be worth handing back.
const LARGE_REPLY: usize = 1 << 20;

/// A cross-process frame met in the last snapshot: how to reach its nodes, and where it
/// sits in its parent frame.
#[derive(Debug, Clone)]
pub struct FrameTarget {
    /// Its target id (the frame id), on which the thin connection has a session.
    target_id: String,
    /// The `<iframe>` element showing it, in the parent frame.
    owner_backend_node_id: i64,
    /// The parent frame's target when that is cross-process too; `None`: the page itself.
    parent: Option<String>,
}

/// One snapshot's walk over the frames of a page.
struct Walk {
    client: Arc<RawClient>,
    interesting_only: bool,
    frames: Frames,
    /// The size of every tree reply read, to know when memory is worth returning.
    reply_bytes: usize,
}

/// The frames of one snapshot: loaderIds by frame id, and the cross-process frames met.
#[derive(Default)]
struct Frames {
    loaders: HashMap<String, String>,
    /// loaderId -> each cross-process frame.
    targets: HashMap<String, FrameTarget>,
}

/// A page's accessibility tree as fetched, not yet numbered: numbering gives uids, which are
/// the page's own state and wait for the session ([`McpPage::keep_snapshot`]).
pub struct CapturedTree {
    root: AxNode,
    loader_id: String,
    frame_targets: HashMap<String, FrameTarget>,
    verbose: bool,
}

impl PageLink {
    /// Fetches the page's accessibility tree (descending into iframes, as the reference's
    /// `includeIframes` does): all of a snapshot's waiting on Chromium, none of its state.
    pub async fn capture_tree(&self, verbose: bool) -> Result<CapturedTree, String> {
        let client = self.raw.client().await.map_err(|error| error.to_string())?;
        let target = self.page.target_id().as_ref().to_string();
        let mut walk = Walk {
            client,
            interesting_only: !verbose,
            frames: Frames::default(),
            reply_bytes: 0,
        };
        let attach = || walk.client.session(&target, timeouts::COMMAND);
        let mut session = attach().await.map_err(|error| error.to_string())?;
        let mut loaders = HashMap::new();
        let main_frame = match frame_tree(&walk.client, &session, &mut loaders).await {
            Ok(main_frame) => main_frame,
            Err(_) => {
                // A stale session (its target was swapped or detached): attach afresh once.
                walk.client.forget_session(&target);
                session = attach().await.map_err(|error| error.to_string())?;
                frame_tree(&walk.client, &session, &mut loaders)
                    .await
                    .map_err(|error| error.to_string())?
            }
        };
        walk.frames.loaders = loaders;
        let loader_id = walk
            .frames
            .loaders
            .get(&main_frame)
            .cloned()
            .unwrap_or_default();
        let root = frame_snapshot(&mut walk, session, None, None, 0)
            .await?
            .ok_or("Failed to create accessibility snapshot")?;
        if walk.reply_bytes >= LARGE_REPLY {
            return_freed_memory();
        }
        Ok(CapturedTree {
            root,
            loader_id,
            frame_targets: walk.frames.targets,
            verbose,
        })
    }
}

impl McpPage {
    /// Takes a fresh snapshot; later uid lookups use it.
    pub async fn take_snapshot(
        &mut self,
        snapshot_id: u64,
        verbose: bool,
    ) -> Result<&Snapshot, String> {
        let tree = self.capture_tree(verbose).await?;
        Ok(self.keep_snapshot(tree, snapshot_id))
    }

    /// Numbers a captured tree with this page's uids and keeps it as the page's snapshot.
    pub fn keep_snapshot(&mut self, tree: CapturedTree, snapshot_id: u64) -> &Snapshot {
        self.frame_targets = tree.frame_targets;
        let snapshot = Snapshot::build(
            tree.root,
            &tree.loader_id,
            snapshot_id,
            tree.verbose,
            &mut self.uids,
        );
        self.snapshot.insert(snapshot)
    }

    /// Where to click the node behind `uid` when it lives in a cross-process frame: its
    /// centre in the page's viewport, found through the frame's own session (scrolled into
    /// view there) plus the frame's place in the page. `None`: the node is in the page's
    /// own process, where the usual path applies.
    pub(super) async fn frame_click_at(&self, uid: &str) -> Result<Option<(f64, f64)>, String> {
        let Some(snapshot) = self.snapshot.as_ref() else {
            return Ok(None);
        };
        let Some(node) = snapshot.find(uid) else {
            return Ok(None);
        };
        let Some(frame) = self.frame_targets.get(&*node.loader_id) else {
            return Ok(None);
        };
        let gone = || format!("Element with uid {uid} no longer exists on the page.");
        let backend_node_id = node.backend_node_id.ok_or_else(gone)?;
        let client = self.raw.client().await.map_err(|error| error.to_string())?;
        let call = |session: String, method: &'static str, params: Value| {
            let client = client.clone();
            async move {
                client
                    .call(Some(&session), method, params, timeouts::COMMAND)
                    .await?
                    .result()
            }
        };
        let session = client
            .session(&frame.target_id, timeouts::COMMAND)
            .await
            .map_err(|_| gone())?;
        let resolved = call(
            session.clone(),
            "DOM.resolveNode",
            json!({ "backendNodeId": backend_node_id }),
        )
        .await
        .map_err(|_| gone())?;
        let object_id = resolved["object"]["objectId"].as_str().ok_or_else(gone)?;
        // A text node stands for the element holding it.
        let element = call(
            session.clone(),
            "Runtime.callFunctionOn",
            json!({ "objectId": object_id, "functionDeclaration": "function() { return this.nodeType === Node.TEXT_NODE ? this.parentElement : this; }" }),
        )
        .await
        .map_err(|error| error.to_string())?;
        let object_id = element["result"]["objectId"].as_str().unwrap_or(object_id);
        let target = json!({ "objectId": object_id });
        let _scrolled = call(
            session.clone(),
            "DOM.scrollIntoViewIfNeeded",
            target.clone(),
        )
        .await;
        let quads = call(session, "DOM.getContentQuads", target)
            .await
            .map_err(|_| "Node is either not clickable or not an Element".to_string())?;
        let (mut x, mut y) = quads["quads"]
            .as_array()
            .and_then(|quads| quads.iter().find_map(quad_centre))
            .ok_or("Node is either not clickable or not an Element")?;
        // Add the content-box origin of each frame on the way up to the page.
        let mut frame = Some(frame.clone());
        let page_target = self.page.target_id().as_ref().to_string();
        while let Some(current) = frame {
            let parent_target = current
                .parent
                .clone()
                .unwrap_or_else(|| page_target.clone());
            let parent_session = client
                .session(&parent_target, timeouts::COMMAND)
                .await
                .map_err(|error| error.to_string())?;
            let model = call(
                parent_session,
                "DOM.getBoxModel",
                json!({ "backendNodeId": current.owner_backend_node_id }),
            )
            .await
            .map_err(|error| error.to_string())?;
            let content = &model["model"]["content"];
            x += content[0].as_f64().unwrap_or(0.0);
            y += content[1].as_f64().unwrap_or(0.0);
            frame = current
                .parent
                .as_ref()
                .and_then(|parent| self.frame_targets.values().find(|f| &f.target_id == parent))
                .cloned();
        }
        Ok(Some((x, y)))
    }

    /// The DOM node behind a uid of the latest snapshot, with the reference's messages.
    pub async fn resolve_uid(&self, uid: &str) -> Result<String, String> {
        self.resolve_node(uid).await.map(|(object_id, _)| object_id)
    }

    /// The uid's DOM node as a remote object: its id, and its class (`Text` for a text node).
    async fn resolve_node(&self, uid: &str) -> Result<(String, String), String> {
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
            timeouts::COMMAND,
        )
        .await
        .map_err(|_| format!("Element with uid {uid} no longer exists on the page."))?;
        let object = &resolved["object"];
        let object_id = object["objectId"]
            .as_str()
            .ok_or_else(|| format!("Element with uid {uid} no longer exists on the page."))?;
        let class = object["className"].as_str().unwrap_or_default();
        Ok((object_id.to_owned(), class.to_owned()))
    }

    /// Like `resolve_uid`, but a text node (a `StaticText` uid) stands for the element that
    /// holds it, so it can be clicked, hovered or captured. The browser names a text node's
    /// class (V8's, which a page's prototype tricks do not change), so an element costs no
    /// second round trip.
    pub(super) async fn resolve_element(&self, uid: &str) -> Result<String, String> {
        let (object_id, class) = self.resolve_node(uid).await?;
        if class != TEXT_NODE_CLASS {
            return Ok(object_id);
        }
        let parent = send(
            &self.page,
            cdp(
                "Runtime.callFunctionOn",
                json!({
                    "objectId": object_id,
                    "functionDeclaration": "function() { return this.nodeType === Node.TEXT_NODE ? this.parentElement : this; }",
                }),
            ),
            timeouts::COMMAND,
        )
        .await
        .map_err(|error| error.to_string())?;
        Ok(parent["result"]["objectId"]
            .as_str()
            .map(String::from)
            .unwrap_or(object_id))
    }
}

/// Reads `Page.getFrameTree` on `session` into `loaders` (frame id -> loaderId); returns
/// the id of the session's root frame.
async fn frame_tree(
    client: &RawClient,
    session: &str,
    loaders: &mut HashMap<String, String>,
) -> Result<String, CdpError> {
    let frames = client
        .call(
            Some(session),
            "Page.getFrameTree",
            json!({}),
            timeouts::COMMAND,
        )
        .await?
        .result()?;
    collect_loaders(&frames["frameTree"], loaders);
    Ok(frames["frameTree"]["frame"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string())
}

/// One frame's serialized tree (the session's main frame when `frame_id` is `None`), with its
/// child frames attached under their `Iframe` nodes. The reply's text is parsed in place and
/// dropped before the children are fetched, so only one frame's reply is held at a time.
fn frame_snapshot(
    walk: &mut Walk,
    session: String,
    frame_id: Option<String>,
    // The target of the session when it is a cross-process frame's.
    frame_target: Option<String>,
    depth: usize,
) -> futures::future::BoxFuture<'_, Result<Option<AxNode>, String>> {
    Box::pin(async move {
        let params = match &frame_id {
            Some(id) => json!({ "frameId": id }),
            None => json!({}),
        };
        let client = walk.client.clone();
        let reply = client
            .call(
                Some(&session),
                "Accessibility.getFullAXTree",
                params,
                timeouts::COMMAND,
            )
            .await
            .map_err(|error| error.to_string())?;
        // Read as the browser sent it: CBOR from the pipe, JSON text from a WebSocket.
        let tree = match reply.cbor() {
            Some(message) => {
                walk.reply_bytes += message.len();
                AxTree::from_cbor_reply(message)
            }
            None => {
                let text = reply.text().map_err(|error| error.to_string())?;
                walk.reply_bytes += text.len();
                AxTree::from_reply(text)
            }
        };
        let Some(tree) = tree.map_err(|error| error.to_string())? else {
            return Ok(None);
        };
        let iframes = if depth < MAX_FRAME_DEPTH {
            tree.iframe_backend_node_ids()
        } else {
            Vec::new()
        };
        if iframes.is_empty() {
            return Ok(tree.serialize(walk.interesting_only));
        }
        let mut tree = tree;
        for backend_node_id in iframes {
            let Some(child) = content_frame(&client, &session, backend_node_id).await else {
                continue;
            };
            // A cross-process frame is a target of its own (its id is the frame id), with
            // its own session; a frame in this process answers on the parent's session.
            let (child_session, own_target) = match client.session(&child, timeouts::COMMAND).await
            {
                Ok(own) => (own, true),
                Err(_) => (session.clone(), false),
            };
            if own_target
                && frame_tree(&client, &child_session, &mut walk.frames.loaders)
                    .await
                    .is_err()
            {
                continue;
            }
            let child_target = match own_target {
                true => Some(child.clone()),
                false => frame_target.clone(),
            };
            let snapshot = frame_snapshot(
                walk,
                child_session,
                Some(child.clone()),
                child_target,
                depth + 1,
            )
            .await;
            if let Ok(Some(mut frame)) = snapshot {
                let loader = walk.frames.loaders.get(&child).cloned();
                if let (true, Some(loader)) = (own_target, &loader) {
                    let target = FrameTarget {
                        target_id: child.clone(),
                        owner_backend_node_id: backend_node_id,
                        parent: frame_target.clone(),
                    };
                    walk.frames.targets.insert(loader.clone(), target);
                }
                frame.loader_id = loader;
                tree.attach_iframe(backend_node_id, frame);
            }
        }
        Ok(tree.serialize(walk.interesting_only))
    })
}

/// The id of the frame an `<iframe>` element shows (`DOM.describeNode`'s `frameId`).
async fn content_frame(client: &RawClient, session: &str, backend_node_id: i64) -> Option<String> {
    let described = client
        .call(
            Some(session),
            "DOM.describeNode",
            json!({ "backendNodeId": backend_node_id }),
            timeouts::COMMAND,
        )
        .await
        .ok()?
        .result()
        .ok()?;
    described["node"]["frameId"].as_str().map(String::from)
}

/// Hands the memory a large snapshot freed back to the system. glibc keeps freed blocks in
/// its arenas for reuse, so after a 4,000-element page the server would otherwise stay tens
/// of MiB larger for the rest of its life.
#[allow(unsafe_code)]
fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes no pointers; it only walks glibc's own free lists and
    // releases whole free pages with madvise, which is safe at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The centre of a CDP quad (`[x1, y1, …, x4, y4]`) with some area.
fn quad_centre(quad: &Value) -> Option<(f64, f64)> {
    let points: Vec<f64> = quad.as_array()?.iter().filter_map(Value::as_f64).collect();
    let [x1, y1, x2, y2, x3, y3, x4, y4] = points[..] else {
        return None;
    };
    let (xs, ys) = ([x1, x2, x3, x4], [y1, y2, y3, y4]);
    let extent = |v: [f64; 4]| {
        let low = v.into_iter().fold(f64::INFINITY, f64::min);
        let high = v.into_iter().fold(f64::NEG_INFINITY, f64::max);
        (low, high)
    };
    let ((left, right), (top, bottom)) = (extent(xs), extent(ys));
    (right - left >= 1.0 && bottom - top >= 1.0)
        .then_some(((left + right) / 2.0, (top + bottom) / 2.0))
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
