//! The dominator tree (Lengauer–Tarjan with path compression) over the essential edges, and
//! retained sizes as subtree sums of the (shallow) self sizes.
//!
//! Vertices are numbered ordinal + 1 so that 0 can mean "none". Nodes the root cannot reach
//! are attached under the root the way DevTools does it: first those whose retainers are all
//! non-essential (each with a depth-first walk of its own), then any left over, one by one.

use crate::HeapError;
use crate::snapshot::HeapSnapshot;

impl HeapSnapshot {
    pub(crate) fn calculate_dominators_and_retained_sizes(
        &mut self,
        essential: &[bool],
    ) -> Result<(), HeapError> {
        let n_nodes = self.node_count;
        let len = n_nodes + 1;
        let ef = self.ef;
        let nf = self.nf;
        let mut parent = vec![0u32; len];
        let mut ancestor = vec![0u32; len];
        let mut vertex = vec![0u32; len];
        let mut label = vec![0u32; len];
        let mut semi = vec![0u32; len];
        let mut next_edge = vec![0u32; len];
        let mut n: u32 = 0;
        let edge_target = |ei: usize| self.edges[ei + self.e_to] / nf as u32;

        // Iterative depth-first numbering from `root` (a vertex number).
        let dfs = |root: u32,
                   parent: &mut Vec<u32>,
                   vertex: &mut Vec<u32>,
                   label: &mut Vec<u32>,
                   semi: &mut Vec<u32>,
                   next_edge: &mut Vec<u32>,
                   n: &mut u32| {
            let root_ordinal = (root - 1) as usize;
            next_edge[root_ordinal] = self.first_edge[root_ordinal];
            let mut v = root;
            while v != 0 {
                if semi[v as usize] == 0 {
                    *n += 1;
                    semi[v as usize] = *n;
                    vertex[*n as usize] = v;
                    label[v as usize] = v;
                }
                let mut v_next = parent[v as usize];
                let v_ordinal = (v - 1) as usize;
                let end = self.first_edge[v_ordinal + 1];
                while next_edge[v_ordinal] < end {
                    let ei = next_edge[v_ordinal] as usize;
                    if essential[ei / ef] {
                        let w_ordinal = edge_target(ei) as usize;
                        let w = w_ordinal as u32 + 1;
                        if semi[w as usize] == 0 {
                            parent[w as usize] = v;
                            next_edge[w_ordinal] = self.first_edge[w_ordinal];
                            v_next = w;
                            break;
                        }
                    }
                    next_edge[v_ordinal] += ef as u32;
                }
                v = v_next;
            }
        };

        let r = (self.root / nf) as u32 + 1;
        dfs(
            r,
            &mut parent,
            &mut vertex,
            &mut label,
            &mut semi,
            &mut next_edge,
            &mut n,
        );
        if (n as usize) < n_nodes {
            for v in 1..=n_nodes as u32 {
                let ordinal = (v - 1) as usize;
                if semi[v as usize] == 0 && self.has_only_weak_retainers(ordinal, essential) {
                    parent[v as usize] = r;
                    dfs(
                        v,
                        &mut parent,
                        &mut vertex,
                        &mut label,
                        &mut semi,
                        &mut next_edge,
                        &mut n,
                    );
                }
            }
        }
        if (n as usize) < n_nodes {
            for v in 1..=n_nodes as u32 {
                if semi[v as usize] == 0 {
                    parent[v as usize] = r;
                    n += 1;
                    semi[v as usize] = n;
                    vertex[n as usize] = v;
                    label[v as usize] = v;
                }
            }
        }

        let mut compression_stack = vec![0u32; len];
        let mut evaluate =
            |v: u32, ancestor: &mut Vec<u32>, label: &mut Vec<u32>, semi: &Vec<u32>| -> u32 {
                if ancestor[v as usize] == 0 {
                    return v;
                }
                let mut sp = 0usize;
                let mut x = v;
                while ancestor[ancestor[x as usize] as usize] != 0 {
                    sp += 1;
                    compression_stack[sp] = x;
                    x = ancestor[x as usize];
                }
                while sp > 0 {
                    let w = compression_stack[sp] as usize;
                    sp -= 1;
                    let a = ancestor[w] as usize;
                    if semi[label[a] as usize] < semi[label[w] as usize] {
                        label[w] = label[a];
                    }
                    ancestor[w] = ancestor[a];
                }
                label[v as usize]
            };

        // Buckets as singly linked lists: head per vertex, next per member.
        let mut bucket_head = vec![0u32; len];
        let mut bucket_next = vec![0u32; len];
        let mut dom = vec![0u32; len];
        for i in (2..=n as usize).rev() {
            let w = vertex[i];
            let w_ordinal = (w - 1) as usize;
            let mut orphan = true;
            for slot in
                self.first_retainer[w_ordinal] as usize..self.first_retainer[w_ordinal + 1] as usize
            {
                if !essential[self.retaining_edges[slot] as usize / ef] {
                    continue;
                }
                orphan = false;
                let v = self.retaining_nodes[slot] / nf as u32 + 1;
                let u = evaluate(v, &mut ancestor, &mut label, &semi);
                if semi[u as usize] < semi[w as usize] {
                    semi[w as usize] = semi[u as usize];
                }
            }
            if orphan {
                semi[w as usize] = semi[r as usize];
            }
            let owner = vertex[semi[w as usize] as usize] as usize;
            // A vertex enters each bucket once (it is processed once).
            bucket_next[w as usize] = bucket_head[owner];
            bucket_head[owner] = w;
            let p = parent[w as usize];
            ancestor[w as usize] = p;
            let mut member = bucket_head[p as usize];
            bucket_head[p as usize] = 0;
            while member != 0 {
                let next = bucket_next[member as usize];
                let u = evaluate(member, &mut ancestor, &mut label, &semi);
                dom[member as usize] = if semi[u as usize] < semi[member as usize] {
                    u
                } else {
                    p
                };
                member = next;
            }
        }
        dom[0] = r;
        dom[r as usize] = r;
        for i in 2..=n as usize {
            let w = vertex[i] as usize;
            if dom[w] != vertex[semi[w] as usize] {
                dom[w] = dom[dom[w] as usize];
            }
        }

        let mut dominators = vec![0u32; n_nodes];
        let mut retained = vec![0u64; n_nodes];
        for ordinal in 0..n_nodes {
            dominators[ordinal] = dom[ordinal + 1].wrapping_sub(1);
            retained[ordinal] = u64::from(self.nodes[ordinal * nf + self.o_self]);
        }
        for i in (2..=n as usize).rev() {
            let ordinal = (vertex[i] - 1) as usize;
            let dominator = dominators[ordinal] as usize;
            if dominator >= n_nodes {
                return Err(HeapError::Format(
                    "the dominator tree is inconsistent".into(),
                ));
            }
            retained[dominator] += retained[ordinal];
        }
        self.dominators = dominators;
        self.retained = retained;
        Ok(())
    }

