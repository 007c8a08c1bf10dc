//! `performance_analyze_insight`'s texts, in the shape of DevTools' `PerformanceInsightFormatter`
//! (`## Insight Title: ...`), including its verbose network request format. Requests and events
//! are identified by timestamp: DevTools' event keys come from its trace engine.

use super::format::{fixed, micros, millis, plain};
use super::insights::InsightSet;
use super::network::Request;
use super::report::{info, savings};

/// `performance_analyze_insight`'s text for one computed insight.
pub(super) fn insight(set: &InsightSet, name: &str) -> String {
    let info = info(name);
    let details = match name {
        "LCPBreakdown" => lcp_breakdown(set),
        "CLSCulprits" => layout_shifts(set),
        "DocumentLatency" => document_latency(set),
        _ => long_tasks(set),
    };
    let links: Vec<String> = info.links.iter().map(|link| format!("- {link}")).collect();
    format!(
        "## Insight Title: {}\n\n## Insight Summary:\n{}\n\n## Detailed analysis:\n{details}\n\n## Estimated savings: {}\n\n## External resources:\n{}",
        info.title,
        info.summary,
        savings(set, name).unwrap_or_else(|| "none".to_string()),
        links.join("\n")
    )
}

/// What every LCP-related insight says about the LCP first.
fn lcp_context(set: &InsightSet) -> Option<String> {
    let (lcp, navigation) = (set.lcp.as_ref()?, set.navigation.as_ref()?);
    let element = match &lcp.node_name {
        Some(node) => format!(
            "The LCP element ({node}, nodeId: {})",
            lcp.node_id
                .map_or("unknown".to_string(), |id| id.to_string())
        ),
        None => "The LCP element".to_string(),
    };
    let mut parts = vec![format!(
        "The Largest Contentful Paint (LCP) time for this navigation was {}.",
        millis((lcp.ts - navigation.ts) / 1000.0)
    )];
    match (&set.lcp_request, &lcp.image_url) {
        (Some(request), _) => {
            parts.push(format!(
                "{element} is an image fetched from {} (ts: {}).",
                request.url,
                plain(request.start)
            ));
            parts.push(request_block(set, request, "LCP resource network request"));
        }
        (None, Some(url)) => parts.push(format!(
            "{element} is an image ({url}) whose network request is not in the trace."
        )),
        (None, None) if lcp.is_image => parts.push(format!(
            "{element} is an image whose network request is not in the trace."
        )),
        (None, None) => parts.push(format!(
            "{element} is text and was not fetched from the network."
        )),
    }
    Some(parts.join("\n"))
}

fn lcp_breakdown(set: &InsightSet) -> String {
    let (Some(context), Some(lcp), Some(navigation)) =
        (lcp_context(set), &set.lcp, &set.navigation)
    else {
        return "No LCP detected.".to_string();
    };
    if set.subparts.is_empty() {
        return format!(
            "{context}\n\nThe LCP breakdown is not available: the trace has no timing for the document request."
        );
    }
    let lcp_ms = (lcp.ts - navigation.ts) / 1000.0;
    let phases: Vec<String> = set
        .subparts
        .iter()
        .map(|part| {
            let ms = (part.max - part.min) / 1000.0;
            format!(
                "- {}: {} ({}% of total LCP time)",
                part.label,
                millis(ms),
                fixed(ms / lcp_ms * 100.0, 1)
            )
        })
        .collect();
    format!(
        "{context}\n\nWe can break this time down into the {} phases that combine to make the LCP time:\n\n{}",
        phases.len(),
        phases.join("\n")
    )
}

fn document_latency(set: &InsightSet) -> String {
    let (Some(document), Some(checks)) = (&set.document, &set.checks) else {
        return "The trace has no request for this navigation's document.".to_string();
    };
    let verdict = |passed: bool| if passed { "PASSED" } else { "FAILED" };
    let block = request_block(set, document, "Document network request");
    let context = lcp_context(set)
        .map(|context| format!("{context}\n\n"))
        .unwrap_or_default();
    format!(
        "{context}{block}\n\nThe result of the checks for this insight are:\n- The request was not redirected: {}\n- Server responded quickly: {}\n- Compression was applied: {}",
        verdict(checks.no_redirects()),
        verdict(checks.fast()),
        verdict(checks.compressed())
    )
}

