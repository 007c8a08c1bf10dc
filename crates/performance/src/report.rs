//! The trace summary, in the shape of DevTools' `PerformanceTraceFormatter.formatTraceSummary`
//! with the reference's fixed strings wherever we print the same thing, and the fixed texts of
//! each insight we compute. Events are identified by timestamp only: DevTools' event keys come
//! from its trace engine.

use super::events::Meta;
use super::format::{bounds, bytes, fixed, micros, plain, round};
use super::insights::{InsightSet, NOT_COMPUTED};

/// The fixed texts of one insight.
pub(super) struct Info {
    pub title: &'static str,
    /// The one-line description listed in the summary.
    pub description: &'static str,
    /// The longer explanation under `## Insight Summary:`.
    pub summary: &'static str,
    pub questions: &'static [&'static str],
    pub links: &'static [&'static str],
}

/// The texts for `name`: DevTools' strings for its insights (the model's title and description,
/// `PerformanceInsightFormatter`'s summary, questions and links), our own for `LongTasks`.
pub(super) fn info(name: &str) -> Info {
    match name {
        "LCPBreakdown" => Info {
            title: "LCP breakdown",
            description: "Each [subpart has specific improvement strategies](https://developer.chrome.com/docs/performance/insights/lcp-breakdown). Ideally, most of the LCP time should be spent on loading the resources, not within delays.",
            summary: "This insight is used to analyze the time spent that contributed to the final LCP time and identify which of the 4 phases (or 2 if there was no LCP resource) are contributing most to the delay in rendering the LCP element.",
            questions: &[
                "Help me optimize my LCP score",
                "Which LCP subpart was most problematic?",
                "What can I do to reduce the LCP time for this page load?",
            ],
            links: &[
                "https://developer.chrome.com/docs/performance/insights/lcp-breakdown",
                "https://web.dev/articles/lcp",
                "https://web.dev/articles/optimize-lcp",
            ],
        },
        "CLSCulprits" => Info {
            title: "Layout shift culprits",
            description: "Layout shifts occur when elements move absent any user interaction. [Investigate the causes of layout shifts](https://developer.chrome.com/docs/performance/insights/cls-culprit), such as elements being added, removed, or their fonts changing as the page loads.",
            summary: "Cumulative Layout Shifts (CLS) is a measure of the largest burst of layout shifts for every unexpected layout shift that occurs during the lifecycle of a page. This is a Core Web Vital and the thresholds for categorizing a score are:\n- Good: 0.1 or less\n- Needs improvement: more than 0.1 and less than or equal to 0.25\n- Bad: over 0.25",
            questions: &[
                "Help me optimize my CLS score",
                "How can I prevent layout shifts on this page?",
            ],
            links: &[
                "https://developer.chrome.com/docs/performance/insights/cls-culprit",
                "https://web.dev/articles/cls",
                "https://web.dev/articles/optimize-cls",
            ],
        },
        "DocumentLatency" => Info {
            title: "Document request latency",
            description: "Your first network request is the most important. [Reduce its latency](https://developer.chrome.com/docs/performance/insights/document-latency) by avoiding redirects, ensuring a fast server response, and enabling text compression.",
            summary: "This insight checks that the first request is responded to promptly. We use the following criteria to check this:\n1. Was the initial request redirected?\n2. Did the server respond in 600ms or less? We want developers to aim for as close to 100ms as possible, but our threshold for this insight is 600ms.\n3. Was there compression applied to the response to minimize the transfer size?",
            questions: &[
                "How do I decrease the initial loading time of my page?",
                "Did anything slow down the request for this document?",
            ],
            links: &[
                "https://developer.chrome.com/docs/performance/insights/document-latency",
                "https://web.dev/articles/optimize-ttfb",
            ],
        },
        _ => Info {
            title: "Long main-thread tasks",
            description: "Tasks that run longer than 50 ms on the main thread block user input and rendering. This list is computed by this server; it is not a DevTools insight.",
            summary: "This insight lists the main-thread tasks longer than 50 ms in this part of the trace and their total blocking time (TBT): the time each task ran beyond its first 50 ms, counted from the first contentful paint to the end of this part of the trace (Lighthouse stops counting at Time to Interactive). It is computed by this server from the trace's RunTask events; it is not one of the DevTools insights.",
            questions: &[
                "Which long tasks blocked the main thread?",
                "How can I break up these long tasks?",
            ],
            links: &[
                "https://web.dev/articles/optimize-long-tasks",
                "https://web.dev/articles/tbt",
            ],
        },
    }
}

