//! What a page holds in the browser, measured over our own connection (`cdp::raw`): the page
//! and every execution context it started (its cross-process iframes, theirs, and the workers
//! of all of them), each with its JavaScript heap, the memory its DOM objects hold and its
//! ArrayBuffers' backing stores (`Runtime.getHeapUsage`). Wasm memories are not among them;
//! `renderer_processes` bounds those by what a renderer process holds.

use crate::browser::cdp::CdpError;
use crate::browser::cdp::raw::RawClient;
use futures::future::join_all;
use serde_json::json;
use std::time::{Duration, Instant};

/// More contexts than this is itself a page's way around a cap (a probe per context).
pub const MAX_CONTEXTS: usize = 64;

/// One execution context of a page.
#[derive(Debug, Clone)]
pub struct Context {
    pub session: String,
    pub target_id: String,
    /// `page`, `iframe`, `worker`, ...: a target's type.
    pub kind: String,
    /// When it was attached to our connection, about when it started (`None`: the page
    /// itself, or a context that was there before the page was watched).
    pub attached: Option<Instant>,
}

impl Context {
    /// A thread of its own that the page started (a worker or worklet), which stopping the
    /// page's script does not stop.
    pub fn is_thread(&self) -> bool {
        !matches!(self.kind.as_str(), "page" | "iframe")
    }
}

/// A page's contexts, the page's own first; at most [`MAX_CONTEXTS`] + 1 (one more says "too
/// many").
pub async fn contexts(
    raw: &RawClient,
    page_target: &str,
    timeout: Duration,
) -> Result<Vec<Context>, CdpError> {
    contexts_of(raw, page_target, "page", timeout).await
}

/// The contexts of a target of `kind` that no page owns (a shared or service worker), its
/// own first, as [`contexts`] finds a page's.
pub async fn contexts_of(
    raw: &RawClient,
    target: &str,
    kind: &str,
    timeout: Duration,
) -> Result<Vec<Context>, CdpError> {
    let session = raw.session(target, timeout).await?;
    let mut found = vec![Context {
        session,
        target_id: target.to_string(),
        kind: kind.to_string(),
        attached: None,
    }];
    let mut next = 0;
    while next < found.len() && found.len() <= MAX_CONTEXTS {
        // A worker's own workers are attached to its session; a context that went away
        // between the listing and now has none.
        let children = raw
            .children(&found[next].session, timeout)
            .await
            .unwrap_or_default();
        for child in children {
            if !found.iter().any(|known| known.session == child.session) {
                found.push(Context {
                    session: child.session,
                    target_id: child.target_id,
                    kind: child.kind,
                    attached: child.attached,
                });
            }
        }
        next += 1;
    }
    found.truncate(MAX_CONTEXTS + 1);
    Ok(found)
}

/// What a page's contexts answered.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Holding {
    /// Bytes held by the contexts that answered.
    pub bytes: u64,
    /// Contexts that did not answer in time (a thread kept busy, or a renderer gone).
    pub silent: Vec<String>,
    /// The page's renderer crashed or was ended.
    pub crashed: bool,
}

/// Measures every context at once, each bounded by `timeout`. A context that answers with an
/// error went away meanwhile and holds nothing.
pub async fn measure(raw: &RawClient, contexts: &[Context], timeout: Duration) -> Holding {
    let probes = contexts.iter().map(|context| async move {
        let answer = raw
            .call(
                Some(&context.session),
                "Runtime.getHeapUsage",
                json!({}),
                timeout,
            )
            .await;
        (context, answer.and_then(|reply| reply.result()))
    });
    let mut holding = Holding {
        crashed: contexts
            .first()
            .is_some_and(|page| raw.crashed(&page.session)),
        ..Holding::default()
    };
    for (context, answer) in join_all(probes).await {
        match answer {
            Ok(usage) => holding.bytes += held(&usage),
            Err(CdpError::Timeout { .. }) => holding.silent.push(context.kind.clone()),
            Err(CdpError::Protocol(_)) => {}
        }
    }
    holding
}

/// Stops the script running in every context (`Runtime.terminateExecution` interrupts a
/// loop too); the number that answered.
pub async fn terminate(raw: &RawClient, contexts: &[Context], timeout: Duration) -> usize {
    let stops = contexts.iter().map(|context| {
        raw.call(
            Some(&context.session),
            "Runtime.terminateExecution",
            json!({}),
            timeout,
        )
    });
    join_all(stops)
        .await
        .into_iter()
        .filter(|answer| answer.is_ok())
        .count()
}

/// What one `Runtime.getHeapUsage` answer says a context holds.
fn held(usage: &serde_json::Value) -> u64 {
    ["usedSize", "embedderHeapUsedSize", "backingStorageSize"]
        .iter()
        .map(|field| usage[field].as_f64().unwrap_or(0.0).max(0.0) as u64)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_holds_its_heap_its_dom_and_its_array_buffers() {
        let usage = json!({
            "usedSize": 1_000.0,
            "totalSize": 9_999_999.0,
            "embedderHeapUsedSize": 20.0,
            "backingStorageSize": 300.0
        });
        assert_eq!(held(&usage), 1_320);
        assert_eq!(held(&json!({"usedSize": -5.0})), 0);
    }

    #[test]
    fn only_workers_and_worklets_are_threads_of_their_own() {
        let context = |kind: &str| Context {
            session: String::new(),
            target_id: String::new(),
            kind: kind.to_string(),
            attached: None,
        };
        assert!(!context("page").is_thread());
        assert!(!context("iframe").is_thread());
        assert!(context("worker").is_thread());
        assert!(context("shared_storage_worklet").is_thread());
    }
}
