//! The metrics a trace gives directly: FCP, the LCP candidate (and its image), CLS session
//! windows, long tasks and total blocking time. Each follows the DevTools trace engine (or, for
//! TBT, Lighthouse) so the numbers agree with what the Performance panel shows.

use super::events::{Event, Meta, Navigation};
use serde_json::Value;

/// Tasks longer than this block the main thread (the long-task threshold).
pub(super) const LONG_TASK_US: f64 = 50_000.0;
/// A layout-shift session window closes after 1 s without shifts...
const MAX_SHIFT_GAP_US: f64 = 1_000_000.0;
/// ...or once it has lasted 5 s.
const MAX_CLUSTER_US: f64 = 5_000_000.0;

/// First contentful paint of `navigation` in the main frame.
pub(super) fn fcp(events: &[Value], meta: &Meta, navigation: &Navigation) -> Option<f64> {
    events
        .iter()
        .map(Event)
        .filter(|event| event.name() == "firstContentfulPaint")
        .filter(|event| meta.in_main_frame(*event))
        .filter(|event| event.data_str("navigationId") == Some(navigation.id.as_str()))
        .map(Event::ts)
        .min_by(f64::total_cmp)
}

/// The final largest-contentful-paint candidate of a navigation.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Lcp {
    pub ts: f64,
    pub candidate_index: i64,
    pub node_id: Option<i64>,
    pub node_name: Option<String>,
    /// Whether the element is an image (`type` other than `text`).
    pub is_image: bool,
    /// The image's URL, when the trace names it.
    pub image_url: Option<String>,
}

/// Chooses the LCP the way DevTools does: the main-frame candidate with the highest
/// `candidateIndex` for this navigation; an `Invalidate` event discards the candidate so far.
pub(super) fn lcp(events: &[Value], meta: &Meta, navigation: &Navigation) -> Option<Lcp> {
    let mut ordered: Vec<Event> = events
        .iter()
        .map(Event)
        .filter(|event| meta.in_main_frame(*event))
        .filter(|event| {
            matches!(
                event.name(),
                "largestContentfulPaint::Candidate" | "largestContentfulPaint::Invalidate"
            )
        })
        .collect();
    ordered.sort_by(|a, b| a.ts().total_cmp(&b.ts()));
    let mut chosen: Option<(Lcp, Event)> = None;
    for event in ordered {
        let navigation_id = event.data_str("navigationId");
        if event.name() == "largestContentfulPaint::Invalidate" {
            if navigation_id.is_none_or(|id| id == navigation.id) && event.ts() >= navigation.ts {
                chosen = None;
            }
            continue;
        }
        if navigation_id != Some(navigation.id.as_str())
            || event.data_bool("isOutermostMainFrame") == Some(false)
        {
            continue;
        }
        let index = event
            .data()
            .get("candidateIndex")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if chosen
            .as_ref()
            .is_none_or(|(current, _)| index >= current.candidate_index)
        {
            let candidate = Lcp {
                ts: event.ts(),
                candidate_index: index,
                node_id: event.data().get("nodeId").and_then(Value::as_i64),
                node_name: event.data_str("nodeName").map(str::to_string),
                is_image: event.data_str("type") != Some("text"),
                image_url: None,
            };
            chosen = Some((candidate, event));
        }
    }
    let (mut lcp, event) = chosen?;
    if lcp.is_image {
        lcp.image_url = image_url(events, &lcp, event);
    }
    Some(lcp)
}

/// The URL of an image LCP: from the candidate itself when it carries one, else from the
/// latest `LargestImagePaint::Candidate` (or, failing that, `PaintImage`) for the same frame and
/// node up to the LCP. (Image and text candidates are numbered separately, so the candidate
/// index does not link them.)
fn image_url(events: &[Value], lcp: &Lcp, candidate: Event) -> Option<String> {
    if let Some(url) = candidate.data_str("url") {
        return Some(url.to_string());
    }
    let latest = |name: &'static str, node_key: &'static str, url_key: &'static str| {
        events
            .iter()
            .map(Event)
            .filter(|event| event.name() == name && event.frame() == candidate.frame())
            .filter(|event| event.ts() <= lcp.ts)
            .filter(|event| {
                let node = event.data().get(node_key).and_then(Value::as_i64);
                node.is_none() || lcp.node_id.is_none() || node == lcp.node_id
            })
            .filter_map(|event| Some((event.ts(), event.data_str(url_key)?)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, url)| url.to_string())
    };
    latest("LargestImagePaint::Candidate", "DOMNodeId", "imageUrl")
        .or_else(|| latest("PaintImage", "nodeId", "url"))
}

