//! What a tenant's footprint (`browser::features::footprint`) may hold, and for how long its
//! workers may run outside its calls: decided here from one measurement, carried out by
//! the watch (`watch.rs`), so every rule is a plain function of what was measured.

use crate::browser::cdp::renderer_processes::{RENDERER_BASELINE, TICKS_PER_SECOND};
use crate::browser::features::footprint::{Footprint, Holder, Owner};
use crate::browser::features::renderer_memory::MAX_CONTEXTS;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long no call may run before what ran meanwhile is judged.
pub const QUIET_WINDOW: Duration = Duration::from_secs(3);
/// The share of a core a worker thread may use outside calls: a quarter, so a worker that
/// spins is caught even when it gets half a core on a loaded machine.
const BUSY_SHARE: f64 = 0.25;

/// What must be closed or ended, and why (the note's reason).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    ClosePage {
        id: u32,
        reason: String,
    },
    /// A worker target: `what` names it in the note ("Shared worker https://…").
    CloseWorker {
        target_id: String,
        what: String,
        reason: String,
    },
    /// A renderer process, and the pages it served (they crash with it and are closed).
    EndProcess {
        pid: u32,
        pages: Vec<u32>,
        reason: String,
    },
}

/// What the measurement is judged against.
pub struct Limits {
    /// The tenant's `renderer_memory_mib`, in bytes.
    pub cap: u64,
    /// A renderer of the browser ended recently by the browser-wide ceiling: what it held,
    /// and the ceiling.
    pub ended: Option<(u64, Option<u64>)>,
    /// A call holds the session: the page's own frames may be too busy to answer.
    pub in_call: bool,
}

impl Limits {
    fn quota(&self) -> String {
        format!(
            "this tenant's renderer_memory_mib of {} MiB",
            self.cap >> 20
        )
    }
}

/// Every holder that cannot be measured or whose renderer crashed, then the largest holder
/// when the heaps together are over the cap, then the largest process when the processes
/// together are over the cap plus [`RENDERER_BASELINE`].
pub fn verdicts(footprint: &Footprint, limits: &Limits) -> Vec<Verdict> {
    let quota = limits.quota();
    let mut verdicts = vec![];
    let mut measurable = vec![];
    for holder in &footprint.holders {
        match unmeasurable(holder, limits, &quota) {
            Some(reason) => verdicts.push(close(holder, reason)),
            None => measurable.push(holder),
        }
    }
    let heap = footprint.heap_bytes();
    if heap > limits.cap
        && let Some(largest) = measurable.iter().max_by_key(|holder| holder.heap.bytes)
    {
        let held = largest.heap.bytes;
        let reason = if held > limits.cap {
            format!(
                "its JavaScript heap and buffers reached {} MiB, over {quota}",
                held >> 20
            )
        } else {
            format!(
                "its JavaScript heap and buffers reached {} MiB, the most of the {} MiB this tenant's pages and workers hold together, over {quota}",
                held >> 20,
                heap >> 20
            )
        };
        verdicts.push(close(largest, reason));
    }
    let allowed = limits.cap.saturating_add(RENDERER_BASELINE);
    let processes = footprint.process_bytes();
    if processes > allowed
        && let Some(largest) = footprint
            .processes
            .iter()
            .max_by_key(|process| process.private_bytes)
    {
        let pages = largest
            .holders
            .iter()
            .filter_map(|index| match footprint.holders.get(*index)?.owner {
                Owner::Page(id) => Some(id),
                Owner::Worker { .. } => None,
            })
            .collect();
        verdicts.push(Verdict::EndProcess {
            pid: largest.pid,
            pages,
            reason: format!(
                "its renderer process held {} MiB as the OS counts it (Wasm memories and canvases included) and this tenant's renderer processes {} MiB, over the {} MiB allowed under {quota} (the cap plus {} MiB for what a renderer holds besides its heaps), and was ended",
                largest.private_bytes >> 20,
                processes >> 20,
                allowed >> 20,
                RENDERER_BASELINE >> 20
            ),
        });
    }
    verdicts
}

