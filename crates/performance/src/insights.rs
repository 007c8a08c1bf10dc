//! Insight sets: the trace split by main-frame navigation (`NAVIGATION_0`, ...; `NO_NAVIGATION`
//! when the trace holds none), each with the metrics and insights we compute for it.

use super::events::{Meta, Navigation};
use super::metrics::{self, Cluster, Lcp, LongTask};
use super::network::{self, Request};
use super::{details, report};
use serde_json::Value;
#[cfg(test)]
use serde_json::json;

/// The DevTools insights we compute, plus our long-task list, in the order the reference lists
/// insights.
pub(super) const COMPUTED: [&str; 4] = [
    "LCPBreakdown",
    "CLSCulprits",
    "DocumentLatency",
    "LongTasks",
];

/// DevTools insights that need the DevTools frontend's trace engine, which we do not have.
pub(super) const NOT_COMPUTED: [&str; 16] = [
    "INPBreakdown",
    "LCPDiscovery",
    "RenderBlocking",
    "NetworkDependencyTree",
    "ImageDelivery",
    "FontDisplay",
    "Viewport",
    "DOMSize",
    "ThirdParties",
    "DuplicatedJavaScript",
    "SlowCSSSelector",
    "ForcedReflow",
    "Cache",
    "ModernHTTP",
    "LegacyJavaScript",
    "CharacterSet",
];

/// A DevTools server-response threshold: slower than this fails `DocumentLatency`.
const TOO_SLOW_MS: f64 = 600.0;
/// What DevTools asks servers to aim for.
const TARGET_MS: f64 = 100.0;

/// One LCP subpart: its labels and its window in trace microseconds.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Subpart {
    /// The summary's label (`TTFB`, `Load delay`, ...).
    pub short: &'static str,
    /// The insight's label (`Time to first byte`, ...).
    pub label: &'static str,
    pub min: f64,
    pub max: f64,
}

/// The document request checks of DevTools' `DocumentLatency` insight.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct DocumentChecks {
    pub server_response_ms: f64,
    pub redirect_ms: f64,
    pub wasted_bytes: f64,
}

impl DocumentChecks {
    pub fn no_redirects(&self) -> bool {
        self.redirect_ms == 0.0
    }
    pub fn fast(&self) -> bool {
        self.server_response_ms <= TOO_SLOW_MS
    }
    pub fn compressed(&self) -> bool {
        self.wasted_bytes == 0.0
    }
    /// Estimated FCP and LCP savings in milliseconds.
    pub fn savings_ms(&self) -> f64 {
        let slow = if self.fast() {
            0.0
        } else {
            (self.server_response_ms - TARGET_MS).max(0.0)
        };
        slow + self.redirect_ms
    }
    pub fn failed(&self) -> bool {
        !(self.no_redirects() && self.fast() && self.compressed())
    }
}

/// One part of the trace and what we computed for it.
#[derive(Debug, Clone)]
pub(super) struct InsightSet {
    pub id: String,
    pub url: String,
    pub min: f64,
    pub max: f64,
    /// The trace's start, which layout-shift times are relative to.
    pub trace_min: f64,
    pub navigation: Option<Navigation>,
    pub document: Option<Request>,
    pub checks: Option<DocumentChecks>,
    pub fcp: Option<f64>,
    pub lcp: Option<Lcp>,
    pub lcp_request: Option<Request>,
    pub subparts: Vec<Subpart>,
    pub clusters: Vec<Cluster>,
    pub long_tasks: Vec<LongTask>,
    /// Total blocking time from FCP (or the set's start) to the set's end, in microseconds.
    pub tbt: f64,
    /// Every request, for initiator chains.
    pub requests: Vec<Request>,
}

impl InsightSet {
    /// The session window with the highest score.
    pub fn worst_cluster(&self) -> Option<&Cluster> {
        self.clusters
            .iter()
            .max_by(|a, b| a.score.total_cmp(&b.score))
    }
    /// The insights that have a model in this set (answerable by `analyze`).
    pub fn available(&self) -> Vec<&'static str> {
        COMPUTED
            .into_iter()
            .filter(|name| match *name {
                "LCPBreakdown" => self.navigation.is_some(),
                "DocumentLatency" => self.checks.is_some(),
                _ => true,
            })
            .collect()
    }
    /// The insights worth listing in the summary: DevTools leaves out those that passed.
    pub fn listed(&self) -> Vec<&'static str> {
        self.available()
            .into_iter()
            .filter(|name| match *name {
                "LCPBreakdown" => self.lcp.is_some(),
                "CLSCulprits" => !self.clusters.is_empty(),
                "DocumentLatency" => self.checks.as_ref().is_some_and(DocumentChecks::failed),
                _ => !self.long_tasks.is_empty(),
            })
            .collect()
    }
}

