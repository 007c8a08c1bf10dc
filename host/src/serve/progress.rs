//! Progress of a call whose request carries a `progressToken`: while the call runs, the client
//! hears `notifications/progress` every second (elapsed seconds, the tool, and the host
//! function it is in: `crate::activity`, set by the one gate), so a client
//! that resets its timeout on progress keeps waiting for a 60-s audit or trace instead of
//! giving up, and a person watching sees that it is alive. Nothing is sent after the answer.

use crate::activity::Activity;
use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use std::time::{Duration, Instant};

/// How often a running call reports.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// How long one notification may take to send: a client that does not read its stream must
/// not hold up the call (its answer is what matters).
const SEND_TIMEOUT: Duration = Duration::from_millis(250);

/// Runs `call`, reporting progress for `tool` while it runs when the request asked for it.
pub async fn reported<F: Future>(
    context: &RequestContext<RoleServer>,
    tool: &str,
    call: F,
) -> F::Output {
    let Some(token) = context.meta.get_progress_token() else {
        return call.await;
    };
    let started = Instant::now();
    let activity = Activity::default();
    let mut call = std::pin::pin!(activity.scope(call));
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + INTERVAL, INTERVAL);
    loop {
        tokio::select! {
            biased;
            output = &mut call => return output,
            _ = ticks.tick() => {
                let seconds = started.elapsed().as_secs();
                let message = match activity.now() {
                    Some(doing) => format!("{tool} is running ({seconds} s): in {doing}"),
                    None => format!("{tool} is running ({seconds} s)"),
                };
                let notification = ProgressNotificationParam::new(token.clone(), seconds as f64)
                    .with_message(message);
                let _ = tokio::time::timeout(SEND_TIMEOUT, context.peer.notify_progress(notification)).await;
            }
        }
    }
}