/// Why a holder cannot be held to the cap, if it cannot.
fn unmeasurable(holder: &Holder, limits: &Limits, quota: &str) -> Option<String> {
    if holder.too_many() {
        return Some(format!(
            "it started more than {MAX_CONTEXTS} workers and frames, more than can be measured under {quota}"
        ));
    }
    let page = matches!(holder.owner, Owner::Page(_));
    // A renderer ended under a call shows as crashed, or (once the call answered the crash
    // and the browser dropped the page's session) as a page that no longer answers.
    let ended_silent =
        limits.ended.is_some() && page && holder.heap.silent.iter().any(|kind| kind == "page");
    if holder.heap.crashed || ended_silent {
        return Some(match limits.ended {
            Some((held, Some(limit))) => format!(
                "its renderer process held {} MiB, over the {} MiB a renderer may hold under {quota}, and was ended",
                held >> 20,
                limit >> 20
            ),
            _ => "its renderer process crashed".to_string(),
        });
    }
    // A call may keep the page's own threads busy; a worker it does not run in.
    let silent = holder
        .heap
        .silent
        .iter()
        .find(|kind| !limits.in_call || !matches!(kind.as_str(), "page" | "iframe"))?;
    Some(format!(
        "its {silent} did not answer a memory measurement within 2 s, and what cannot be measured counts as over {quota}"
    ))
}

fn close(holder: &Holder, reason: String) -> Verdict {
    match &holder.owner {
        Owner::Page(id) => Verdict::ClosePage { id: *id, reason },
        Owner::Worker {
            target_id,
            kind,
            url,
        } => Verdict::CloseWorker {
            target_id: target_id.clone(),
            what: worker_name(kind, url),
            reason,
        },
    }
}

fn worker_name(kind: &str, url: &str) -> String {
    match kind {
        "shared_worker" => format!("Shared worker {url}"),
        "service_worker" => format!("Service worker {url}"),
        other => format!("Worker {url} ({other})"),
    }
}

/// The CPU the tenant's worker threads used since no call ran, thread by thread.
#[derive(Debug, Default)]
pub struct Quiet {
    since: Option<Instant>,
    /// (pid, tid) -> CPU ticks when the window started (or the thread was first seen).
    base: HashMap<(u32, u32), u64>,
}

impl Quiet {
    /// Judges a window of [`QUIET_WINDOW`] without calls: a worker thread that used more than
    /// [`BUSY_SHARE`] of a core in it is stopped (its shared or service workers closed, or the pages of its
    /// process that started dedicated workers), and a new window starts.
    pub fn observe(&mut self, footprint: &Footprint, in_call: bool, now: Instant) -> Vec<Verdict> {
        if in_call {
            *self = Quiet::default();
            return vec![];
        }
        let since = *self.since.get_or_insert(now);
        let threads = footprint.processes.iter().flat_map(|process| {
            process
                .worker_threads
                .iter()
                .map(move |thread| (process, thread))
        });
        let mut busy = vec![];
        let elapsed = now.saturating_duration_since(since);
        let window_ticks = elapsed.as_secs_f64() * TICKS_PER_SECOND as f64;
        for (process, thread) in threads {
            let base = *self
                .base
                .entry((process.pid, thread.tid))
                .or_insert(thread.cpu_ticks);
            let used = thread.cpu_ticks.saturating_sub(base);
            if elapsed >= QUIET_WINDOW && used as f64 > window_ticks * BUSY_SHARE {
                busy.push((process, thread.kind, used));
            }
        }
        if elapsed < QUIET_WINDOW {
            return vec![];
        }
        *self = Quiet::default();
        let mut verdicts: Vec<Verdict> = vec![];
        for (process, kind, used) in busy {
            let reason = format!(
                "it ran outside any call of this tenant, using {:.1} s of CPU in the last {} s",
                used as f64 / TICKS_PER_SECOND as f64,
                elapsed.as_secs()
            );
            for verdict in stop(footprint, process.holders.as_slice(), kind, &reason) {
                if !verdicts.contains(&verdict) {
                    verdicts.push(verdict);
                }
            }
        }
        verdicts
    }
}

