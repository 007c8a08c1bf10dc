//! A trace's insight sets as numbers (milliseconds from the navigation), for tools that compute
//! on them rather than print the reference's summary.

use super::insights::{InsightSet, TraceSummary};

/// One insight set (a navigation, or the trace without one).
#[derive(Debug, Clone, PartialEq)]
pub struct InsightNumbers {
    pub id: String,
    pub url: String,
    /// First and largest contentful paint, from the navigation's start.
    pub fcp_ms: Option<f64>,
    pub lcp_ms: Option<f64>,
    /// The worst layout-shift session window's score (0 without shifts).
    pub cls: f64,
    pub total_blocking_time_ms: f64,
    /// Long tasks (over 50 ms), each as (start from the set's start, duration), in ms.
    pub long_tasks: Vec<(f64, f64)>,
    /// The document request's server response and redirect time, when there is a navigation.
    pub server_response_ms: Option<f64>,
    pub redirect_ms: Option<f64>,
    /// The insights `analyze-insight` can explain for this set.
    pub insights: Vec<String>,
}

impl InsightSet {
    fn numbers(&self) -> InsightNumbers {
        let since_navigation = |ts: f64| {
            self.navigation
                .as_ref()
                .map(|navigation| (ts - navigation.ts) / 1000.0)
        };
        InsightNumbers {
            id: self.id.clone(),
            url: self.url.clone(),
            fcp_ms: self.fcp.and_then(since_navigation),
            lcp_ms: self.lcp.as_ref().and_then(|lcp| since_navigation(lcp.ts)),
            cls: self.worst_cluster().map_or(0.0, |cluster| cluster.score),
            total_blocking_time_ms: self.tbt / 1000.0,
            long_tasks: self
                .long_tasks
                .iter()
                .map(|task| ((task.ts - self.min) / 1000.0, task.dur / 1000.0))
                .collect(),
            server_response_ms: self.checks.as_ref().map(|checks| checks.server_response_ms),
            redirect_ms: self.checks.as_ref().map(|checks| checks.redirect_ms),
            insights: self.available().into_iter().map(str::to_string).collect(),
        }
    }
}

impl TraceSummary {
    /// Every insight set of the trace as numbers.
    pub fn numbers(&self) -> Vec<InsightNumbers> {
        self.sets().iter().map(InsightSet::numbers).collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fixture_trace_has_its_paints_as_numbers() {
        let summary = crate::summarize(&crate::fixture::page(), "http://fallback/", (None, None));
        let sets = summary.numbers();
        let navigation = sets
            .iter()
            .find(|set| set.id == "NAVIGATION_0")
            .expect("the navigation's set");
        let (fcp, lcp) = (
            navigation.fcp_ms.expect("fcp"),
            navigation.lcp_ms.expect("lcp"),
        );
        assert!(fcp > 0.0 && lcp >= fcp, "{navigation:?}");
        assert!(navigation.insights.contains(&"LCPBreakdown".to_string()));
        assert!(summary.text.contains(&navigation.url), "{navigation:?}");
    }
}
