//! Progress of a call whose request carries a `progressToken`: while the call runs, the client
//! hears `notifications/progress` every second (elapsed seconds, the tool, and the host
//! function it is in: `crate::activity`, set by the one gate), so a client
//! that resets its timeout on progress keeps waiting for a 60-s audit or trace instead of
//! giving up, and a person watching sees that it is alive. Nothing is sent after the answer.

use crate::activity::Activity;
use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use std::time::{Duration, Instant};

/// How often a running call reports.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// How long one notification may take to send: a client that does not read its stream must
/// not hold up the call (its answer is what matters).
const SEND_TIMEOUT: Duration = Duration::from_millis(250);

/// Runs `call`, reporting progress for `tool` while it runs when the request asked for it, and
/// handing the client the live view of a call that waits for a person (`super::live_view`).
pub async fn reported<F: Future>(
    context: &RequestContext<RoleServer>,
    tool: &str,
    call: F,
) -> F::Output {
    followed(&context.peer, context.meta.get_progress_token(), tool, call).await
}

/// [`reported`] for a call that outlives its request (a task): the client's peer and the
/// request's progress token, owned.
pub async fn followed<F: Future>(
    peer: &Peer<RoleServer>,
    token: Option<ProgressToken>,
    tool: &str,
    call: F,
) -> F::Output {
    let started = Instant::now();
    let activity = Activity::default();
    let mut wanted = activity.human_wanted();
    let mut elicitation: Option<tokio::task::JoinHandle<()>> = None;
    let mut call = std::pin::pin!(activity.scope(call));
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + INTERVAL, INTERVAL);
    loop {
        tokio::select! {
            biased;
            output = &mut call => {
                if let Some(elicitation) = elicitation {
                    elicitation.abort();
                }
                return output;
            }
            Ok(()) = wanted.changed() => {
                let now = wanted.borrow_and_update().clone();
                if let Some(previous) = elicitation.take() {
                    previous.abort();
                }
                elicitation = now.and_then(|human| super::live_view::elicit(peer, &human));
            }
            _ = ticks.tick(), if token.is_some() => {
                let Some(token) = token.clone() else { continue };
                let seconds = started.elapsed().as_secs();
                let human = wanted.borrow().clone();
                let message = match (human, activity.now()) {
                    (Some(human), _) => format!(
                        "{tool} is waiting for a person ({seconds} s): open {} and press Done there",
                        human.url
                    ),
                    (None, Some(doing)) => format!("{tool} is running ({seconds} s): in {doing}"),
                    (None, None) => format!("{tool} is running ({seconds} s)"),
                };
                let notification = ProgressNotificationParam::new(token, seconds as f64)
                    .with_message(message);
                let _ = tokio::time::timeout(SEND_TIMEOUT, peer.notify_progress(notification)).await;
            }
        }
    }
}
