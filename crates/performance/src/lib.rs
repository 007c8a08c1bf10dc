//! Performance-trace insights computed from raw Chromium trace events (the `traceEvents` of a
//! `Tracing` recording), printed in chrome-devtools-mcp's summary and insight shapes.
//!
//! The reference hands the trace to the DevTools frontend's trace engine, which computes about
//! twenty "insights". We do not have that engine, so [`summarize`] computes what the raw events
//! give directly (navigation and document timing, FCP, LCP and its breakdown, CLS session
//! windows, long tasks and total blocking time) and prints it in the reference's summary shape,
//! saying in the text which insights are not computed.
//!
//! An engine: data in, text out. No I/O, no async runtime, no browser types, so it builds and
//! tests on its own and is optimised in the dev profile.

mod data;
mod details;
mod events;
#[cfg(test)]
mod fixture;
mod format;
mod insights;
mod metrics;
mod network;
mod report;

pub use data::InsightNumbers;
pub use insights::{TraceSummary, summarize};

#[cfg(test)]
mod tests {
    #[test]
    fn summarize_reads_the_trace() {
        let summary = super::summarize(&super::fixture::page(), "http://fallback/", (None, None));
        assert!(summary.text.contains("## insight set id: NAVIGATION_0"));
        assert!(summary.analyze("NAVIGATION_0", "LCPBreakdown").is_ok());
    }
}