/// A summarised trace: the summary text and the insight sets `analyze` answers from.
#[derive(Debug, Clone)]
pub struct TraceSummary {
    /// The summary, starting `## Summary of Performance trace findings:`.
    pub text: String,
    sets: Vec<InsightSet>,
}

impl TraceSummary {
    pub(super) fn sets(&self) -> &[InsightSet] {
        &self.sets
    }

    /// Details of one computed insight, in the reference's `## Insight Title: ...` shape. The
    /// error is a message for the user (the reference prints such messages as normal text).
    pub fn analyze(&self, insight_set_id: &str, insight_name: &str) -> Result<String, String> {
        let Some(set) = self.sets.iter().find(|set| set.id == insight_set_id) else {
            return Err("No Performance Insights for the given insight set id. Only use ids given in the \"Available insight sets\" list.".to_string());
        };
        let available = set.available();
        if available.contains(&insight_name) {
            return Ok(details::insight(set, insight_name));
        }
        let listing = format!(
            "Insights available for {insight_set_id}: {}.",
            available.join(", ")
        );
        if NOT_COMPUTED.contains(&insight_name) {
            return Err(format!(
                "The {insight_name} insight is not computed by this server: the reference computes it with the DevTools frontend's trace engine, which is not available here. {listing}"
            ));
        }
        Err(format!(
            "No Insight with the name {insight_name} found. Double check the name you provided is accurate and try again. {listing}"
        ))
    }

    /// The reference's structured content for a summary: `traceSummary` (the text) and
    /// `traceInsights`, one `{insightName, insightKey}` per insight of every set.
    #[cfg(test)]
    pub fn structured(&self) -> Value {
        let insights: Vec<Value> = self
            .sets
            .iter()
            .flat_map(InsightSet::available)
            .map(|name| json!({"insightName": name, "insightKey": name}))
            .collect();
        json!({"traceSummary": self.text, "traceInsights": insights})
    }
}

/// Splits the trace into insight sets and renders the summary. `throttling` is the CPU
/// slowdown rate and network condition name in effect while recording, if any.
pub fn summarize(
    events: &[Value],
    url: &str,
    throttling: (Option<f64>, Option<&str>),
) -> TraceSummary {
    let meta = Meta::read(events);
    let requests = network::requests(events);
    let clusters = metrics::clusters(events, &meta);
    let main_url = meta
        .main_frame_url
        .clone()
        .filter(|main| !main.starts_with("about:"));
    let main_url = main_url.unwrap_or_else(|| url.to_string());
    let mut sets = Vec::new();
    if meta.navigations.is_empty() {
        let mut set = empty_set(
            "NO_NAVIGATION".to_string(),
            main_url.clone(),
            &meta,
            &requests,
        );
        set.clusters = clusters.clone();
        set.long_tasks = metrics::long_tasks(events, &meta, meta.min, meta.max);
        set.tbt = metrics::total_blocking_time(&set.long_tasks, meta.min, meta.max);
        sets.push(set);
    }
    for (index, navigation) in meta.navigations.iter().enumerate() {
        let end = meta
            .navigations
            .get(index + 1)
            .map_or(meta.max, |next| next.ts);
        let mut set = empty_set(
            format!("NAVIGATION_{index}"),
            navigation.url.clone(),
            &meta,
            &requests,
        );
        (set.min, set.max) = (navigation.ts, end);
        set.navigation = Some(navigation.clone());
        set.document = requests
            .iter()
            .find(|request| request.id == navigation.id)
            .cloned();
        if let Some(document) = &set.document {
            set.url = document.url.clone();
            set.checks = Some(DocumentChecks {
                server_response_ms: document.server_response_ms.unwrap_or(0.0).round(),
                redirect_ms: (document.redirects.iter().map(|hop| hop.2).sum::<f64>() / 1000.0)
                    .round(),
                wasted_bytes: network::compression_savings(document),
            });
        }
        set.fcp = metrics::fcp(events, &meta, navigation);
        set.lcp = metrics::lcp(events, &meta, navigation);
        set.lcp_request = set.lcp.as_ref().and_then(|lcp| {
            let image = lcp.image_url.as_deref()?;
            requests
                .iter()
                .filter(|request| request.url == image && request.start >= navigation.ts)
                .find(|request| request.start <= lcp.ts)
                .cloned()
        });
        set.subparts = subparts(&set);
        set.clusters = clusters
            .iter()
            .filter(|cluster| cluster.navigation == Some(index))
            .cloned()
            .collect();
        set.long_tasks = metrics::long_tasks(events, &meta, set.min, set.max);
        set.tbt =
            metrics::total_blocking_time(&set.long_tasks, set.fcp.unwrap_or(set.min), set.max);
        sets.push(set);
    }
    let text = report::summary(&main_url, &meta, &sets, throttling);
    TraceSummary { text, sets }
}

