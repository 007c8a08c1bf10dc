//! The one type for capacity that tenants share: a pool of slots with a per-tenant share and
//! a reserve. A share's first slot may be any free one; its further ones only while more than
//! the reserve is free, and never more than the per-share cap. So a flood by some tenants
//! stops at the reserve, which tenants with nothing running share, and one tenant alone never
//! holds more than its cap. Four tenants flooding names no resolver answers took every lookup
//! slot and a fifth tenant's lookups failed; this is the rule that stops it, for every pool.
//!
//! [`REGISTRY`] names every pool that tenants share under `serve` and the file that builds it;
//! the contract test below fails on a semaphore or bounded queue built anywhere else, naming
//! the file, so a new pool cannot bypass the shares.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::Notify;

/// Slots shared by tenants (see the module's doc).
pub struct SharedPool {
    free: Mutex<usize>,
    freed: Notify,
    size: usize,
    reserve: usize,
    per_share: usize,
    /// Shares by key (a tenant's name), alive while someone holds them.
    keyed: Mutex<HashMap<String, Weak<Share>>>,
}

/// One tenant's share of a pool.
pub struct Share {
    pool: Arc<SharedPool>,
    held: AtomicUsize,
}

/// A slot of a pool, given back (and its share's count lowered) when dropped.
pub struct Slot {
    share: Arc<Share>,
}

impl SharedPool {
    /// `size` slots, of which `reserve` are kept for shares holding none, and at most
    /// `per_share` held by one share (all clamped so that every share can get a slot).
    pub fn new(size: usize, reserve: usize, per_share: usize) -> Arc<SharedPool> {
        let size = size.max(1);
        Arc::new(SharedPool {
            free: Mutex::new(size),
            freed: Notify::new(),
            size,
            reserve: reserve.min(size - 1),
            per_share: per_share.clamp(1, size),
            keyed: Mutex::default(),
        })
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// A new share of its own (one per tenant, e.g. one per egress proxy).
    pub fn share(self: &Arc<SharedPool>) -> Arc<Share> {
        Arc::new(Share {
            pool: self.clone(),
            held: AtomicUsize::new(0),
        })
    }

    /// The share of `key` (a tenant's name): the same one while any holder keeps it.
    pub fn share_of(self: &Arc<SharedPool>, key: &str) -> Arc<Share> {
        let mut keyed = self
            .keyed
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if let Some(share) = keyed.get(key).and_then(Weak::upgrade) {
            return share;
        }
        keyed.retain(|_, share| share.strong_count() > 0);
        let share = self.share();
        keyed.insert(key.to_owned(), Arc::downgrade(&share));
        share
    }
}

impl Share {
    /// Slots this share holds now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::SeqCst)
    }

    /// A slot if the share may take one now.
    pub fn try_take(self: &Arc<Share>) -> Option<Slot> {
        let pool = &self.pool;
        let mut free = pool
            .free
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let held = self.held();
        let allowed = *free > 0 && held < pool.per_share && (held == 0 || *free > pool.reserve);
        if !allowed {
            return None;
        }
        *free -= 1;
        self.held.fetch_add(1, Ordering::SeqCst);
        Some(Slot {
            share: self.clone(),
        })
    }

    /// Waits for a slot this share may take.
    pub async fn take(self: &Arc<Share>) -> Slot {
        loop {
            let notified = self.pool.freed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(slot) = self.try_take() {
                return slot;
            }
            notified.await;
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let pool = &self.share.pool;
        {
            let mut free = pool
                .free
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            *free += 1;
            self.share.held.fetch_sub(1, Ordering::SeqCst);
        }
        pool.freed.notify_waiters();
    }
}

/// A pool tenants share under `serve`, or a bounded primitive that is not one, and why.
pub struct Registered {
    /// The file under `host/src` that builds it.
    pub file: &'static str,
    pub what: &'static str,
    pub shares: Shares,
}

pub enum Shares {
    /// A [`SharedPool`]: per-tenant shares and a reserve.
    Pooled,
    /// Shared, but admitted before a tenant is known; shares are enforced by eviction (the
    /// file's own tests).
    ByEviction,
    /// Not shared across tenants (the reason says why).
    NotShared(&'static str),
}

/// Every pool tenants share, and every other bounded primitive the host builds.
pub const REGISTRY: &[Registered] = &[
    Registered {
        file: "net/lookup.rs",
        what: "name lookups of the egress proxies (threads of the blocking pool)",
        shares: Shares::Pooled,
    },
    Registered {
        file: "engine.rs",
        what: "engine jobs: schema validation, heap-snapshot analysis (threads)",
        shares: Shares::Pooled,
    },
    Registered {
        file: "serve/http/connections.rs",
        what: "HTTP connections and the event streams on them (file descriptors)",
        shares: Shares::ByEviction,
    },
    Registered {
        file: "net/proxy.rs",
        what: "connections of one egress proxy",
        shares: Shares::NotShared("each tenant has a proxy of its own"),
    },
    Registered {
        file: "pipeline/tools/current.rs",
        what: "tool-list changes",
        shares: Shares::NotShared("a broadcast: each receiver lags on its own, none holds a slot"),
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// What builds a semaphore or a bounded queue.
    const BOUNDED: &[&str] = &[
        "Semaphore::new(",
        "Semaphore::const_new(",
        "mpsc::channel(",
        "broadcast::channel(",
        "sync_channel(",
        "SharedPool::new(",
    ];

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                out.push(path);
            }
        }
    }

