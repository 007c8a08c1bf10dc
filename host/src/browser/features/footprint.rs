//! What a tenant's browser context holds, counted where it is held rather than where a
//! script put it. Two measures, since neither sees everything:
//! - every target of the context ([`Holder`]s: its pages with their frames and workers, and
//!   the shared and service workers no page owns), each context counting its JavaScript
//!   heap, DOM and ArrayBuffers over DevTools (`renderer_memory`);
//! - the renderer processes serving those targets, as the OS counts them ([`Process`]es:
//!   Wasm memories, canvas backing stores, decoded images and allocator slack that no heap
//!   shows), with the CPU time their worker threads use.
//!
//! A renderer process serves one browser context only, but the browser does not say which
//! process serves a target. It is found by the CPU time each frame reports for its process
//! (`Performance.getMetrics` `ProcessTime`), which must fall between two readings of exactly
//! one renderer's CPU time in `/proc`; a frame whose time matches several is left for the
//! next measurement. [`counted`] says how each kind of target counts and [`MEMORY`] how each
//! kind of memory does, Blobs included (which the browser process keeps, not a renderer).

use super::renderer_memory::{self, Context, Holding, MAX_CONTEXTS};
use crate::browser::cdp::raw::RawClient;
use crate::browser::cdp::renderer_processes::{self, TICKS_PER_SECOND, WorkerThread};
use futures::future::join_all;
use serde_json::json;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

/// How a kind of target Chromium reports counts in its context's footprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counting {
    /// A holder of its own: its heaps and those of the contexts it started, and the
    /// processes its frames run in.
    Holder,
    /// A context of the page that started it (attached under the page), counted with it.
    PageContext,
    /// A holder of its own when no page of the context has it attached (a service worker
    /// outlives its pages); otherwise a context of that page.
    PageContextOrHolder,
    /// The browser's own (its UI, a tab around a page): no tenant's script runs in it.
    NotTheTenants,
}

/// Every target type Chromium 156 reports (`content/browser/devtools`), with how it counts.
pub const TARGET_KINDS: &[&str] = &[
    "page",
    "iframe",
    "worker",
    "shared_worker",
    "service_worker",
    "worklet",
    "shared_storage_worklet",
    "auction_worklet",
    "tab",
    "browser",
    "browser_ui",
    "webview",
    "background_page",
    "app",
    "assistive_technology",
    "other",
];

/// How a target of `kind` counts; an unknown kind counts as a holder of its own, so a new
/// kind of target is measured before anyone decides it need not be.
pub fn counted(kind: &str) -> Counting {
    match kind {
        "page" | "shared_worker" => Counting::Holder,
        "service_worker" => Counting::PageContextOrHolder,
        "iframe" | "worker" | "worklet" | "shared_storage_worklet" | "auction_worklet" => {
            Counting::PageContext
        }
        // A tab is the container of a page; browser_ui the browser's own WebUI (its own
        // `--top-chrome-webui` renderers); extensions and webviews are not offered to
        // tenants; `other` is the browser's own agents (none is a document or a worker).
        "tab"
        | "browser"
        | "browser_ui"
        | "webview"
        | "background_page"
        | "app"
        | "assistive_technology"
        | "other" => Counting::NotTheTenants,
        _ => Counting::Holder,
    }
}

/// Each kind of memory a tenant's content can hold, and what counts it.
pub const MEMORY: &[(&str, &str)] = &[
    (
        "JavaScript heaps",
        "Runtime.getHeapUsage of every context (usedSize)",
    ),
    (
        "DOM and other Blink objects",
        "Runtime.getHeapUsage of every context (embedderHeapUsedSize)",
    ),
    (
        "ArrayBuffers",
        "Runtime.getHeapUsage of every context (backingStorageSize)",
    ),
    (
        "WebAssembly memories",
        "the private memory of the context's renderer processes",
    ),
    (
        "canvas backing stores and decoded images",
        "the private memory of the context's renderer processes",
    ),
    (
        "Blobs",
        "not counted: the browser process keeps them and no DevTools command says whose they are",
    ),
];

/// What owns a holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// One of the session's pages, by its id.
    Page(u32),
    /// A shared or service worker of the context that no page has attached.
    Worker {
        target_id: String,
        kind: String,
        url: String,
    },
}

/// A target of the context and the contexts it started.
#[derive(Debug)]
pub struct Holder {
    pub owner: Owner,
    pub contexts: Vec<Context>,
    pub heap: Holding,
}

