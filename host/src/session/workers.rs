//! Extension service workers (`--categoryExtensions`): the reference lists them under
//! `## Extension Service Workers` with ids of its own (`sw-1`, `sw-2`, ...: one counter for
//! the process, never reused) and evaluates scripts in them by that id.

use std::sync::atomic::{AtomicU32, Ordering};

static NEXT_WORKER_ID: AtomicU32 = AtomicU32::new(1);

/// One worker the session has seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worker {
    pub id: String,
    pub target_id: String,
    pub url: String,
}

/// The session's extension service workers, in the order they were first seen.
#[derive(Debug, Default)]
pub struct Workers {
    known: Vec<Worker>,
}

impl Workers {
    /// Brings the list in line with the browser's targets, `(target id, type, url)`: new
    /// extension service workers get the next id, gone ones are dropped, the others keep
    /// theirs (a worker's URL may change; its id does not).
    pub fn refresh<'a>(&mut self, targets: impl Iterator<Item = (&'a str, &'a str, &'a str)>) {
        let live: Vec<(&str, &str)> = targets
            .filter(|(_, kind, url)| {
                *kind == "service_worker" && url.starts_with("chrome-extension://")
            })
            .map(|(target, _, url)| (target, url))
            .collect();
        self.known
            .retain(|worker| live.iter().any(|(target, _)| *target == worker.target_id));
        for (target, url) in live {
            match self
                .known
                .iter_mut()
                .find(|worker| worker.target_id == target)
            {
                Some(worker) => worker.url = url.to_string(),
                None => self.known.push(Worker {
                    id: format!("sw-{}", NEXT_WORKER_ID.fetch_add(1, Ordering::Relaxed)),
                    target_id: target.to_string(),
                    url: url.to_string(),
                }),
            }
        }
    }

    pub fn list(&self) -> &[Worker] {
        &self.known
    }

    pub fn by_id(&self, id: &str) -> Option<&Worker> {
        self.known.iter().find(|worker| worker.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_service_workers_keep_their_ids_and_others_are_not_listed() {
        let mut workers = Workers::default();
        workers.refresh(
            [
                ("t1", "service_worker", "chrome-extension://abc/worker.js"),
                ("t2", "service_worker", "https://site.test/sw.js"),
                ("t3", "page", "chrome-extension://abc/popup.html"),
            ]
            .into_iter(),
        );
        let first = workers.list().to_vec();
        assert_eq!(first.len(), 1);
        assert!(first[0].id.starts_with("sw-"), "{first:?}");
        workers.refresh(
            [
                ("t4", "service_worker", "chrome-extension://def/bg.js"),
                ("t1", "service_worker", "chrome-extension://abc/worker.js"),
            ]
            .into_iter(),
        );
        assert_eq!(workers.list()[0], first[0]);
        assert_eq!(workers.list().len(), 2);
        assert_ne!(workers.list()[1].id, first[0].id);
        workers.refresh(std::iter::empty());
        assert!(workers.list().is_empty());
        assert!(workers.by_id(&first[0].id).is_none());
    }
}
