//! Loaded heap snapshots, per session: each `.heapsnapshot` file is parsed and analysed once
//! (as an engine job, off the async runtime) and kept, keyed by its checked path, until
//! `close_heapsnapshot` or the end of the session.
//!
//! Memory is bounded twice. Each session (one per tenant) has a budget of its own, and the
//! process has a cap over all of them; a tenant's budgets are shares of the cap (see
//! `tenants`), so no tenant's snapshots can refuse or evict another's. A load is told what its
//! session may still use, and the engine charges what parsing really allocates, refusing
//! mid-parse once past it; what a loaded snapshot holds is then charged to both. A load that
//! would not fit first closes this session's least recently used snapshots (saying so in the
//! response), and is refused with a clear error when that is not enough.

use devtools_memory::LoadedSnapshot;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The process cap, overridable with this variable (MiB).
pub const MEMORY_ENV: &str = "DEVTOOLS_MCP_HEAP_SNAPSHOT_MEMORY_MB";
const DEFAULT_BUDGET_MIB: usize = 4096;
/// A loaded snapshot holds at least about this much per file byte (1.3 measured on
/// Chromium's snapshots): what eviction makes room for before a load starts.
const LOAD_FACTOR: f64 = 1.3;

/// Bytes held by loaded snapshots across all sessions.
static HELD: AtomicUsize = AtomicUsize::new(0);
static CLOCK: AtomicU64 = AtomicU64::new(0);

/// The process cap over every session's snapshots.
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

/// One session's loaded snapshots, within the session's budget.
#[derive(Default)]
pub struct HeapSnapshots {
    entries: HashMap<String, Entry>,
    /// What this session's snapshots may hold together (`None`: the process cap).
    budget: Option<usize>,
}

/// What a load may use, once room was made for it.
pub struct Reservation {
    /// Snapshots closed to make room, for the response.
    pub evicted: Vec<String>,
    /// The most the load may allocate: what this session's budget and the process cap
    /// both still allow.
    pub max_bytes: usize,
}

impl HeapSnapshots {
    /// This session's budget (a tenant's share of the process cap).
    pub fn set_budget(&mut self, bytes: usize) {
        self.budget = Some(bytes);
    }

    /// This session's budget, never above the process cap.
    pub fn budget(&self) -> usize {
        let cap = budget_bytes();
        self.budget.map_or(cap, |bytes| bytes.min(cap))
    }

    fn held(&self) -> usize {
        self.entries.values().map(|entry| entry.bytes).sum()
    }

    /// What a load may allocate now: this session's budget and the process cap, less what
    /// they hold.
    fn available(&self) -> usize {
        let own = self.budget().saturating_sub(self.held());
        let process = budget_bytes().saturating_sub(HELD.load(Ordering::Relaxed));
        own.min(process)
    }

    /// The loaded snapshot for this (checked) path, if any.
    pub fn get(&mut self, path: &str) -> Option<Arc<LoadedSnapshot>> {
        let entry = self.entries.get_mut(path)?;
        entry.last_used = CLOCK.fetch_add(1, Ordering::Relaxed);
        Some(entry.snapshot.clone())
    }

    /// Makes room for a file of `file_len` bytes: closes this session's least recently used
    /// snapshots while the load could not fit, or refuses. Only this session's own snapshots
    /// are ever closed.
    pub fn reserve(&mut self, path: &str, file_len: u64) -> Result<Reservation, String> {
        let estimate = (file_len as f64 * LOAD_FACTOR) as usize;
        let mut evicted = Vec::new();
        while self.available() < estimate {
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
                None => return Err(self.refusal(path, estimate)),
            }
        }
        Ok(Reservation {
            evicted,
            max_bytes: self.available(),
        })
    }

    /// The error for a load that does not fit, with what would make it fit.
    pub fn refusal(&self, path: &str, needed: usize) -> String {
        format!(
            "Cannot load the heap snapshot {path}: it needs at least {} in memory, and this session's heap snapshot budget of {} has {} left. Close loaded snapshots with close_heapsnapshot, or raise the budget with {MEMORY_ENV} (or the tenant's heap_snapshot_mib).",
            mib(needed),
            mib(self.budget()),
            mib(self.available())
        )
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
                "Note: closed the heap snapshot {path} to stay within this session's heap snapshot memory budget."
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

    /// Finding: the budget was process-wide, so one tenant's snapshots refused another's
    /// loads. Each session now has its own share and evicts only its own snapshots.
    #[test]
    fn one_session_cannot_refuse_or_evict_another() {
        let mut greedy = HeapSnapshots::default();
        greedy.set_budget(4 << 10);
        let mut other = HeapSnapshots::default();
        other.set_budget(4 << 10);
        other.insert("/mine.heapsnapshot".into(), tiny());
        let own = other.held();
        // The greedy session fills its share and asks for more: refused, and only for it.
        greedy.insert("/a.heapsnapshot".into(), tiny());
        assert!(greedy.reserve("/huge.heapsnapshot", 1 << 20).is_err());
        assert!(other.get("/mine.heapsnapshot").is_some(), "not evicted");
        assert_eq!(other.held(), own);
        let room = other
            .reserve("/next.heapsnapshot", 100)
            .expect("fits its share");
        assert!(room.evicted.is_empty());
        assert!(room.max_bytes <= 4 << 10);
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