impl Holder {
    /// It started more contexts than can be measured, itself a way around a cap.
    pub fn too_many(&self) -> bool {
        self.contexts.len() > MAX_CONTEXTS
    }
}

/// A renderer process serving the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    /// `RssAnon` + `VmSwap`.
    pub private_bytes: u64,
    /// The holders with a frame in it (indices into [`Footprint::holders`]).
    pub holders: Vec<usize>,
    pub worker_threads: Vec<WorkerThread>,
}

/// What a browser context holds.
#[derive(Debug, Default)]
pub struct Footprint {
    pub holders: Vec<Holder>,
    /// Empty when the renderers are not this machine's (an attached browser).
    pub processes: Vec<Process>,
}

impl Footprint {
    /// What the heaps of every context of every holder hold.
    pub fn heap_bytes(&self) -> u64 {
        self.holders.iter().map(|holder| holder.heap.bytes).sum()
    }

    /// What the context's renderer processes hold, as the OS counts it.
    pub fn process_bytes(&self) -> u64 {
        self.processes
            .iter()
            .map(|process| process.private_bytes)
            .sum()
    }
}

/// The renderer processes found serving the context so far. A process serves one browser
/// context for its whole life, so once found it stays the context's, also while no frame in
/// it can report (a call keeping its thread busy): pid -> (its start, which with the pid
/// names it for good; the first target ids of the holders it served).
#[derive(Debug, Default)]
pub struct Known {
    processes: HashMap<u32, (u64, Vec<String>)>,
}

impl Known {
    fn remember(&mut self, served: &BTreeMap<u32, Vec<usize>>, holders: &[Holder]) {
        for (pid, indices) in served {
            let Some(start) = renderer_processes::start_ticks(*pid) else {
                continue;
            };
            let targets = indices
                .iter()
                .filter_map(|index| Some(holders.get(*index)?.contexts.first()?.target_id.clone()))
                .collect();
            self.processes.insert(*pid, (start, targets));
        }
    }

    /// Adds the known processes still alive that no frame reported this time.
    fn recall(&mut self, served: &mut BTreeMap<u32, Vec<usize>>, holders: &[Holder]) {
        self.processes
            .retain(|pid, (start, _)| renderer_processes::start_ticks(*pid) == Some(*start));
        for (pid, (_, targets)) in &self.processes {
            served.entry(*pid).or_insert_with(|| {
                holders
                    .iter()
                    .enumerate()
                    .filter(|(_, holder)| {
                        holder
                            .contexts
                            .first()
                            .is_some_and(|own| targets.contains(&own.target_id))
                    })
                    .map(|(index, _)| index)
                    .collect()
            });
        }
    }
}

/// Where to look.
pub struct Scope<'a> {
    /// The session's pages: (page id, target id).
    pub pages: &'a [(u32, String)],
    /// The session's browser contexts; `None`: the whole browser is the session's.
    pub contexts: Option<&'a [String]>,
    /// Whether the renderers are processes of this machine (a browser we launched).
    pub local_renderers: bool,
}

/// Measures everything `scope` holds; each DevTools command is bounded by `timeout`.
pub async fn measure(
    raw: &RawClient,
    scope: &Scope<'_>,
    known: &mut Known,
    timeout: Duration,
) -> Footprint {
    let mut found: Vec<(Owner, Vec<Context>)> = vec![];
    for (id, target) in scope.pages {
        if let Ok(contexts) = renderer_memory::contexts(raw, target, timeout).await {
            found.push((Owner::Page(*id), contexts));
        }
    }
    let attached: HashSet<String> = found
        .iter()
        .flat_map(|(_, contexts)| contexts.iter().map(|context| context.target_id.clone()))
        .collect();
    for (target_id, kind, url) in unowned_workers(raw, scope.contexts, timeout).await {
        if attached.contains(&target_id) {
            continue;
        }
        if let Ok(contexts) = renderer_memory::contexts_of(raw, &target_id, &kind, timeout).await {
            found.push((
                Owner::Worker {
                    target_id,
                    kind,
                    url,
                },
                contexts,
            ));
        }
    }
    let heaps = join_all(found.iter().map(|(_, contexts)| {
        let measured = &contexts[..contexts.len().min(MAX_CONTEXTS)];
        renderer_memory::measure(raw, measured, timeout)
    }))
    .await;
    let holders: Vec<Holder> = found
        .into_iter()
        .zip(heaps)
        .map(|((owner, contexts), heap)| Holder {
            owner,
            contexts,
            heap,
        })
        .collect();
    let processes = if scope.local_renderers {
        processes(raw, &holders, scope.contexts.is_none(), known, timeout).await
    } else {
        vec![]
    };
    Footprint { holders, processes }
}