fn layout_shifts(set: &InsightSet) -> String {
    let Some(cluster) = set.worst_cluster() else {
        return "No layout shifts were found.".to_string();
    };
    let ms = |us: f64| millis(us / 1000.0);
    let shifts: Vec<String> = cluster
        .shifts
        .iter()
        .enumerate()
        .map(|(index, shift)| {
            let impacted = if shift.impacted.is_empty() {
                String::new()
            } else {
                format!("\n- Impacted elements:\n  - {}\n", shift.impacted.join("\n  - "))
            };
            format!(
                "### Layout shift {}:{impacted}\n- Start time: {}\n- Score: {}\n- Potential root causes: not analysed by this server (DevTools attributes shifts to web fonts, injected iframes, non-composited animations and unsized images with its trace engine)",
                index + 1,
                ms(shift.ts - set.trace_min),
                fixed(shift.score, 4)
            )
        })
        .collect();
    format!(
        "The worst layout shift cluster was the cluster that started at {} and ended at {}, with a duration of {}.\nThe score for this cluster is {}.\n\nLayout shifts in this cluster:\n{}",
        ms(cluster.start - set.trace_min),
        ms(cluster.end - set.trace_min),
        ms(cluster.end - cluster.start),
        fixed(cluster.score, 4),
        shifts.join("\n")
    )
}

fn long_tasks(set: &InsightSet) -> String {
    if set.long_tasks.is_empty() {
        return "No main-thread task in this part of the trace took longer than 50 ms.".to_string();
    }
    let from = if set.fcp.is_some() {
        "first contentful paint"
    } else {
        "the start of this insight set"
    };
    let tasks: Vec<String> = set
        .long_tasks
        .iter()
        .enumerate()
        .map(|(index, task)| {
            let activity = if task.activity.is_empty() { "not identified".to_string() } else { task.activity.join(" > ") };
            let url = task.url.as_ref().map(|url| format!(" (url: {url})")).unwrap_or_default();
            format!(
                "### Long task {}:\n- Start time: {}\n- Duration: {}\n- Time over 50 ms: {}\n- Activity: {activity}{url}",
                index + 1,
                millis((task.ts - set.min) / 1000.0),
                millis(task.dur / 1000.0),
                millis((task.dur - super::metrics::LONG_TASK_US) / 1000.0)
            )
        })
        .collect();
    format!(
        "{} main-thread task{} took longer than 50 ms (start times are relative to the start of this insight set). Total blocking time from {from} to the end of this insight set: {}.\n\n{}",
        tasks.len(),
        if tasks.len() == 1 { "" } else { "s" },
        millis(set.tbt / 1000.0),
        tasks.join("\n\n")
    )
}

