//! What a running call is doing now, for the progress a client asked for: the host function
//! the call is in (`lighthouse.run-audit`, `navigate.go-to`, `memory.take-snapshot`), set by
//! the one gate as every function starts, read by the progress reporter each second. It is a
//! task-local, so it follows the call's own future and nothing else: concurrent calls (other
//! tenants, other pages) never see each other's.

use std::sync::{Arc, Mutex, PoisonError};

/// The activity of the call running in this task, shared with its progress reporter.
#[derive(Clone, Default)]
pub struct Activity(Arc<Mutex<Option<String>>>);

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
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Says what the call running in this task does now; nothing when no one follows it.
pub fn set(doing: impl FnOnce() -> String) {
    let _ = CURRENT.try_with(|activity| {
        *activity.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(doing());
    });
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
