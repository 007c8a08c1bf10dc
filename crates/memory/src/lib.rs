//! A V8 heap-snapshot engine: loads a `.heapsnapshot` file once (streaming), computes what
//! the DevTools frontend computes (dominator tree and retained sizes, distances, detached
//! DOM, native-context attribution, class aggregates) and answers the queries of
//! chrome-devtools-mcp 1.11.0's heap tools with the same numbers and texts.

mod aggregates;
mod budget;
mod contexts;
mod data;
mod dominators;
mod filters;
pub mod format;
mod init;
mod names;
mod native;
mod parse;
mod queries;
mod snapshot;
pub mod tools;

pub use budget::LoadBudget;
pub use data::{ClassTotals, HeapNumbers};
pub use filters::NodeFilter;
pub use queries::{EdgeSort, ObjectQuery, QuerySort};
pub use snapshot::HeapSnapshot;
pub use snapshot::Statistics;

use aggregates::Aggregate;
use indexmap::IndexMap;
use std::collections::HashMap;
use std::io::Read;
use std::sync::atomic::AtomicBool;

#[derive(Debug, thiserror::Error)]
pub enum HeapError {
    #[error("could not read the heap snapshot: {0}")]
    Io(#[source] std::io::Error),
    #[error("invalid heap snapshot: {0}")]
    Format(String),
    /// A query the snapshot cannot answer (unknown node id, bad class index...). The text is
    /// the reference's.
    #[error("{0}")]
    Query(String),
    /// The load would allocate past its budget; it stopped before it did.
    #[error(
        "loading it needs more than the {} MB it may use ({} MB reached); close loaded snapshots or raise the heap snapshot budget",
        mib(*max_bytes),
        mib(*needed)
    )]
    Budget { needed: usize, max_bytes: usize },
    /// The call that asked for the load ended first.
    #[error("the load was stopped because its call ended")]
    Cancelled,
}

fn mib(bytes: usize) -> String {
    format!("{:.1}", bytes as f64 / f64::from(1 << 20))
}

/// What the analysis allocates per node, per edge and per string of the table, at its peak
/// (the dominator computation's scratch arrays with the kept indexes), measured by the
/// counting allocator of `tests/load_budget.rs`: charged before the analysis starts.
const ANALYSIS_BYTES_PER_NODE: usize = 72;
const ANALYSIS_BYTES_PER_EDGE: usize = 20;
const ANALYSIS_BYTES_PER_STRING: usize = 8;

/// A snapshot as the tools keep it: the analysed graph plus the class ids the reference
/// hands out (1-based, in first-seen order of the unfiltered aggregates).
pub struct LoadedSnapshot {
    pub snapshot: HeapSnapshot,
    pub(crate) all_aggregates: IndexMap<String, Aggregate>,
    pub(crate) class_keys: Vec<String>,
    pub(crate) class_ids: HashMap<String, usize>,
    /// Set once a diff sorted this snapshot's unfiltered class members by id (DevTools
    /// caches that order, and later class listings start from it).
    pub(crate) all_sorted_by_id: AtomicBool,
}

impl LoadedSnapshot {
    /// Reads and analyses a snapshot, with no limit (a trusted file).
    pub fn load(mut reader: impl Read) -> Result<LoadedSnapshot, HeapError> {
        Self::load_from(&mut reader, LoadBudget::unlimited())
    }

    /// Reads and analyses a snapshot within `budget`: refused as soon as what it allocates
    /// would pass `max_bytes`, stopped when `cancel` is raised.
    pub fn load_with(
        mut reader: impl Read,
        budget: LoadBudget,
    ) -> Result<LoadedSnapshot, HeapError> {
        Self::load_from(&mut reader, budget)
    }

    /// The work of [`LoadedSnapshot::load`], not generic: the parser is compiled here, with
    /// this crate's optimisation level, whatever crate calls `load` (a generic parser would
    /// be compiled into the caller, unoptimised in the server's dev build: twice the time).
    fn load_from(reader: &mut dyn Read, budget: LoadBudget) -> Result<LoadedSnapshot, HeapError> {
        let mut meter = budget::Meter::new(budget);
        let raw = parse::parse(reader, &mut meter)?;
        // The read buffer is gone; the analysis is charged before it allocates.
        meter.release(parse::BUFFER_BYTES);
        let nodes = raw.nodes.len() / raw.header.meta.node_fields.len().max(1);
        let edges = raw.edges.len() / raw.header.meta.edge_fields.len().max(1);
        meter.charge(
            nodes
                .saturating_mul(ANALYSIS_BYTES_PER_NODE)
                .saturating_add(edges.saturating_mul(ANALYSIS_BYTES_PER_EDGE))
                .saturating_add(raw.strings.len().saturating_mul(ANALYSIS_BYTES_PER_STRING))
                .saturating_add(raw.locations.len().saturating_mul(8)),
        )?;
        meter.check()?;
        let snapshot = HeapSnapshot::from_raw_checked(raw, &|| meter.check())?;
        let all_aggregates = snapshot.aggregates(None);
        let class_keys: Vec<String> = all_aggregates.keys().cloned().collect();
        let class_ids = class_keys
            .iter()
            .enumerate()
            .map(|(i, key)| (key.clone(), i + 1))
            .collect();
        Ok(LoadedSnapshot {
            snapshot,
            all_aggregates,
            class_keys,
            class_ids,
            all_sorted_by_id: AtomicBool::new(false),
        })
    }

    /// An estimate of the memory this snapshot holds.
    pub fn memory_bytes(&self) -> usize {
        let aggregates: usize = self
            .all_aggregates
            .iter()
            .map(|(key, aggregate)| {
                key.len() * 2 + aggregate.name.len() + aggregate.indexes.len() * 4 + 96
            })
            .sum();
        self.snapshot.memory_bytes() + aggregates
    }
}

impl HeapSnapshot {
    /// (context count, retained-by-context size, count, not-retained size, count).
    pub(crate) fn retained_by_context_summary(&self) -> (u64, u64, u64, u64, u64) {
        let mask = self.filter_mask(&NodeFilter::RetainedByContexts);
        let (mut contexts, mut size, mut count, mut other_size, mut other_count) = (0, 0, 0, 0, 0);
        for (ordinal, retained_by_context) in mask.iter().enumerate() {
            let ni = ordinal * self.nf;
            let self_size = self.self_size(ni);
            if self_size == 0 {
                continue;
            }
            if *retained_by_context {
                count += 1;
                size += self_size;
            } else {
                other_count += 1;
                other_size += self_size;
            }
            if self.is_context_object(ni) {
                contexts += 1;
            }
        }
        (contexts, size, count, other_size, other_count)
    }

    /// The largest odd (JavaScript object) id.
    pub(crate) fn max_js_object_id(&self) -> u32 {
        (0..self.node_count)
            .map(|ordinal| self.node_id(ordinal * self.nf))
            .filter(|id| id % 2 == 1)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests;
