//! Items kept per navigation, as the reference's `PageCollector` stores them.

use std::collections::VecDeque;

/// Navigations kept: the current one and the two before it (`maxNavigationSaved = 3`).
const MAX_NAVIGATIONS: usize = 3;

/// Items per navigation, newest navigation first, as the reference's `PageCollector` stores them.
#[derive(Debug)]
pub(crate) struct Buckets<T> {
    navigations: VecDeque<Vec<T>>,
    limit: usize,
}

impl<T> Buckets<T> {
    pub fn new(limit: usize) -> Self {
        Buckets {
            navigations: VecDeque::from([Vec::new()]),
            limit,
        }
    }

    pub fn push(&mut self, item: T) {
        if let Some(current) = self.navigations.front_mut() {
            current.push(item);
            if current.len() > self.limit {
                let excess = current.len() - self.limit;
                current.drain(..excess);
            }
        }
    }

    /// Starts a navigation; items from the last one matching `carry_from` on move along.
    pub fn split(&mut self, carry_from: Option<&dyn Fn(&T) -> bool>) {
        let carried = match (carry_from, self.navigations.front_mut()) {
            (Some(matches), Some(current)) => match current.iter().rposition(matches) {
                Some(index) => current.split_off(index),
                None => Vec::new(),
            },
            _ => Vec::new(),
        };
        self.navigations.push_front(carried);
        self.navigations.truncate(MAX_NAVIGATIONS);
    }

    /// The current navigation's items, or every kept navigation's, oldest first.
    pub fn data(&self, preserved: bool) -> Vec<&T> {
        if preserved {
            self.navigations.iter().rev().flatten().collect()
        } else {
            self.navigations.front().into_iter().flatten().collect()
        }
    }

    pub fn find(&self, predicate: impl Fn(&T) -> bool) -> Option<&T> {
        self.navigations
            .iter()
            .flat_map(|items| items.iter())
            .find(|item| predicate(item))
    }

    pub fn find_mut(&mut self, predicate: impl Fn(&T) -> bool) -> Option<&mut T> {
        self.navigations
            .iter_mut()
            .flat_map(|items| items.iter_mut())
            .find(|item| predicate(item))
    }

    /// The oldest match (navigations are stored newest first).
    pub fn find_mut_last(&mut self, predicate: impl Fn(&T) -> bool) -> Option<&mut T> {
        self.navigations
            .iter_mut()
            .rev()
            .flat_map(|items| items.iter_mut())
            .find(|item| predicate(item))
    }
}

#[cfg(test)]
mod tests {
    use super::Buckets;

    fn sizes(buckets: &Buckets<(u32, bool)>) -> Vec<usize> {
        buckets.navigations.iter().map(Vec::len).collect()
    }

    #[test]
    fn navigations_carry_from_their_navigation_request() {
        // The reference's "bounds retained navigation buckets with redirects and subframes".
        let navigation = |item: &(u32, bool)| item.1;
        let mut buckets = Buckets::new(3);
        buckets.push((1, true));
        buckets.split(Some(&navigation));
        buckets.push((2, false));
        buckets.push((3, false));
        buckets.push((4, true));
        buckets.push((5, true));
        buckets.split(Some(&navigation));
        buckets.push((6, false));
        buckets.push((7, true));
        buckets.split(Some(&navigation));
        buckets.push((8, false));
        buckets.push((9, false));
        let all: Vec<u32> = buckets.data(true).iter().map(|item| item.0).collect();
        assert_eq!(all, [3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(sizes(&buckets), [3, 2, 2]);
        assert_eq!(buckets.data(false)[0].0, 7);
    }

    #[test]
    fn the_limit_drops_the_oldest_and_splits_without_match_start_empty() {
        let mut buckets = Buckets::new(2);
        for id in 1..=3 {
            buckets.push((id, false));
        }
        assert!(buckets.find(|item| item.0 == 1).is_none());
        assert_eq!(buckets.data(false).len(), 2);
        buckets.split(Some(&|item: &(u32, bool)| item.1));
        buckets.split(None);
        assert_eq!(sizes(&buckets), [0, 0, 2]);
        buckets.split(None);
        assert_eq!(sizes(&buckets), [0, 0, 0]);
        if let Some(item) = buckets.find_mut_last(|_| true) {
            item.0 = 0;
        }
    }
}