/// DevTools' verbose network request format; times are relative to the navigation.
fn request_block(set: &InsightSet, request: &Request, title: &str) -> String {
    let base = set
        .navigation
        .as_ref()
        .map(|navigation| navigation.ts)
        .filter(|ts| *ts <= request.start)
        .unwrap_or(set.trace_min);
    let redirects = if request.redirects.is_empty() {
        " no redirects".to_string()
    } else {
        let hops: Vec<String> = request
            .redirects
            .iter()
            .enumerate()
            .map(|(index, (url, ts, dur))| {
                format!(
                    "#### Redirect {}: {url}\n- Start time: {}\n- Duration: {}",
                    index + 1,
                    micros(ts - base),
                    micros(*dur)
                )
            })
            .collect();
        format!("\n{}", hops.join("\n"))
    };
    let priority = if request.initial_priority == request.priority {
        format!("Priority: {}", request.priority)
    } else {
        format!(
            "Initial priority: {}\nFinal priority: {}",
            request.initial_priority, request.priority
        )
    };
    let chain = initiators(set, request);
    let initiator = chain
        .last()
        .map(|url| format!("\nInitiator: {url}"))
        .unwrap_or_default();
    let yes_no = |value: bool| if value { "Yes" } else { "No" };
    format!(
        "## {title}: {}\nTimings:\n- Queued at: {}\n- Request sent at: {}\n- Download complete at: {}\n- Main thread processing completed at: {}\nDurations:\n- Download time: {}\n- Main thread processing time: {}\n- Total duration: {}{initiator}\nRedirects:{redirects}\nStatus code: {}\nMIME Type: {}\nProtocol: {}\n{priority}\nRender blocking: {}\nFrom a service worker: {}\nInitiators (root request to the request that directly loaded this one): {}\n{}",
        request.url,
        micros(request.start - base),
        micros(request.send_start - base),
        micros(request.finish - base),
        micros(request.end - base),
        micros(request.finish - request.download_start),
        micros(request.end - request.finish),
        micros(request.duration()),
        request
            .status
            .map_or("unknown".to_string(), |status| status.to_string()),
        request.mime_type,
        request.protocol,
        yes_no(request.render_blocking),
        yes_no(request.from_service_worker),
        if chain.is_empty() {
            "none".to_string()
        } else {
            chain.join(", ")
        },
        headers(&request.headers)
    )
}

/// The requests that led to `request`, root first, matched by the initiator's URL.
fn initiators(set: &InsightSet, request: &Request) -> Vec<String> {
    let mut chain: Vec<String> = Vec::new();
    let mut current = request;
    while let Some(url) = &current.initiator {
        let Some(parent) = set
            .requests
            .iter()
            .rfind(|candidate| candidate.url == *url && candidate.start <= current.start)
        else {
            break;
        };
        if chain.contains(&parent.url) || parent.url == request.url {
            return Vec::new();
        }
        chain.insert(0, parent.url.clone());
        current = parent;
    }
    chain
}

/// DevTools' `formatHeaders('Response headers', ..., true)`: values outside an allow-list are
/// redacted, and the list stops at 1,000 characters.
fn headers(headers: &[(String, String)]) -> String {
    /// DevTools' `allowedHeaders` (NetworkRequestFormatter.ts), lowercase, space-separated.
    const ALLOWED: &str = ":authority :method :path :scheme a-im accept-ch accept-charset accept-datetime \
        accept-encoding accept-language accept-patch accept-ranges accept \
        access-control-allow-credentials access-control-allow-headers \
        access-control-allow-methods access-control-allow-origin \
        access-control-expose-headers access-control-max-age access-control-request-headers \
        access-control-request-method age allow alt-svc cache-control connection \
        content-disposition content-encoding content-language content-location content-range \
        content-security-policy content-type correlation-id date delta-base dnt expect-ct \
        expect expires forwarded front-end-https host http2-settings if-modified-since \
        if-range if-unmodified-source im last-modified link location max-forwards nel origin \
        permissions-policy pragma preference-applied proxy-connection public-key-pins range \
        referer refresh report-to retry-after save-data sec-gpc server status \
        strict-transport-security te timing-allow-origin tk trailer transfer-encoding \
        upgrade-insecure-requests upgrade user-agent vary via warning www-authenticate \
        x-att-deviceid x-content-duration x-content-security-policy x-content-type-options \
        x-correlation-id x-forwarded-for x-forwarded-host x-forwarded-proto x-frame-options \
        x-http-method-override x-powered-by x-redirected-by x-request-id x-requested-with \
        x-ua-compatible x-wap-profile x-webkit-csp x-xss-protection";
    let mut text = String::new();
    for (name, value) in headers {
        let value = if ALLOWED
            .split_whitespace()
            .any(|allowed| name.trim().eq_ignore_ascii_case(allowed))
        {
            value.as_str()
        } else {
            "<redacted>"
        };
        let line = format!("- {name}: {value}\n");
        if text.len() + line.len() > 1000 {
            break;
        }
        text.push_str(&line);
    }
    let text = text.trim();
    if text.is_empty() {
        String::new()
    } else {
        format!("Response headers\n{text}")
    }
}
