//! `devtools:tool/performance` (`performance`): traces and their insights. A trace records
//! every tab of the browser, so a session sharing its browser cannot start one; a trace saved
//! to a file also needs `files.write`; one left running after its call needs `long-lived`.

use super::function::{HostFunction as F, Marks as M};
use super::{CallState, Outcome, PageHandle, or_return};
use crate::browser::features::performance::Performance;
use crate::policy::capability::Capability::FilesWrite;
use crate::runtime::calling::bindings::v0_3::devtools::tool::performance;
use wasmtime::component::Resource;

/// Reloads the page when asked, records until stopped, writes the trace when given a path.
const START_TRACE: F = F::new(
    "performance",
    "start-trace",
    M::NAVIGATES
        .and(M::WRITES)
        .and(M::LONG_LIVED)
        .and(M::PAGE_CONTENT.and(M::ON_PAGE)),
)
.depending(&[FilesWrite]);
const STOP_TRACE: F = F::new(
    "performance",
    "stop-trace",
    M::WRITES.and(M::PAGE_CONTENT).and(M::ON_PAGE),
)
.depending(&[FilesWrite]);
const ANALYZE_INSIGHT: F = F::new(
    "performance",
    "analyze-insight",
    M::PAGE_CONTENT.and(M::ON_PAGE),
);
const INSIGHT_SETS: F = F::new(
    "performance",
    "insight-sets",
    M::PAGE_CONTENT.and(M::ON_PAGE),
);

pub(super) const FUNCTIONS: &[&F] = &[&START_TRACE, &STOP_TRACE, &ANALYZE_INSIGHT, &INSIGHT_SETS];

fn insight_set(numbers: devtools_performance::InsightNumbers) -> performance::InsightSet {
    performance::InsightSet {
        id: numbers.id,
        url: numbers.url,
        first_contentful_paint_ms: numbers.fcp_ms,
        largest_contentful_paint_ms: numbers.lcp_ms,
        cumulative_layout_shift: numbers.cls,
        total_blocking_time_ms: numbers.total_blocking_time_ms,
        long_tasks: numbers
            .long_tasks
            .into_iter()
            .map(|(start_ms, duration_ms)| performance::LongTask {
                start_ms,
                duration_ms,
            })
            .collect(),
        server_response_ms: numbers.server_response_ms,
        redirect_ms: numbers.redirect_ms,
        insights: numbers.insights,
    }
}

impl performance::Host for CallState {
    async fn insight_sets(
        &mut self,
        handle: Resource<PageHandle>,
    ) -> wasmtime::Result<Vec<performance::InsightSet>> {
        self.dispatch(&INSIGHT_SETS, async |call| {
            Ok(match call.page(&handle).await? {
                Ok(page) => Performance::insight_numbers(page)
                    .into_iter()
                    .map(insight_set)
                    .collect(),
                Err(_) => Vec::new(),
            })
        })
        .await
    }

    async fn start_trace(
        &mut self,
        handle: Resource<PageHandle>,
        options: performance::TraceOptions,
    ) -> Outcome<Vec<String>> {
        self.dispatch(&START_TRACE, async |call| {
            if options.file_path.is_some() {
                call.require(FilesWrite)?;
            }
            // Decided on the effect, whatever tool asks: a trace records every tab of the browser.
            or_return!(call.session().and_then(|session| {
                session.require_own_browser("A performance trace records every tab of the browser")
            }));
            let (page, sandbox) = or_return!(call.page_and_sandbox(&handle).await?);
            Ok(Performance::start_trace(
                page,
                options.reload,
                options.auto_stop,
                options.ignore_cache,
                options.file_path.as_deref(),
                sandbox,
            )
            .await)
        })
        .await
    }

    async fn stop_trace(
        &mut self,
        handle: Resource<PageHandle>,
        file_path: Option<String>,
    ) -> Outcome<Vec<String>> {
        self.dispatch(&STOP_TRACE, async |call| {
            if file_path.is_some() {
                call.require(FilesWrite)?;
            }
            let (page, sandbox) = or_return!(call.page_and_sandbox(&handle).await?);
            Ok(Performance::stop_trace(page, file_path.as_deref(), sandbox).await)
        })
        .await
    }

    async fn analyze_insight(
        &mut self,
        handle: Resource<PageHandle>,
        insight_set_id: String,
        insight_name: String,
    ) -> Outcome<Vec<String>> {
        self.dispatch(&ANALYZE_INSIGHT, async |call| {
            Ok(Performance::analyze_insight(
                or_return!(call.page(&handle).await?),
                &insight_set_id,
                &insight_name,
            ))
        })
        .await
    }
}
