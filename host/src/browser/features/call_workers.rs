//! Dedicated workers a call's page code started, stopped when the call ends: a plugin without
//! `long-lived` cannot leave a worker behind whose timers or messages change the page after
//! its call was judged (a worker runs on its own thread; clearing the page's timers does not
//! reach it, and the browser does not close a dedicated worker's target).
//!
//! The page's workers (its cross-process iframes' and nested workers included) are the
//! targets attached to its session on our connection (`cdp::raw`), each with when the browser
//! attached it, which is when it started. Each one started since the call's mark is stopped
//! from its own side, by `close()`. A worker's code can replace `close`, or keep its thread busy
//! so that it never gets to it: one still attached after [`SETTLE`] is reported, and the
//! caller sends its page to about:blank (a document's workers end with it).
//! Workers the page's own code started during the call are stopped too: they cannot be told
//! from the call's.

use crate::browser::RawClient;
use crate::browser::features::renderer_memory::{self, Context};
use crate::browser::page::McpPage;
use futures::future::join_all;
use serde_json::json;
use std::time::{Duration, Instant};

/// How long one worker has to answer.
const TIMEOUT: Duration = Duration::from_millis(500);
/// How long the stopped workers have to go away before one is counted as refusing.
const SETTLE: Duration = Duration::from_millis(1000);
/// How often the page's workers are looked at again meanwhile.
const POLL: Duration = Duration::from_millis(50);

/// What became of the workers a call started on one page.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Stopped {
    /// Workers that closed when asked.
    pub closed: usize,
    /// Workers still running after [`SETTLE`] (their code replaced `close`, or is busy).
    pub refused: usize,
}

/// Stops every dedicated worker of `page` started since `since` (`None`: every one, for a
/// page the call opened).
pub async fn stop_started_since(page: &McpPage, since: Option<Instant>) -> Stopped {
    let Ok(client) = page.raw().client().await else {
        return Stopped::default();
    };
    let target = page.cdp().target_id().as_ref().to_string();
    let started = workers_started(&client, &target, since).await;
    if started.is_empty() {
        return Stopped::default();
    }
    // All at once: a worker busy in a loop does not answer, and is counted below.
    let closing = started.iter().map(|worker| {
        let close = json!({ "expression": "close()" });
        client.call(Some(&worker.session), "Runtime.evaluate", close, TIMEOUT)
    });
    let _asked = join_all(closing).await;
    let deadline = Instant::now() + SETTLE;
    let mut running = started.len();
    while Instant::now() < deadline {
        let live = workers_started(&client, &target, since).await;
        running = started
            .iter()
            .filter(|worker| live.iter().any(|now| now.session == worker.session))
            .count();
        if running == 0 {
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    Stopped {
        closed: started.len() - running,
        refused: running,
    }
}

/// The page's dedicated workers attached since `since`.
async fn workers_started(client: &RawClient, target: &str, since: Option<Instant>) -> Vec<Context> {
    let Ok(contexts) = renderer_memory::contexts(client, target, TIMEOUT).await else {
        return Vec::new();
    };
    contexts
        .into_iter()
        .filter(|context| context.kind == "worker")
        .filter(|context| match since {
            Some(since) => context.attached.is_some_and(|at| at >= since),
            None => true,
        })
        .collect()
}