/// What stops a busy worker thread of `kind` in a process serving `holders`: the browser
/// does not say which worker a thread runs, so every worker of that kind that may be it.
fn stop(footprint: &Footprint, holders: &[usize], kind: &str, reason: &str) -> Vec<Verdict> {
    let target_kind = match kind {
        "SharedWorker" => "shared_worker",
        "ServiceWorker" => "service_worker",
        _ => "worker",
    };
    let mut verdicts = vec![];
    for (index, holder) in footprint.holders.iter().enumerate() {
        match &holder.owner {
            Owner::Worker {
                target_id,
                kind,
                url,
            } if kind == target_kind => verdicts.push(Verdict::CloseWorker {
                target_id: target_id.clone(),
                what: worker_name(kind, url),
                reason: reason.to_string(),
            }),
            // A page's dedicated workers (and the service workers it has attached) go with
            // it; only a page of the busy process can hold the thread.
            Owner::Page(id)
                if holders.contains(&index)
                    && holder
                        .contexts
                        .iter()
                        .any(|context| context.kind == target_kind) =>
            {
                verdicts.push(Verdict::ClosePage {
                    id: *id,
                    reason: format!("one of its workers {}", reason.trim_start_matches("it ")),
                })
            }
            _ => {}
        }
    }
    verdicts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::cdp::renderer_processes::WorkerThread;
    use crate::browser::features::footprint::Process;
    use crate::browser::features::renderer_memory::{Context, Holding};

    const MIB: u64 = 1 << 20;

    fn context(kind: &str) -> Context {
        Context {
            session: format!("s-{kind}"),
            target_id: format!("t-{kind}"),
            kind: kind.to_string(),
            attached: None,
        }
    }

    fn page(id: u32, bytes: u64, kinds: &[&str]) -> Holder {
        Holder {
            owner: Owner::Page(id),
            contexts: kinds.iter().map(|kind| context(kind)).collect(),
            heap: Holding {
                bytes,
                ..Holding::default()
            },
        }
    }

    fn shared_worker(bytes: u64) -> Holder {
        Holder {
            owner: Owner::Worker {
                target_id: "sw".to_string(),
                kind: "shared_worker".to_string(),
                url: "http://127.0.0.1/w.js".to_string(),
            },
            contexts: vec![context("shared_worker")],
            heap: Holding {
                bytes,
                ..Holding::default()
            },
        }
    }

    fn limits() -> Limits {
        Limits {
            cap: 64 * MIB,
            ended: None,
            in_call: false,
        }
    }

    #[test]
    fn the_heaps_of_pages_and_unowned_workers_count_together() {
        let footprint = Footprint {
            holders: vec![page(1, 30 * MIB, &["page"]), shared_worker(40 * MIB)],
            processes: vec![],
        };
        let verdicts = verdicts(&footprint, &limits());
        let [Verdict::CloseWorker { what, reason, .. }] = verdicts.as_slice() else {
            panic!("{verdicts:?}");
        };
        assert_eq!(what, "Shared worker http://127.0.0.1/w.js");
        assert!(reason.contains("the most of the 70 MiB"), "{reason}");
        assert!(reason.contains("renderer_memory_mib of 64 MiB"), "{reason}");
        let under = Footprint {
            holders: vec![page(1, 30 * MIB, &["page"]), shared_worker(30 * MIB)],
            processes: vec![],
        };
        assert!(super::verdicts(&under, &limits()).is_empty());
    }

    #[test]
    fn the_processes_together_are_held_to_the_cap_and_a_baseline() {
        let process = |pid, mib, holders: Vec<usize>| Process {
            pid,
            private_bytes: mib * MIB,
            holders,
            worker_threads: vec![],
        };
        let footprint = Footprint {
            holders: vec![page(1, MIB, &["page"]), page(2, MIB, &["page", "iframe"])],
            processes: vec![process(10, 40, vec![0]), process(11, 160, vec![1])],
        };
        let verdicts = verdicts(&footprint, &limits());
        let [Verdict::EndProcess { pid, pages, reason }] = verdicts.as_slice() else {
            panic!("{verdicts:?}");
        };
        assert_eq!((*pid, pages.as_slice()), (11, [2].as_slice()));
        assert!(
            reason.contains("its renderer process held 160 MiB"),
            "{reason}"
        );
        assert!(reason.contains("over the 192 MiB allowed"), "{reason}");
        let within = Footprint {
            holders: vec![page(1, MIB, &["page"])],
            processes: vec![process(10, 190, vec![0])],
        };
        assert!(super::verdicts(&within, &limits()).is_empty());
    }

    #[test]
    fn a_silent_worker_is_closed_even_during_a_call_and_a_silent_page_only_outside_one() {
        let mut busy_page = page(1, MIB, &["page"]);
        busy_page.heap.silent = vec!["page".to_string()];
        let mut busy_worker = shared_worker(MIB);
        busy_worker.heap.silent = vec!["shared_worker".to_string()];
        let footprint = Footprint {
            holders: vec![busy_page, busy_worker],
            processes: vec![],
        };
        let in_call = Limits {
            in_call: true,
            ..limits()
        };
        let verdicts = verdicts(&footprint, &in_call);
        assert!(
            matches!(verdicts.as_slice(), [Verdict::CloseWorker { .. }]),
            "{verdicts:?}"
        );
        assert_eq!(super::verdicts(&footprint, &limits()).len(), 2);
    }

    #[test]
    fn a_worker_thread_busy_for_a_window_without_calls_is_stopped() {
        let footprint = |ticks| Footprint {
            holders: vec![
                page(1, MIB, &["page", "worker"]),
                page(2, MIB, &["page"]),
                shared_worker(MIB),
            ],
            processes: vec![Process {
                pid: 10,
                private_bytes: 30 * MIB,
                holders: vec![0, 1],
                worker_threads: vec![
                    WorkerThread {
                        tid: 11,
                        kind: "SharedWorker",
                        cpu_ticks: ticks,
                    },
                    WorkerThread {
                        tid: 12,
                        kind: "DedicatedWorker",
                        cpu_ticks: 5,
                    },
                ],
            }],
        };
        let start = Instant::now();
        let mut quiet = Quiet::default();
        assert!(quiet.observe(&footprint(100), false, start).is_empty());
        let later = start + QUIET_WINDOW;
        let verdicts = quiet.observe(&footprint(380), false, later);
        let [Verdict::CloseWorker { what, reason, .. }] = verdicts.as_slice() else {
            panic!("{verdicts:?}");
        };
        assert_eq!(what, "Shared worker http://127.0.0.1/w.js");
        assert!(reason.contains("outside any call"), "{reason}");
        assert!(reason.contains("2.8 s of CPU in the last 3 s"), "{reason}");

        // A call in the window starts it again; a dedicated worker's thread closes its page.
        let mut quiet = Quiet::default();
        assert!(quiet.observe(&footprint(100), false, start).is_empty());
        assert!(quiet.observe(&footprint(200), true, later).is_empty());
        assert!(quiet.observe(&footprint(380), false, later).is_empty());
        let mut dedicated = footprint(0);
        dedicated.processes[0].worker_threads[1].cpu_ticks = 300;
        let mut quiet = Quiet::default();
        let mut idle = footprint(0);
        idle.processes[0].worker_threads[1].cpu_ticks = 0;
        assert!(quiet.observe(&idle, false, start).is_empty());
        let verdicts = quiet.observe(&dedicated, false, later);
        let [Verdict::ClosePage { id: 1, reason }] = verdicts.as_slice() else {
            panic!("{verdicts:?}");
        };
        assert!(
            reason.starts_with("one of its workers ran outside any call"),
            "{reason}"
        );
    }
}