    fn has_only_weak_retainers(&self, ordinal: usize, essential: &[bool]) -> bool {
        let range =
            self.first_retainer[ordinal] as usize..self.first_retainer[ordinal + 1] as usize;
        !range
            .into_iter()
            .any(|slot| essential[self.retaining_edges[slot] as usize / self.ef])
    }

    /// The children of each node in the dominator tree, as node indexes.
    pub(crate) fn build_dominated_nodes(&mut self) -> Result<(), HeapError> {
        let count = self.node_count;
        let root_ordinal = self.root / self.nf;
        let (from, to) = if root_ordinal == 0 {
            (1, count)
        } else if root_ordinal == count - 1 {
            (0, count - 1)
        } else {
            return Err(HeapError::Format(
                "the root node is expected to be the first or the last node".into(),
            ));
        };
        let mut index = vec![0u32; count + 1];
        let mut dominated = vec![0u32; count.saturating_sub(1)];
        for ordinal in from..to {
            index[self.dominators[ordinal] as usize] += 1;
        }
        let mut first = 0u32;
        for slot in index.iter_mut().take(count) {
            let dominated_count = *slot;
            if (first as usize) < dominated.len() {
                dominated[first as usize] = dominated_count;
            }
            *slot = first;
            first += dominated_count;
        }
        index[count] = dominated.len() as u32;
        for ordinal in from..to {
            let dominator = self.dominators[ordinal] as usize;
            let base = index[dominator] as usize;
            dominated[base] -= 1;
            let at = base + dominated[base] as usize;
            dominated[at] = (ordinal * self.nf) as u32;
        }
        self.first_dominated = index;
        self.dominated = dominated;
        Ok(())
    }
}
