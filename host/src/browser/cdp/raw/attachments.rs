//! What our connection learns from the few events it reads: the targets auto-attached to its
//! sessions (a page's workers and cross-process iframes, which answer only on a session the
//! browser attached for their parent; a worker attached from the browser never answers),
//! the sessions that went away, and the pages whose renderer crashed.

use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// A target the browser attached to one of our sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Child {
    pub session: String,
    pub target_id: String,
    /// The target's type: `iframe`, `worker`, `shared_worker`, `service_worker`, a worklet...
    pub kind: String,
    /// When the browser attached it, which for a target started after its parent's
    /// auto-attach is about when it started; `None` for one that was there already.
    pub attached: Option<Instant>,
}

/// The connection's view of its sessions, updated by the reader task as events arrive.
#[derive(Debug, Default)]
pub struct Attachments {
    /// parent session -> the targets attached to it.
    children: HashMap<String, Vec<Child>>,
    /// Sessions whose target's renderer crashed (`Inspector.targetCrashed`).
    crashed: HashSet<String>,
    /// Sessions the browser detached; their target id is forgotten by the caller.
    detached: Vec<String>,
}

const ATTACHED: &[u8] = b"{\"method\":\"Target.attachedToTarget\"";
const DETACHED: &[u8] = b"{\"method\":\"Target.detachedFromTarget\"";
const CRASHED: &[u8] = b"{\"method\":\"Inspector.targetCrashed\"";
const RELOADED: &[u8] = b"{\"method\":\"Inspector.targetReloadedAfterCrash\"";

impl Attachments {
    /// Reads one event (a message without `id`); any other event is skipped unparsed.
    pub fn observe(&mut self, message: &[u8]) {
        let known = [ATTACHED, DETACHED, CRASHED, RELOADED];
        if !known.iter().any(|prefix| message.starts_with(prefix)) {
            return;
        }
        let Ok(event) = serde_json::from_slice::<Value>(message) else {
            return;
        };
        let parent = event["sessionId"].as_str();
        let params = &event["params"];
        match event["method"].as_str() {
            Some("Target.attachedToTarget") => {
                let (Some(parent), Some(session), Some(target_id), Some(kind)) = (
                    parent,
                    params["sessionId"].as_str(),
                    params["targetInfo"]["targetId"].as_str(),
                    params["targetInfo"]["type"].as_str(),
                ) else {
                    return;
                };
                let children = self.children.entry(parent.to_string()).or_default();
                if !children.iter().any(|child| child.session == session) {
                    children.push(Child {
                        session: session.to_string(),
                        target_id: target_id.to_string(),
                        kind: kind.to_string(),
                        attached: Some(Instant::now()),
                    });
                }
            }
            Some("Target.detachedFromTarget") => {
                if let Some(session) = params["sessionId"].as_str() {
                    self.forget(session);
                }
            }
            Some("Inspector.targetCrashed") => {
                if let Some(session) = parent {
                    self.crashed.insert(session.to_string());
                }
            }
            Some("Inspector.targetReloadedAfterCrash") => {
                if let Some(session) = parent {
                    self.crashed.remove(session);
                }
            }
            _ => {}
        }
    }

    /// A session and everything attached under it are gone.
    fn forget(&mut self, session: &str) {
        let mut gone = vec![session.to_string()];
        while let Some(session) = gone.pop() {
            if let Some(children) = self.children.remove(&session) {
                gone.extend(children.into_iter().map(|child| child.session));
            }
            for children in self.children.values_mut() {
                children.retain(|child| child.session != session);
            }
            self.crashed.remove(&session);
            self.detached.push(session);
        }
    }

    /// The children `session` has now were there before it was watched.
    pub fn mark_existing(&mut self, session: &str) {
        for child in self.children.get_mut(session).into_iter().flatten() {
            child.attached = None;
        }
    }

    pub fn children(&self, session: &str) -> Vec<Child> {
        self.children.get(session).cloned().unwrap_or_default()
    }

    pub fn crashed(&self, session: &str) -> bool {
        self.crashed.contains(session)
    }

    /// The sessions detached since the last call.
    pub fn take_detached(&mut self) -> Vec<String> {
        std::mem::take(&mut self.detached)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attached(parent: &str, session: &str, kind: &str) -> String {
        format!(
            r#"{{"method":"Target.attachedToTarget","params":{{"sessionId":"{session}","targetInfo":{{"targetId":"T-{session}","type":"{kind}"}},"waitingForDebugger":false}},"sessionId":"{parent}"}}"#
        )
    }

    #[test]
    fn children_are_tracked_until_they_or_their_parent_detach() {
        let mut seen = Attachments::default();
        seen.observe(attached("page", "frame", "iframe").as_bytes());
        seen.observe(attached("page", "worker", "worker").as_bytes());
        seen.observe(attached("frame", "nested", "worker").as_bytes());
        seen.observe(attached("page", "worker", "worker").as_bytes());
        let kinds: Vec<String> = seen.children("page").into_iter().map(|c| c.kind).collect();
        assert_eq!(kinds, ["iframe", "worker"]);
        assert_eq!(seen.children("frame")[0].target_id, "T-nested");
        seen.mark_existing("page");
        assert!(seen.children("page").iter().all(|c| c.attached.is_none()));
        assert!(seen.children("frame")[0].attached.is_some());

        seen.observe(
            br#"{"method":"Target.detachedFromTarget","params":{"sessionId":"worker"},"sessionId":"page"}"#,
        );
        assert_eq!(seen.children("page").len(), 1);
        seen.observe(br#"{"method":"Target.detachedFromTarget","params":{"sessionId":"page"}}"#);
        assert!(seen.children("page").is_empty());
        assert!(
            seen.children("frame").is_empty(),
            "a frame goes with its page"
        );
        let mut detached = seen.take_detached();
        detached.sort();
        assert_eq!(detached, ["frame", "nested", "page", "worker"]);
        assert!(seen.take_detached().is_empty());
    }

    #[test]
    fn a_crash_is_remembered_for_its_session_and_other_events_are_skipped() {
        let mut seen = Attachments::default();
        seen.observe(br#"{"method":"Inspector.targetCrashed","params":{},"sessionId":"page"}"#);
        seen.observe(br#"{"method":"Page.loadEventFired","params":{},"sessionId":"other"}"#);
        seen.observe(b"{\"method\":\"Target.attachedToTarget\" not json");
        assert!(seen.crashed("page"));
        assert!(!seen.crashed("other"));
        seen.observe(
            br#"{"method":"Inspector.targetReloadedAfterCrash","params":{},"sessionId":"page"}"#,
        );
        assert!(
            !seen.crashed("page"),
            "a reloaded page has a live renderer again"
        );
    }
}