/// The whole summary, from `## Summary of Performance trace findings:` on.
pub(super) fn summary(
    url: &str,
    meta: &Meta,
    sets: &[InsightSet],
    throttling: (Option<f64>, Option<&str>),
) -> String {
    let mut parts = vec![
        "## Summary of Performance trace findings:".to_string(),
        format!("URL: {url}"),
        format!("Trace bounds: {}", bounds(meta.min, meta.max)),
        format!("CPU throttling: {}", throttling.0.map_or("none".to_string(), |rate| format!("{}x", plain(rate)))),
        format!("Network throttling: {}", throttling.1.unwrap_or("none")),
        "\n# Available insight sets\n".to_string(),
        "The following is a list of insight sets. An insight set covers a specific part of the trace, split by navigations. The insights within each insight set are specific to that part of the trace. Be sure to consider the insight set id and bounds when calling functions. If no specific insight set or navigation is mentioned, assume the user is referring to the first one.".to_string(),
    ];
    for set in sets {
        parts.push(format!("\n## insight set id: {}\n", set.id));
        parts.push(format!("URL: {}", set.url));
        parts.push(format!("Bounds: {}", bounds(set.min, set.max)));
        parts.push("Metrics (lab / observed):".to_string());
        parts.extend(metric_lines(set));
        parts.push(
            "Metrics (field / real users): n/a – CrUX field data is not fetched by this server"
                .to_string(),
        );
        parts.push("Available insights:".to_string());
        for name in set.listed() {
            parts.push(format!("  - {}", listing(set, name).join("\n    ")));
        }
    }
    parts.push("\n# Insights not computed\n".to_string());
    parts.push(format!(
        "These findings are computed by this server from the raw trace events. The reference gets its insights from the DevTools frontend's trace engine, which is not available here, so these insights are not computed: {}. INP, CrUX field data, event keys (events are identified by their timestamp), call trees and network request listings are not produced either. LongTasks is this server's own insight, not a DevTools one.",
        NOT_COMPUTED.join(", ")
    ));
    parts.join("\n")
}

/// `Metrics (lab / observed):` lines: the reference's LCP, breakdown and CLS lines, then the FCP,
/// TTFB (when no breakdown shows it) and TBT we add.
fn metric_lines(set: &InsightSet) -> Vec<String> {
    let mut lines = Vec::new();
    if let (Some(lcp), Some(navigation)) = (&set.lcp, &set.navigation) {
        let node = lcp
            .node_id
            .map(|id| format!(", nodeId: {id}"))
            .unwrap_or_default();
        let value = round((lcp.ts - navigation.ts) / 1000.0);
        lines.push(format!(
            "  - LCP: {value} ms, event: (ts: {}){node}",
            plain(lcp.ts)
        ));
        if !set.subparts.is_empty() {
            lines.push("  - LCP breakdown:".to_string());
            for part in &set.subparts {
                let range = micros(part.max - part.min);
                lines.push(format!(
                    "    - {}: {range}, bounds: {}",
                    part.short,
                    bounds(part.min, part.max)
                ));
            }
        }
    }
    let worst = set.worst_cluster();
    let event = worst
        .and_then(|cluster| cluster.worst_shift())
        .map(|shift| format!(", event: (ts: {})", plain(shift.ts)));
    let score = worst.map_or(0.0, |cluster| cluster.score);
    lines.push(format!(
        "  - CLS: {}{}",
        fixed(score, 2),
        event.unwrap_or_default()
    ));
    if let (Some(fcp), Some(navigation)) = (set.fcp, &set.navigation) {
        lines.push(format!(
            "  - FCP: {} ms, event: (ts: {})",
            round((fcp - navigation.ts) / 1000.0),
            plain(fcp)
        ));
    }
    if set.subparts.is_empty()
        && let (Some(first_byte), Some(navigation)) = (
            set.document
                .as_ref()
                .and_then(|document| document.first_byte),
            &set.navigation,
        )
    {
        lines.push(format!(
            "  - TTFB: {}, bounds: {}",
            micros(first_byte - navigation.ts),
            bounds(navigation.ts, first_byte)
        ));
    }
    let from = if set.fcp.is_some() {
        "FCP"
    } else {
        "the start of this insight set"
    };
    lines.push(format!(
        "  - TBT: {} ms (from {from} to the end of this insight set; {} long task{} over 50 ms)",
        round(set.tbt / 1000.0),
        set.long_tasks.len(),
        if set.long_tasks.len() == 1 { "" } else { "s" }
    ));
    lines
}

/// The summary's entry for one listed insight.
fn listing(set: &InsightSet, name: &str) -> Vec<String> {
    let info = info(name);
    let (min, max) = relevant_bounds(set, name);
    let mut parts = vec![
        format!("insight name: {name}"),
        format!("description: {}", info.description),
        format!("relevant trace bounds: {}", bounds(min, max)),
    ];
    if let Some(savings) = savings(set, name) {
        parts.push(format!("estimated metric savings: {savings}"));
    }
    if let Some(checks) = set
        .checks
        .as_ref()
        .filter(|checks| name == "DocumentLatency" && checks.wasted_bytes > 0.0)
    {
        parts.push(format!(
            "estimated wasted bytes: {}",
            bytes(checks.wasted_bytes)
        ));
    }
    parts.extend(
        info.questions
            .iter()
            .map(|question| format!("example question: {question}")),
    );
    parts
}

/// The part of the trace an insight is about (DevTools derives it from the insight's overlays).
fn relevant_bounds(set: &InsightSet, name: &str) -> (f64, f64) {
    let window = match name {
        "LCPBreakdown" => set
            .subparts
            .first()
            .zip(set.subparts.last())
            .map(|(first, last)| (first.min, last.max)),
        "CLSCulprits" => set
            .worst_cluster()
            .map(|cluster| (cluster.start, cluster.end)),
        "DocumentLatency" => set
            .document
            .as_ref()
            .map(|document| (document.start, document.end)),
        _ => set
            .long_tasks
            .first()
            .zip(set.long_tasks.last())
            .map(|(first, last)| (first.ts, last.ts + last.dur)),
    };
    window.unwrap_or((set.min, set.max))
}

/// `estimated metric savings`, which of our insights only DocumentLatency has.
pub(super) fn savings(set: &InsightSet, name: &str) -> Option<String> {
    let checks = set.checks.as_ref().filter(|_| name == "DocumentLatency")?;
    let ms = round(checks.savings_ms());
    Some(format!("FCP {ms} ms, LCP {ms} ms"))
}
