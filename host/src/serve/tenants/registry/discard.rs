//! `serve --discard-idle-secs N`: an idle tenant's pages give their memory back. A tenant
//! without a call for N seconds keeps its browser context (cookies, storage, its place here)
//! but its pages are closed, their URLs remembered; its next call reopens them under the same
//! ids before it runs, and its answer says so (what a page held only in memory is lost). An
//! idle page costs a renderer and its window's surfaces in the GPU process (about 18 MiB of the
//! 24 an idle tenant costs, BENCHMARKS.md "What an idle agent costs"); its context 6.5 MiB.

use super::Registry;

impl Registry {
    /// Closes the pages of every tenant idle for `--discard-idle-secs` whose session no call
    /// holds (one that takes it meanwhile waits, then reopens them).
    pub async fn discard_idle(&self) {
        let Some(after) = self.discard_after else {
            return;
        };
        for runtime in self.runtimes() {
            let idle = runtime.queued() == 0
                && runtime
                    .last_used
                    .lock()
                    .is_ok_and(|last_used| last_used.elapsed() >= after);
            if !idle {
                continue;
            }
            let Some(mut state) = runtime.session.try_lock() else {
                continue;
            };
            let closed = state.discard_pages(after).await;
            if closed > 0 {
                tracing::info!(tenant = %runtime.name, pages = closed, "closed an idle tenant's pages");
            }
        }
    }

    /// How often the idle sweep must run to honour `--discard-idle-secs`.
    pub fn discard_after(&self) -> Option<std::time::Duration> {
        self.discard_after
    }
}
