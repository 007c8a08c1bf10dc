//! Loaded heap snapshots, per session: each `.heapsnapshot` file is parsed and analysed once
//! (off the async runtime) and kept, keyed by its checked path, until `close_heapsnapshot`
//! or the end of the session.
//!
//! Loaded snapshots cost about twice their file size in memory, so the server keeps a
//! process-wide budget: a load that would pass it first closes this session's least recently
//! used snapshots (saying so in the response), and is refused with a clear error when that is
//! not enough.

use devtools_heapsnapshot::LoadedSnapshot;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The budget, overridable with this variable (MiB).
pub const MEMORY_ENV: &str = "DEVTOOLS_MCP_HEAP_SNAPSHOT_MEMORY_MB";
const DEFAULT_BUDGET_MIB: usize = 4096;
/// Loaded size per file byte, as measured on Chromium's snapshots (about 1.3; rounded up).
const LOAD_FACTOR: f64 = 2.0;

/// Bytes held by loaded snapshots across all sessions.
static HELD: AtomicUsize = AtomicUsize::new(0);
static CLOCK: AtomicU64 = AtomicU64::new(0);

pub fn budget_bytes() -> usize {
    std::env::var(MEMORY_ENV)
        .ok()
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(DEFAULT_BUDGET_MIB)
        .saturating_mul(1 << 20)
}

/// Bytes currently held by loaded snapshots (all sessions).
pub fn held_bytes() -> usize {
    HELD.load(Ordering::Relaxed)
}

fn mib(bytes: usize) -> String {
    format!("{:.0} MB", bytes as f64 / f64::from(1 << 20))
}

struct Entry {
    snapshot: Arc<LoadedSnapshot>,
    bytes: usize,
    last_used: u64,
}

impl Drop for Entry {
    fn drop(&mut self) {
        HELD.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// One session's loaded snapshots.
#[derive(Default)]
pub struct HeapSnapshots {
    entries: HashMap<String, Entry>,
}

/// What a load needs to know before it may start.
pub struct Reservation {
    /// Snapshots closed to make room, for the response.
    pub evicted: Vec<String>,
}

impl HeapSnapshots {
    /// The loaded snapshot for this (checked) path, if any.
    pub fn get(&mut self, path: &str) -> Option<Arc<LoadedSnapshot>> {
        let entry = self.entries.get_mut(path)?;
        entry.last_used = CLOCK.fetch_add(1, Ordering::Relaxed);
        Some(entry.snapshot.clone())
    }

    /// Makes room for a file of `file_len` bytes under the budget: closes this session's
    /// least recently used snapshots if needed, or refuses.
    pub fn reserve(&mut self, path: &str, file_len: u64) -> Result<Reservation, String> {
        let budget = budget_bytes();
        let estimate = (file_len as f64 * LOAD_FACTOR) as usize;
        let mut evicted = Vec::new();
        while HELD.load(Ordering::Relaxed).saturating_add(estimate) > budget {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, entry)| entry.last_used)
                .map(|(key, _)| key.clone());
            match oldest {
                Some(key) => {
                    self.entries.remove(&key);
                    evicted.push(key);
                }
                None => {
                    return Err(format!(
                        "Cannot load the heap snapshot {path}: it needs about {} in memory, and the server's heap snapshot budget of {} has {} left. Close loaded snapshots with close_heapsnapshot, or raise the budget with {MEMORY_ENV}.",
                        mib(estimate),
                        mib(budget),
                        mib(budget.saturating_sub(HELD.load(Ordering::Relaxed)))
                    ));
                }
            }
        }
        Ok(Reservation { evicted })
    }

    pub fn insert(&mut self, path: String, snapshot: Arc<LoadedSnapshot>) {
        let bytes = snapshot.memory_bytes();
        HELD.fetch_add(bytes, Ordering::Relaxed);
        let entry = Entry {
            snapshot,
            bytes,
            last_used: CLOCK.fetch_add(1, Ordering::Relaxed),
        };
        self.entries.insert(path, entry);
    }

    /// Forgets a snapshot; false when it was not loaded.
    pub fn close(&mut self, path: &str) -> bool {
        self.entries.remove(path).is_some()
    }
}

/// The note for snapshots closed to make room.
pub fn eviction_lines(evicted: &[String]) -> Vec<String> {
    evicted
        .iter()
        .map(|path| {
            format!(
                "Note: closed the heap snapshot {path} to stay within the server's heap snapshot memory budget ({}).",
                mib(budget_bytes())
            )
        })
        .collect()
}

/// The reference accepts these extensions only.
pub fn check_extension(path: &str) -> Result<(), String> {
    if path.ends_with(".heapsnapshot") || path.ends_with(".heaptimeline") {
        Ok(())
    } else {
        Err(format!(
            "File {path} must have a .heapsnapshot or .heaptimeline extension."
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Arc<LoadedSnapshot> {
        let text = r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],"node_types":[["synthetic","object"]],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["property"]]},"node_count":1,"edge_count":0},"nodes":[0,0,1,0,0],"edges":[],"strings":[""]}"#;
        Arc::new(LoadedSnapshot::load(text.as_bytes()).expect("loads"))
    }

    #[test]
    fn closing_forgets_and_releases_memory() {
        let mut store = HeapSnapshots::default();
        let before = held_bytes();
        store.insert("/a.heapsnapshot".into(), tiny());
        assert!(held_bytes() > before);
        assert!(store.get("/a.heapsnapshot").is_some());
        assert!(store.close("/a.heapsnapshot"));
        assert!(!store.close("/a.heapsnapshot"));
        assert!(store.get("/a.heapsnapshot").is_none());
    }

    #[test]
    fn extensions_are_checked() {
        assert!(check_extension("/x/a.heapsnapshot").is_ok());
        assert!(check_extension("/x/a.heaptimeline").is_ok());
        let error = check_extension("/etc/passwd").expect_err("refused");
        assert_eq!(
            error,
            "File /etc/passwd must have a .heapsnapshot or .heaptimeline extension."
        );
    }

    #[test]
    fn a_load_past_the_budget_is_refused_with_advice() {
        let mut store = HeapSnapshots::default();
        let error = store
            .reserve("/big.heapsnapshot", u64::MAX / 4)
            .err()
            .expect("refused");
        assert!(error.contains("close_heapsnapshot"), "{error}");
        assert!(error.contains(MEMORY_ENV), "{error}");
    }
}