/// One layout shift without recent input.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Shift {
    pub ts: f64,
    pub score: f64,
    /// `debug_name`s of the nodes that moved.
    pub impacted: Vec<String>,
}

/// A session window of layout shifts.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cluster {
    pub start: f64,
    pub end: f64,
    pub score: f64,
    pub shifts: Vec<Shift>,
    /// Index into `Meta::navigations` of the navigation the window belongs to.
    pub navigation: Option<usize>,
}

impl Cluster {
    /// The shift that contributed most: the event DevTools points at for CLS.
    pub fn worst_shift(&self) -> Option<&Shift> {
        self.shifts
            .iter()
            .max_by(|a, b| a.score.total_cmp(&b.score))
    }
}

/// Groups the page's layout shifts into session windows (DevTools' layout-shift clusters): a
/// window closes after a 1 s gap, after 5 s, or at a main-frame navigation.
pub(super) fn clusters(events: &[Value], meta: &Meta) -> Vec<Cluster> {
    let mut shifts: Vec<Event> = events
        .iter()
        .map(Event)
        .filter(|event| event.name() == "LayoutShift")
        .filter(|event| event.data_bool("had_recent_input") != Some(true))
        .filter(|event| {
            meta.in_main_frame(*event)
                || meta.main_threads.iter().any(|(pid, _)| *pid == event.pid())
        })
        .collect();
    shifts.sort_by(|a, b| a.ts().total_cmp(&b.ts()));
    let navigation_before = |ts: f64| {
        meta.navigations
            .iter()
            .rposition(|navigation| navigation.ts < ts)
    };
    let mut clusters: Vec<Cluster> = Vec::new();
    let (mut first, mut last, mut last_navigation) = (0.0, 0.0, None);
    for event in shifts {
        let ts = event.ts();
        let navigation = navigation_before(ts);
        let too_long = ts - first > MAX_CLUSTER_US;
        let gap = ts - last > MAX_SHIFT_GAP_US;
        let navigated = navigation.is_some() && navigation != last_navigation;
        if clusters.is_empty() || too_long || gap || navigated {
            if let Some(previous) = clusters.last_mut() {
                let mut end = f64::INFINITY;
                if too_long {
                    end = end.min(first + MAX_CLUSTER_US);
                }
                if gap {
                    end = end.min(last + MAX_SHIFT_GAP_US);
                }
                if let (true, Some(index)) = (navigated, navigation) {
                    end = end.min(meta.navigations[index].ts);
                }
                previous.end = end;
            }
            clusters.push(Cluster {
                start: ts,
                end: ts,
                score: 0.0,
                shifts: Vec::new(),
                navigation,
            });
            first = ts;
        }
        let Some(cluster) = clusters.last_mut() else {
            continue;
        };
        let score = event.data_f64("weighted_score_delta").unwrap_or(0.0);
        cluster.score += score;
        cluster.end = ts;
        cluster.shifts.push(Shift {
            ts,
            score,
            impacted: event
                .data()
                .get("impacted_nodes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|node| node.get("debug_name")?.as_str().map(str::to_string))
                .collect(),
        });
        last = ts;
        last_navigation = navigation;
    }
    if let Some(cluster) = clusters.last_mut() {
        let next_navigation = meta
            .navigations
            .iter()
            .map(|navigation| navigation.ts)
            .find(|ts| *ts > cluster.end)
            .unwrap_or(f64::INFINITY);
        cluster.end = (cluster.start + MAX_CLUSTER_US)
            .min(cluster.end + MAX_SHIFT_GAP_US)
            .min(meta.max)
            .min(next_navigation)
            .max(cluster.end);
    }
    clusters
}

/// A main-thread task longer than 50 ms.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LongTask {
    pub ts: f64,
    pub dur: f64,
    /// What the task spent its time on, outermost first, e.g. `ParseHTML > EvaluateScript`.
    pub activity: Vec<String>,
    /// The script or document URL of the innermost activity, when the trace names one.
    pub url: Option<String>,
}

