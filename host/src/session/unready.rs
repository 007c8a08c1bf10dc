//! Pages the browser lists that could not be taken in hand, left alone for a while.
//!
//! chromiumoxide lists a page target from the moment it is attached, before it has set the page
//! up, and holds every message for that page until it has: a page whose set-up never ends (one
//! `new_page` gave up on after its renderer crashed) takes no listener and answers no command.
//! Tracking one is bounded (`browser::track`), but each sync of the session's pages would try
//! it again and spend the bound again, so one such page made every later answer wait. A page
//! whose tracking failed slowly is tried again after [`RETRY_AFTER`]: by then chromiumoxide has
//! closed a page whose set-up commands timed out, and a page that was only slow is ready. A
//! quick refusal costs nothing to try again, so it is not remembered.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long a page that could not be tracked is left alone: chromiumoxide's own command
/// timeout, after which it closes a page that never finished its set-up.
pub const RETRY_AFTER: Duration = crate::browser::cdp::timeouts::LIBRARY;

/// A failure that took less than this is tried again at the next sync.
const SLOW_FAILURE: Duration = crate::browser::cdp::timeouts::PROBE;

/// Target ids of pages that could not be tracked, with when they failed.
#[derive(Default)]
pub struct Unready {
    failed: HashMap<String, Instant>,
}

impl Unready {
    /// Whether the page should be tried now.
    pub fn may_try(&self, target: &str, now: Instant) -> bool {
        self.failed
            .get(target)
            .is_none_or(|failed| now.duration_since(*failed) >= RETRY_AFTER)
    }

    /// Records that tracking the page, begun at `started`, failed at `now`: remembered only
    /// when the failure took time.
    pub fn failed(&mut self, target: String, started: Instant, now: Instant) {
        if now.duration_since(started) >= SLOW_FAILURE {
            self.failed.insert(target, now);
        }
    }

    /// Forgets pages the browser no longer lists.
    pub fn retain(&mut self, mut listed: impl FnMut(&str) -> bool) {
        self.failed.retain(|target, _| listed(target));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_that_failed_is_left_alone_until_the_retry_time() {
        let start = Instant::now();
        let failed = start + SLOW_FAILURE;
        let mut unready = Unready::default();
        assert!(unready.may_try("A", start));
        unready.failed("A".into(), start, failed);
        assert!(!unready.may_try("A", failed + Duration::from_secs(1)));
        assert!(unready.may_try("B", failed + Duration::from_secs(1)));
        assert!(unready.may_try("A", failed + RETRY_AFTER));
    }

    #[test]
    fn a_quick_refusal_is_tried_again_at_once() {
        let start = Instant::now();
        let mut unready = Unready::default();
        unready.failed("A".into(), start, start + Duration::from_millis(50));
        assert!(unready.may_try("A", start + Duration::from_millis(60)));
    }

    #[test]
    fn pages_no_longer_listed_are_forgotten() {
        let start = Instant::now();
        let mut unready = Unready::default();
        unready.failed("A".into(), start, start + SLOW_FAILURE);
        unready.failed("B".into(), start, start + SLOW_FAILURE);
        unready.retain(|target| target == "B");
        assert!(unready.may_try("A", start + SLOW_FAILURE));
        assert!(!unready.may_try("B", start + SLOW_FAILURE));
    }
}