/// The context's shared and service workers: (target id, type, url).
async fn unowned_workers(
    raw: &RawClient,
    contexts: Option<&[String]>,
    timeout: Duration,
) -> Vec<(String, String, String)> {
    let Ok(listed) = raw
        .call(None, "Target.getTargets", json!({}), timeout)
        .await
        .and_then(|reply| reply.result())
    else {
        return vec![];
    };
    let text = |info: &serde_json::Value, key: &str| info[key].as_str().unwrap_or("").to_string();
    listed["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|info| {
            let context = text(info, "browserContextId");
            contexts.is_none_or(|own| own.contains(&context))
        })
        .filter(|info| {
            matches!(
                counted(&text(info, "type")),
                Counting::PageContextOrHolder | Counting::Holder
            ) && info["type"] != "page"
        })
        .map(|info| {
            (
                text(info, "targetId"),
                text(info, "type"),
                text(info, "url"),
            )
        })
        .collect()
}

/// The renderer processes serving the holders' frames; with `whole_browser`, every content
/// renderer of the browser (all of them are the session's).
async fn processes(
    raw: &RawClient,
    holders: &[Holder],
    whole_browser: bool,
    known: &mut Known,
    timeout: Duration,
) -> Vec<Process> {
    let Ok(pids) = renderer_processes::content_renderer_pids(raw, timeout).await else {
        return vec![];
    };
    let frames: Vec<(usize, &Context)> = holders
        .iter()
        .enumerate()
        .flat_map(|(index, holder)| {
            holder
                .contexts
                .iter()
                .take(MAX_CONTEXTS)
                .filter(|context| matches!(context.kind.as_str(), "page" | "iframe"))
                .map(move |context| (index, context))
        })
        .collect();
    let before: Vec<Option<u64>> = pids
        .iter()
        .map(|pid| renderer_processes::cpu_ticks(*pid))
        .collect();
    let reported = join_all(
        frames
            .iter()
            .map(|(_, context)| process_time(raw, &context.session, timeout)),
    )
    .await;
    let after: Vec<Option<u64>> = pids
        .iter()
        .map(|pid| renderer_processes::cpu_ticks(*pid))
        .collect();
    let readings: Vec<(u32, u64, u64)> = pids
        .iter()
        .zip(before.iter().zip(&after))
        .filter_map(|(pid, (before, after))| Some((*pid, (*before)?, (*after)?)))
        .collect();
    let mut served: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    if whole_browser {
        served.extend(readings.iter().map(|(pid, _, _)| (*pid, vec![])));
    }
    for ((holder, _), seconds) in frames.iter().zip(reported) {
        let Some(pid) = seconds.and_then(|seconds| serving_process(seconds, &readings)) else {
            continue;
        };
        let holders = served.entry(pid).or_default();
        if !holders.contains(holder) {
            holders.push(*holder);
        }
    }
    known.remember(&served, holders);
    known.recall(&mut served, holders);
    served
        .into_iter()
        .filter_map(|(pid, holders)| {
            Some(Process {
                pid,
                private_bytes: renderer_processes::private_bytes(pid)?,
                holders,
                worker_threads: renderer_processes::worker_threads(pid),
            })
        })
        .collect()
}

/// The CPU time of its process a frame reports, in seconds.
async fn process_time(raw: &RawClient, session: &str, timeout: Duration) -> Option<f64> {
    raw.call(Some(session), "Performance.enable", json!({}), timeout)
        .await
        .ok()?
        .result()
        .ok()?;
    let metrics = raw
        .call(Some(session), "Performance.getMetrics", json!({}), timeout)
        .await
        .ok()?
        .result()
        .ok()?;
    metrics["metrics"]
        .as_array()?
        .iter()
        .find(|metric| metric["name"] == "ProcessTime")?["value"]
        .as_f64()
}