/// Long tasks (`RunTask` over 50 ms on the main frame's renderer main thread) starting within
/// `[from, to)`.
pub(super) fn long_tasks(events: &[Value], meta: &Meta, from: f64, to: f64) -> Vec<LongTask> {
    let mut tasks: Vec<LongTask> = events
        .iter()
        .map(Event)
        .filter(|event| matches!(event.name(), "RunTask" | "ThreadControllerImpl::RunTask"))
        .filter(|event| event.phase() == "X" && event.dur() > LONG_TASK_US)
        .filter(|event| event.ts() >= from && event.ts() < to && meta.on_main_thread(*event))
        .map(|task| describe(events, task))
        .collect();
    tasks.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    tasks
}

/// Names the DevTools timeline events that each cover at least half of `task`.
fn describe(events: &[Value], task: Event) -> LongTask {
    let mut inside: Vec<Event> = events
        .iter()
        .map(Event)
        .filter(|event| {
            event.phase() == "X" && event.pid() == task.pid() && event.tid() == task.tid()
        })
        .filter(|event| {
            event
                .0
                .get("cat")
                .and_then(Value::as_str)
                .is_some_and(|cat| cat.contains("devtools.timeline"))
        })
        .filter(|event| {
            event.name() != task.name() && event.ts() >= task.ts() && event.end() <= task.end()
        })
        .filter(|event| event.dur() * 2.0 >= task.dur())
        .collect();
    inside.sort_by(|a, b| a.ts().total_cmp(&b.ts()).then(b.dur().total_cmp(&a.dur())));
    let url = inside.iter().rev().find_map(|event| {
        event
            .data_str("url")
            .or_else(|| event.args().get("beginData")?.get("url")?.as_str())
            .map(str::to_string)
    });
    LongTask {
        ts: task.ts(),
        dur: task.dur(),
        activity: inside
            .iter()
            .map(|event| event.name().to_string())
            .collect(),
        url,
    }
}

