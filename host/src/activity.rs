//! What a running call is doing now, for the progress a client asked for: the host function
//! the call is in (`lighthouse.run-audit`, `navigate.go-to`, `memory.take-snapshot`), set by
//! the one gate as every function starts, read by the progress reporter each second. It is a
//! task-local, so it follows the call's own future and nothing else: concurrent calls (other
//! tenants, other pages) never see each other's.
//!
//! A call that waits for a person (`request_human`) also says so here, with the live view's
//! URL: the face that runs the call hands it to the client (URL-mode elicitation, progress).

use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::watch;

/// The activity of the call running in this task, shared with its progress reporter.
#[derive(Clone)]
pub struct Activity {
    doing: Arc<Mutex<Option<String>>>,
    human: Arc<watch::Sender<Option<HumanWanted>>>,
}

impl Default for Activity {
    fn default() -> Activity {
        Activity {
            doing: Arc::default(),
            human: Arc::new(watch::channel(None).0),
        }
    }
}

/// A call waits for a person at a live view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HumanWanted {
    /// The live view's one-time URL.
    pub url: String,
    /// Why the agent asks (its own words).
    pub reason: String,
}

tokio::task_local! {
    static CURRENT: Activity;
}

impl Activity {
    /// Runs `call` with this activity as its own: what the call sets, this reads.
    pub async fn scope<F: Future>(&self, call: F) -> F::Output {
        CURRENT.scope(self.clone(), call).await
    }

    /// What the call is doing now, if it said.
    pub fn now(&self) -> Option<String> {
        self.doing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Follows the call's requests for a person (`None` once the wait ended).
    pub fn human_wanted(&self) -> watch::Receiver<Option<HumanWanted>> {
        self.human.subscribe()
    }
}

/// Says what the call running in this task does now; nothing when no one follows it.
pub fn set(doing: impl FnOnce() -> String) {
    let _ = CURRENT.try_with(|activity| {
        *activity
            .doing
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(doing());
    });
}

/// Says the call running in this task waits for a person at a live view (`None`: no longer);
/// whether anyone follows the call to tell the client.
pub fn want_human(wanted: Option<HumanWanted>) -> bool {
    CURRENT
        .try_with(|activity| {
            activity.human.send_replace(wanted);
        })
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_sets_its_own_activity_and_no_one_elses() {
        let first = Activity::default();
        let second = Activity::default();
        first
            .scope(async {
                set(|| "script.evaluate-function".into());
            })
            .await;
        second.scope(async {}).await;
        // Outside any scope, setting is a no-op (no panic).
        set(|| "unseen".into());
        assert_eq!(first.now().as_deref(), Some("script.evaluate-function"));
        assert_eq!(second.now(), None);
    }
}