/// The one renderer whose CPU time, read before and after the frames reported theirs
/// (`(pid, ticks before, ticks after)`), covers `seconds`; `None` when none or several do.
fn serving_process(seconds: f64, readings: &[(u32, u64, u64)]) -> Option<u32> {
    // The frame's reading is in whole ticks too, or finer: it lies within a tick of the span.
    let tick = 1.0 / TICKS_PER_SECOND as f64;
    let to_seconds = |ticks: u64| ticks as f64 / TICKS_PER_SECOND as f64;
    let mut matching = readings.iter().filter(|(_, before, after)| {
        seconds >= to_seconds(*before) - tick / 2.0 && seconds < to_seconds(*after) + tick
    });
    let (pid, _, _) = matching.next()?;
    matching.next().is_none().then_some(*pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_target_counts_or_is_the_browsers_own() {
        let of = |counting: Counting| -> Vec<&str> {
            TARGET_KINDS
                .iter()
                .copied()
                .filter(|kind| counted(kind) == counting)
                .collect()
        };
        // Pages and the workers no page owns are holders; frames, dedicated workers and
        // worklets are attached under the page that started them and count with it.
        assert_eq!(of(Counting::Holder), ["page", "shared_worker"]);
        assert_eq!(of(Counting::PageContextOrHolder), ["service_worker"]);
        assert_eq!(
            of(Counting::PageContext),
            [
                "iframe",
                "worker",
                "worklet",
                "shared_storage_worklet",
                "auction_worklet"
            ]
        );
        assert_eq!(
            of(Counting::NotTheTenants),
            [
                "tab",
                "browser",
                "browser_ui",
                "webview",
                "background_page",
                "app",
                "assistive_technology",
                "other"
            ]
        );
        assert_eq!(counted("a_kind_chromium_adds_later"), Counting::Holder);
    }

    #[test]
    fn every_kind_of_memory_is_counted_or_said_not_to_be() {
        let kinds: Vec<&str> = MEMORY.iter().map(|(kind, _)| *kind).collect();
        for needed in [
            "JavaScript heaps",
            "ArrayBuffers",
            "WebAssembly memories",
            "canvas backing stores and decoded images",
            "Blobs",
        ] {
            assert!(kinds.contains(&needed), "{needed} is not accounted for");
        }
        for (kind, how) in MEMORY {
            assert!(
                how.starts_with("Runtime.getHeapUsage")
                    || how.starts_with("the private memory")
                    || how.starts_with("not counted: "),
                "{kind}: {how}"
            );
        }
    }

    #[test]
    fn a_frame_is_served_by_the_one_process_whose_cpu_time_covers_its_report() {
        let readings = [(10, 30, 30), (11, 45, 52), (12, 200, 200)];
        assert_eq!(serving_process(0.30, &readings), Some(10));
        assert_eq!(serving_process(0.48, &readings), Some(11));
        assert_eq!(serving_process(0.524, &readings), Some(11));
        assert_eq!(serving_process(2.0, &readings), Some(12));
        assert_eq!(serving_process(1.0, &readings), None);
        // Two renderers with the same CPU time: neither is taken.
        let tied = [(10, 30, 30), (13, 30, 31)];
        assert_eq!(serving_process(0.30, &tied), None);
    }

    #[test]
    fn a_process_found_once_stays_the_contexts_while_it_lives() {
        let page = |target: &str| Holder {
            owner: Owner::Page(1),
            contexts: vec![Context {
                session: "s".to_string(),
                target_id: target.to_string(),
                kind: "page".to_string(),
                attached: None,
            }],
            heap: Holding::default(),
        };
        let own = std::process::id();
        let gone = u32::MAX - 1;
        let mut known = Known::default();
        let holders = [page("T1"), page("T2")];
        known.remember(&BTreeMap::from([(own, vec![1])]), &holders);
        known.processes.insert(gone, (1, vec!["T1".to_string()]));
        // No frame reported this time (the holders listed in another order).
        let now = [page("T2"), page("T1")];
        let mut served = BTreeMap::new();
        known.recall(&mut served, &now);
        assert_eq!(served, BTreeMap::from([(own, vec![0])]));
        assert!(
            !known.processes.contains_key(&gone),
            "a process that ended is forgotten"
        );
    }

    #[test]
    fn the_footprint_adds_up_what_its_holders_and_processes_hold() {
        let holder = |bytes| Holder {
            owner: Owner::Page(1),
            contexts: vec![],
            heap: Holding {
                bytes,
                ..Holding::default()
            },
        };
        let process = |private_bytes| Process {
            pid: 1,
            private_bytes,
            holders: vec![0],
            worker_threads: vec![],
        };
        let footprint = Footprint {
            holders: vec![holder(5), holder(7)],
            processes: vec![process(100), process(20)],
        };
        assert_eq!(footprint.heap_bytes(), 12);
        assert_eq!(footprint.process_bytes(), 120);
    }
}