    /// The files under `host/src` that build a bounded primitive, outside tests.
    fn builders() -> Vec<(String, &'static str)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&root, &mut files);
        let mut found = Vec::new();
        for file in files {
            let relative = file
                .strip_prefix(&root)
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
            if relative == "shared_pool.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("read source");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for pattern in BOUNDED {
                // `channel()` with no capacity is unbounded: it holds no slot anyone waits for.
                let bounded = code
                    .match_indices(pattern)
                    .any(|(at, _)| !code[at + pattern.len()..].starts_with(')'));
                if bounded {
                    found.push((relative.clone(), *pattern));
                }
            }
        }
        found
    }

    #[test]
    fn every_bounded_primitive_is_a_registered_pool() {
        let found = builders();
        for (file, pattern) in &found {
            let entry = REGISTRY.iter().find(|entry| entry.file == file);
            let Some(entry) = entry else {
                panic!(
                    "host/src/{file} builds `{pattern}` but is not in shared_pool::REGISTRY: a pool tenants share must be a SharedPool (per-tenant shares and a reserve); register it, or say why it is not shared"
                );
            };
            if matches!(entry.shares, Shares::Pooled) {
                assert_eq!(
                    *pattern, "SharedPool::new(",
                    "host/src/{file} is registered as a SharedPool ({}) but builds a raw `{pattern}`",
                    entry.what
                );
            }
        }
        for entry in REGISTRY {
            assert!(
                found.iter().any(|(file, _)| file == entry.file),
                "shared_pool::REGISTRY names host/src/{} ({}), which builds no pool any more: remove the entry",
                entry.file,
                entry.what
            );
        }
    }

    #[test]
    fn a_share_takes_its_first_slot_from_the_reserve_and_no_more() {
        let pool = SharedPool::new(4, 2, 4);
        let flooder = pool.share();
        let taken: Vec<Slot> = std::iter::from_fn(|| flooder.try_take()).collect();
        assert_eq!(taken.len(), 2, "a flood stops at the reserve");
        let (second, third) = (pool.share(), pool.share());
        let first = second.try_take().expect("a share's first slot");
        assert!(
            second.try_take().is_none(),
            "its second is not from the reserve"
        );
        let other = third.try_take().expect("another share's first slot");
        assert!(pool.share().try_take().is_none(), "the pool is full");
        drop((first, other));
        assert_eq!(flooder.held(), 2);
    }

    #[test]
    fn one_share_never_holds_more_than_its_cap() {
        let pool = SharedPool::new(8, 0, 3);
        let alone = pool.share();
        let taken: Vec<Slot> = std::iter::from_fn(|| alone.try_take()).collect();
        assert_eq!(taken.len(), 3);
        drop(taken);
        assert_eq!(alone.held(), 0);
    }

    #[test]
    fn a_key_names_the_same_share_while_it_is_held() {
        let pool = SharedPool::new(2, 1, 2);
        let first = pool.share_of("a");
        assert!(Arc::ptr_eq(&first, &pool.share_of("a")));
        assert!(!Arc::ptr_eq(&first, &pool.share_of("b")));
    }

    #[tokio::test]
    async fn a_waiting_share_gets_the_slot_given_back() {
        let pool = SharedPool::new(1, 0, 1);
        let (one, two) = (pool.share(), pool.share());
        let held = one.take().await;
        let waiting = tokio::spawn(async move { two.take().await.share.held() });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        drop(held);
        assert_eq!(waiting.await.expect("joined"), 1);
    }
}