/// Total blocking time, as Lighthouse computes it: for each long task, the part beyond its
/// first 50 ms that falls inside `[from, to]` (from FCP to the end of the window).
pub(super) fn total_blocking_time(tasks: &[LongTask], from: f64, to: f64) -> f64 {
    tasks
        .iter()
        .map(|task| (task.ts + task.dur).min(to) - (task.ts + LONG_TASK_US).max(from))
        .filter(|blocking| *blocking > 0.0)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::super::fixture;
    use super::*;
    use serde_json::json;

    fn task(ts: u64) -> Value {
        json!({"name": "RunTask", "ph": "X", "pid": 2, "tid": 7, "ts": ts, "dur": 10})
    }

    fn setup() -> (Vec<Value>, Meta) {
        let events = fixture::page();
        let meta = Meta::read(&events);
        (events, meta)
    }

    #[test]
    fn fcp_and_lcp_follow_the_navigation_and_main_frame() {
        let (events, meta) = setup();
        let navigation = &meta.navigations[0];
        assert_eq!(fcp(&events, &meta, navigation), Some(100_000.0));
        let lcp = lcp(&events, &meta, navigation).expect("an LCP");
        // Index 3 belongs to another navigation and index 4 to another frame.
        assert_eq!(lcp.candidate_index, 2);
        assert_eq!(lcp.ts, 250_000.0);
        assert_eq!(lcp.node_id, Some(3));
        assert_eq!(lcp.node_name.as_deref(), Some("IMG"));
        assert_eq!(lcp.image_url.as_deref(), Some("http://a/hero.png"));
    }

    #[test]
    fn an_invalidated_candidate_is_dropped() {
        let (mut events, meta) = setup();
        events.push(
            json!({"name": "largestContentfulPaint::Invalidate", "ph": "R", "pid": 2, "tid": 7,
                           "ts": 255_000, "args": {"frame": "F"}}),
        );
        assert_eq!(lcp(&events, &meta, &meta.navigations[0]), None);
    }

    #[test]
    fn layout_shifts_form_session_windows() {
        let (events, meta) = setup();
        let clusters = clusters(&events, &meta);
        assert_eq!(clusters.len(), 2);
        // A gap over 1 s closes the first window 1 s after its last shift.
        assert_eq!(
            (clusters[0].start, clusters[0].end),
            (300_000.0, 1_800_000.0)
        );
        assert!((clusters[0].score - 0.15).abs() < 1e-9);
        assert_eq!(clusters[0].shifts.len(), 2);
        // Shifts after input, and another renderer's, do not count.
        assert_eq!(
            (clusters[1].start, clusters[1].end),
            (2_500_000.0, 3_500_000.0)
        );
        assert!((clusters[1].score - 0.2).abs() < 1e-9);
        assert_eq!(
            clusters[1].worst_shift().map(|shift| shift.ts),
            Some(2_500_000.0)
        );
        assert_eq!(
            clusters[1].shifts[0].impacted,
            vec!["DIV id='banner'".to_string()]
        );
    }

    #[test]
    fn a_session_window_lasts_at_most_five_seconds_and_ends_at_a_navigation() {
        let (mut events, _) = setup();
        events.retain(|event| Event(event).name() != "LayoutShift");
        let shift = |ts: u64| {
            json!({"name": "LayoutShift", "ph": "I", "pid": 2, "tid": 7, "ts": ts,
                   "args": {"frame": "F", "data": {"weighted_score_delta": 0.01}}})
        };
        // Every 0.9 s from 0.3 s to 5.7 s, then one after a navigation at 6 s.
        events.extend((0..7u64).map(|step| shift(300_000 + step * 900_000)));
        events.push(shift(6_200_000));
        events.push(json!({"name": "navigationStart", "ph": "R", "pid": 2, "tid": 7, "ts": 6_000_000,
            "args": {"frame": "F", "data": {"documentLoaderURL": "http://a/next", "isLoadingMainFrame": true, "navigationId": "N2"}}}));
        events.push(task(8_000_000));
        let meta = Meta::read(&events);
        let clusters = clusters(&events, &meta);
        let summary: Vec<(usize, f64, f64, Option<usize>)> = clusters
            .iter()
            .map(|cluster| {
                (
                    cluster.shifts.len(),
                    cluster.start,
                    cluster.end,
                    cluster.navigation,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                // Closed 5 s after its first shift.
                (6, 300_000.0, 5_300_000.0, Some(0)),
                // Closed by the navigation.
                (1, 5_700_000.0, 6_000_000.0, Some(0)),
                // Closed 1 s after its shift.
                (1, 6_200_000.0, 7_200_000.0, Some(1)),
            ]
        );
    }

    #[test]
    fn long_tasks_run_on_the_page_main_thread_and_block_after_fcp() {
        let (events, meta) = setup();
        let tasks = long_tasks(&events, &meta, 10_000.0, meta.max);
        let spans: Vec<(f64, f64)> = tasks.iter().map(|task| (task.ts, task.dur)).collect();
        assert_eq!(spans, vec![(60_000.0, 80_000.0), (400_000.0, 120_000.0)]);
        assert_eq!(tasks[1].activity, vec!["EvaluateScript".to_string()]);
        assert_eq!(tasks[1].url.as_deref(), Some("http://a/app.js"));
        // 30 ms of the first task fall after FCP and past its first 50 ms, 70 ms of the second.
        assert_eq!(total_blocking_time(&tasks, 100_000.0, meta.max), 100_000.0);
        assert_eq!(total_blocking_time(&tasks, 0.0, meta.max), 100_000.0);
        assert_eq!(total_blocking_time(&tasks, 500_000.0, meta.max), 20_000.0);
    }
}
