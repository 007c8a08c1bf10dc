//! A snapshot's numbers as data (not the reference's text), for tools that compute on them.

use crate::snapshot::{HeapSnapshot, Statistics};

/// One class: DevTools' summary grouping.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassTotals {
    pub name: String,
    pub count: u64,
    pub self_size: u64,
    pub retained_size: u64,
}

/// Totals, DevTools' statistics and every class, largest retained size first.
#[derive(Debug, Clone)]
pub struct HeapNumbers {
    pub node_count: u64,
    pub total_size: f64,
    pub statistics: Statistics,
    pub classes: Vec<ClassTotals>,
}

impl HeapSnapshot {
    pub fn numbers(&self) -> HeapNumbers {
        let mut classes: Vec<ClassTotals> = self
            .aggregates(None)
            .into_values()
            .map(|aggregate| ClassTotals {
                name: aggregate.name,
                count: aggregate.count,
                self_size: aggregate.self_size,
                retained_size: aggregate.retained_size,
            })
            .collect();
        // Stable: classes of equal size keep DevTools' first-seen order.
        classes.sort_by_key(|class| std::cmp::Reverse(class.retained_size));
        HeapNumbers {
            node_count: self.node_count as u64,
            total_size: self.total_size(),
            statistics: self.statistics.clone(),
            classes,
        }
    }
}
