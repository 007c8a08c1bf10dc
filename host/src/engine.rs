//! The one way the host runs an engine (schema validation, heap-snapshot analysis, snapshot
//! and trace summaries) on input that a plugin, a tenant or a page chose: off the async
//! workers, a few at a time, under a deadline, with a cancellation flag the engine polls.
//!
//! - **Time**: the caller stops waiting at the deadline and the flag is raised; an engine
//!   that polls it stops within a few thousand steps.
//! - **Threads**: a job holds its slot until it really ends, even after its caller gave up
//!   (a blocking task cannot be aborted), so hostile input can occupy at most [`slots`] and
//!   [`RESERVE`] threads, never the blocking pool.
//! - **Tenants**: the slots are a [`SharedPool`]: under `serve` each tenant's calls run
//!   [`as_tenant`] and take slots from that tenant's share, so one tenant's jobs stop at the
//!   reserve and another tenant's first job still runs (jobs outside any tenant's call, as on
//!   stdio, share one share of their own).
//! - **Stack**: engines walk iteratively with explicit bounds; nothing recurses to a depth its
//!   input controls (each engine's tests run it on a small stack).
//! - **Memory**: an engine that allocates in proportion to its input takes a byte budget of its
//!   own (the heap engine charges what it allocates, as it allocates).
//! - **Cancellation**: when the caller is dropped (its call ran out of wall clock) the flag is
//!   raised too, so a job whose call ended does not run on to the end.

use crate::shared_pool::{Share, SharedPool};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

/// The flag an engine polls: raised when its caller stopped waiting.
pub type Cancel = Arc<AtomicBool>;

/// Engine jobs running at once (about the machine's cores).
pub fn slots() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
}

/// Slots beyond [`slots`] kept for tenants with no job running.
pub const RESERVE: usize = 1;

/// One share may hold all of [`slots`] (a lone client runs as many jobs as before); the
/// reserve is for the others.
static SLOTS: LazyLock<Arc<SharedPool>> =
    LazyLock::new(|| SharedPool::new(slots() + RESERVE, RESERVE, slots()));

tokio::task_local! {
    /// The tenant whose call runs (set by `serve`'s HTTP face).
    static TENANT: Arc<str>;
}

/// Runs `work` (one call of `tenant`) so that the engine jobs it starts take `tenant`'s share.
pub async fn as_tenant<F: std::future::Future>(tenant: &str, work: F) -> F::Output {
    TENANT.scope(Arc::from(tenant), work).await
}

/// The share of the tenant whose call runs, or of the process outside any tenant's call.
fn current_share(pool: &Arc<SharedPool>) -> Arc<Share> {
    match TENANT.try_with(Arc::clone) {
        Ok(tenant) => pool.share_of(&format!("tenant {tenant}")),
        Err(_) => pool.share_of("the process"),
    }
}

/// Why an engine job gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    #[error("{what} took longer than {} s and was stopped", .limit.as_secs_f64())]
    Deadline { what: &'static str, limit: Duration },
    #[error("{what} failed inside the server: {reason}")]
    Crashed { what: &'static str, reason: String },
}

/// Raises the flag when dropped: the caller returned, timed out or was cancelled.
struct RaiseOnDrop(Cancel);

impl Drop for RaiseOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `job` (named `what` in errors) on the blocking pool within one of the [`slots`],
/// waiting at most `deadline` in all (the wait for a slot included). `job` gets the flag to
/// poll.
pub async fn run<T: Send + 'static>(
    what: &'static str,
    deadline: Duration,
    job: impl FnOnce(&AtomicBool) -> T + Send + 'static,
) -> Result<T, EngineError> {
    run_in(&SLOTS, what, deadline, job).await
}

async fn run_in<T: Send + 'static>(
    pool: &Arc<SharedPool>,
    what: &'static str,
    deadline: Duration,
    job: impl FnOnce(&AtomicBool) -> T + Send + 'static,
) -> Result<T, EngineError> {
    let cancel: Cancel = Arc::new(AtomicBool::new(false));
    let _raise = RaiseOnDrop(cancel.clone());
    let share = current_share(pool);
    let work = async {
        let permit = share.take().await;
        let flag = cancel.clone();
        tokio::task::spawn_blocking(move || {
            // The slot is the job's until it returns, whoever still waits for it.
            let _permit = permit;
            if flag.load(Ordering::Relaxed) {
                return None;
            }
            Some(job(&flag))
        })
        .await
        .map_err(|error| EngineError::Crashed {
            what,
            reason: error.to_string(),
        })
    };
    match tokio::time::timeout(deadline, work).await {
        Ok(Ok(Some(answer))) => Ok(answer),
        Ok(Ok(None)) | Err(_) => Err(EngineError::Deadline {
            what,
            limit: deadline,
        }),
        Ok(Err(error)) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Instant;

    #[tokio::test]
    async fn a_slow_job_is_given_up_at_the_deadline_and_told_to_stop() {
        let stopped = Arc::new(AtomicBool::new(false));
        let seen = stopped.clone();
        let started = Instant::now();
        let outcome = run("a test job", Duration::from_millis(200), move |cancel| {
            while !cancel.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
            seen.store(true, Ordering::Relaxed);
        })
        .await;
        assert!(matches!(outcome, Err(EngineError::Deadline { .. })));
        assert!(started.elapsed() < Duration::from_millis(600));
        let waited = Instant::now();
        while !stopped.load(Ordering::Relaxed) && waited.elapsed() < Duration::from_secs(2) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(stopped.load(Ordering::Relaxed), "the job saw the flag");
    }

    #[tokio::test]
    async fn jobs_that_ignore_the_flag_keep_their_slot_until_they_end() {
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let mut calls = Vec::new();
        for _ in 0..slots() * 3 {
            let (running, most) = (running.clone(), most.clone());
            calls.push(tokio::spawn(run(
                "a stubborn job",
                Duration::from_millis(20),
                move |_| {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(150));
                    running.fetch_sub(1, Ordering::SeqCst);
                },
            )));
        }
        for call in calls {
            let _given_up = call.await;
        }
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert!(most.load(Ordering::SeqCst) <= slots(), "{most:?}");
    }

    /// One tenant's stubborn jobs took every slot and another tenant's job waited behind
    /// them until its deadline: now the flood stops at the reserve.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_tenants_flood_leaves_another_tenant_a_slot() {
        let pool = SharedPool::new(2 + RESERVE, RESERVE, 2);
        let mut flood = Vec::new();
        for _ in 0..6 {
            let pool = pool.clone();
            flood.push(tokio::spawn(as_tenant("flooder", async move {
                run_in(&pool, "a stubborn job", Duration::from_secs(5), |_| {
                    std::thread::sleep(Duration::from_millis(600));
                })
                .await
            })));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let other = as_tenant(
            "other",
            run_in(&pool, "sum", Duration::from_millis(400), |_| 2 + 2),
        )
        .await;
        assert_eq!(other, Ok(4), "the other tenant's job");
        for call in flood {
            let _done = call.await;
        }
    }

    #[tokio::test]
    async fn a_quick_job_answers() {
        assert_eq!(run("sum", Duration::from_secs(2), |_| 2 + 2).await, Ok(4));
    }
}