fn empty_set(id: String, url: String, meta: &Meta, requests: &[Request]) -> InsightSet {
    InsightSet {
        id,
        url,
        min: meta.min,
        max: meta.max,
        trace_min: meta.min,
        navigation: None,
        document: None,
        checks: None,
        fcp: None,
        lcp: None,
        lcp_request: None,
        subparts: Vec::new(),
        clusters: Vec::new(),
        long_tasks: Vec::new(),
        tbt: 0.0,
        requests: requests.to_vec(),
    }
}

/// The LCP breakdown (DevTools' `determineSubparts`): TTFB and render delay for a text LCP;
/// TTFB, load delay, load duration and render delay for an image fetched over the network.
fn subparts(set: &InsightSet) -> Vec<Subpart> {
    let (Some(navigation), Some(lcp), Some(first_byte)) = (
        set.navigation.as_ref(),
        set.lcp.as_ref(),
        set.document
            .as_ref()
            .and_then(|document| document.first_byte),
    ) else {
        return Vec::new();
    };
    let part = |short, label, min, max| Subpart {
        short,
        label,
        min,
        max,
    };
    let ttfb = part("TTFB", "Time to first byte", navigation.ts, first_byte);
    match &set.lcp_request {
        None => vec![
            ttfb,
            part("Render delay", "Element render delay", first_byte, lcp.ts),
        ],
        Some(request) => vec![
            ttfb,
            part(
                "Load delay",
                "Resource load delay",
                first_byte,
                request.start,
            ),
            part(
                "Load duration",
                "Resource load duration",
                request.start,
                request.finish,
            ),
            part(
                "Render delay",
                "Element render delay",
                request.finish,
                lcp.ts,
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::super::{events::Event, fixture};
    use super::*;

    const NBSP: &str = "\u{a0}";

    fn page() -> TraceSummary {
        summarize(&fixture::page(), "http://fallback/", (None, None))
    }

    #[test]
    fn the_summary_has_the_reference_shape() {
        let text = page().text;
        let expected_start = "## Summary of Performance trace findings:\nURL: http://a/\nTrace bounds: {min: 1000µs, max: 4000000µs}\nCPU throttling: none\nNetwork throttling: none\n\n# Available insight sets\n\nThe following is a list of insight sets.";
        assert!(text.starts_with(expected_start), "{text}");
        let expected_set = format!(
            "\n\n## insight set id: NAVIGATION_0\n\nURL: http://a/\nBounds: {{min: 10000µs, max: 4000000µs}}\nMetrics (lab / observed):\n  - LCP: 240 ms, event: (ts: 250000), nodeId: 3\n  - LCP breakdown:\n    - TTFB: 31{NBSP}ms, bounds: {{min: 10000µs, max: 40500µs}}\n    - Load delay: 20{NBSP}ms, bounds: {{min: 40500µs, max: 60000µs}}\n    - Load duration: 140{NBSP}ms, bounds: {{min: 60000µs, max: 200000µs}}\n    - Render delay: 50{NBSP}ms, bounds: {{min: 200000µs, max: 250000µs}}\n  - CLS: 0.20, event: (ts: 2500000)\n  - FCP: 90 ms, event: (ts: 100000)\n  - TBT: 100 ms (from FCP to the end of this insight set; 2 long tasks over 50 ms)\n"
        );
        assert!(text.contains(&expected_set), "{text}");
        let listed = format!(
            "  - insight name: DocumentLatency\n    description: Your first network request is the most important. [Reduce its latency](https://developer.chrome.com/docs/performance/insights/document-latency) by avoiding redirects, ensuring a fast server response, and enabling text compression.\n    relevant trace bounds: {{min: 10500µs, max: 55000µs}}\n    estimated metric savings: FCP 0 ms, LCP 0 ms\n    estimated wasted bytes: 6.7{NBSP}kB\n    example question: How do I decrease the initial loading time of my page?\n"
        );
        assert!(text.contains(&listed), "{text}");
        assert!(
            text.contains(
                "\n# Insights not computed\n\nThese findings are computed by this server"
            )
        );
        assert!(text.contains("not computed: INPBreakdown, LCPDiscovery, RenderBlocking,"));
        for name in [
            "LCPBreakdown",
            "CLSCulprits",
            "DocumentLatency",
            "LongTasks",
        ] {
            assert!(
                text.contains(&format!("\n  - insight name: {name}\n")),
                "{name}"
            );
        }
        let structured = page().structured();
        assert_eq!(structured["traceSummary"], Value::String(text.clone()));
        assert_eq!(
            structured["traceInsights"][2],
            json!({"insightName": "DocumentLatency", "insightKey": "DocumentLatency"})
        );
    }

    #[test]
    fn analyze_details_the_computed_insights() {
        let summary = page();
        let lcp = summary
            .analyze("NAVIGATION_0", "LCPBreakdown")
            .expect("LCPBreakdown");
        assert!(lcp.starts_with("## Insight Title: LCP breakdown\n\n## Insight Summary:\nThis insight is used to analyze"));
        assert!(lcp.contains(&format!("was 240{NBSP}ms.\nThe LCP element (IMG, nodeId: 3) is an image fetched from http://a/hero.png (ts: 60000).\n## LCP resource network request: http://a/hero.png\nTimings:\n- Queued at: 50{NBSP}ms\n")));
        assert!(lcp.contains(&format!("\n\nWe can break this time down into the 4 phases that combine to make the LCP time:\n\n- Time to first byte: 31{NBSP}ms (12.7% of total LCP time)\n")));
        assert!(lcp.ends_with("## Estimated savings: none\n\n## External resources:\n- https://developer.chrome.com/docs/performance/insights/lcp-breakdown\n- https://web.dev/articles/lcp\n- https://web.dev/articles/optimize-lcp"));
        let document = summary
            .analyze("NAVIGATION_0", "DocumentLatency")
            .expect("DocumentLatency");
        assert!(document.contains("Response headers\n- content-type: text/html\n- x-secret: <redacted>\n\nThe result of the checks for this insight are:\n- The request was not redirected: PASSED\n- Server responded quickly: PASSED\n- Compression was applied: FAILED\n\n## Estimated savings: FCP 0 ms, LCP 0 ms\n"));
        let cls = summary
            .analyze("NAVIGATION_0", "CLSCulprits")
            .expect("CLSCulprits");
        assert!(cls.contains(&format!("started at 2,499{NBSP}ms and ended at 3,499{NBSP}ms, with a duration of 1,000{NBSP}ms.\nThe score for this cluster is 0.2000.\n\nLayout shifts in this cluster:\n### Layout shift 1:\n- Impacted elements:\n  - DIV id='banner'\n\n- Start time: 2,499{NBSP}ms\n- Score: 0.2000\n")));
        let tasks = summary
            .analyze("NAVIGATION_0", "LongTasks")
            .expect("LongTasks");
        assert!(tasks.contains(&format!("### Long task 2:\n- Start time: 390{NBSP}ms\n- Duration: 120{NBSP}ms\n- Time over 50 ms: 70{NBSP}ms\n- Activity: EvaluateScript (url: http://a/app.js)")));
    }

    #[test]
    fn analyze_explains_what_it_cannot_answer() {
        let summary = page();
        assert_eq!(
            summary.analyze("NAVIGATION_0", "RenderBlocking"),
            Err("The RenderBlocking insight is not computed by this server: the reference computes it with the DevTools frontend's trace engine, which is not available here. Insights available for NAVIGATION_0: LCPBreakdown, CLSCulprits, DocumentLatency, LongTasks.".to_string())
        );
        assert_eq!(
            summary.analyze("NAVIGATION_0", "Nope"),
            Err("No Insight with the name Nope found. Double check the name you provided is accurate and try again. Insights available for NAVIGATION_0: LCPBreakdown, CLSCulprits, DocumentLatency, LongTasks.".to_string())
        );
        assert_eq!(
            summary.analyze("NAVIGATION_7", "LCPBreakdown"),
            Err("No Performance Insights for the given insight set id. Only use ids given in the \"Available insight sets\" list.".to_string())
        );
    }

    #[test]
    fn a_trace_without_navigation_is_one_set() {
        let events: Vec<Value> = fixture::page()
            .into_iter()
            .filter(|event| Event(event).name() != "navigationStart")
            .collect();
        let summary = summarize(&events, "http://fallback/", (Some(4.0), Some("Slow 3G")));
        assert!(!summary.text.contains("NAVIGATION_0"));
        assert!(
            summary
                .text
                .contains("CPU throttling: 4x\nNetwork throttling: Slow 3G\n")
        );
        assert!(summary.text.contains("## insight set id: NO_NAVIGATION\n\nURL: http://a/\nBounds: {min: 1000µs, max: 4000000µs}\nMetrics (lab / observed):\n  - CLS: 0.20, event: (ts: 2500000)\n  - TBT: 100 ms (from the start of this insight set"));
        assert_eq!(
            summary.analyze("NO_NAVIGATION", "LCPBreakdown"),
            Err("No Insight with the name LCPBreakdown found. Double check the name you provided is accurate and try again. Insights available for NO_NAVIGATION: CLSCulprits, LongTasks.".to_string())
        );
    }
}
