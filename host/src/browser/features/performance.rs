//! Performance traces of a page (`performance_start_trace`, `performance_stop_trace`,
//! `performance_analyze_insight`), with the reference's texts around them. The running trace
//! and the last summary are the page's [`Performance`] slot.

pub mod trace;

use crate::browser::cdp::{cdp, send, timeouts};
use crate::browser::page::{McpPage, Target};
use crate::sandbox::{FileKind, Sandbox};
use std::time::Duration;
use trace::TraceSummary;

/// How long an auto-stopped trace keeps recording after the load, as the reference waits.
const AUTO_STOP_AFTER: Duration = Duration::from_secs(5);

/// A page's performance state: the running trace and the summary of the last one.
#[derive(Default)]
pub struct Performance {
    running: Option<trace::Recording>,
    last: Option<TraceSummary>,
}

impl Performance {
    /// Whether a trace is recording on `page`.
    pub fn is_recording(page: &McpPage) -> bool {
        page.features()
            .get::<Performance>()
            .is_some_and(|state| state.running.is_some())
    }

    /// Takes the running trace off the page, if any.
    fn take_running(page: &mut McpPage) -> Option<trace::Recording> {
        page.features_mut().get_mut::<Performance>().running.take()
    }

    /// Stops the running trace and drops what it recorded (a long-lived effect ended).
    pub async fn abandon(page: &mut McpPage) -> Result<(), String> {
        match Self::take_running(page) {
            Some(recording) => trace::stop(page.cdp(), recording).await.map(drop),
            None => Ok(()),
        }
    }

    /// Starts a trace (around a reload when asked); with `auto_stop` it also stops it and
    /// returns the summary. Returns the response lines.
    pub async fn start_trace(
        page: &mut McpPage,
        reload: bool,
        auto_stop: bool,
        ignore_cache: bool,
        file_path: Option<&str>,
        sandbox: &Sandbox,
    ) -> Result<Vec<String>, String> {
        if Self::is_recording(page) {
            return Ok(vec![
                "Error: a performance trace is already running. Use performance_stop_trace to stop it. Only one trace can be running at any given time.".into(),
            ]);
        }
        let url = page.url().await;
        if reload {
            page.navigate(Target::Url("about:blank".into()), None, true, None)
                .await?;
        }
        let recording = trace::start(page.cdp()).await?;
        if reload {
            // A cold load: the document and its subresources come from the network.
            let cache = |disabled: bool| {
                cdp(
                    "Network.setCacheDisabled",
                    serde_json::json!({ "cacheDisabled": disabled }),
                )
            };
            if ignore_cache {
                send(page.cdp(), cache(true), timeouts::COMMAND)
                    .await
                    .map_err(|error| error.to_string())?;
            }
            let navigated = page.navigate(Target::Url(url), None, true, None).await;
            if ignore_cache {
                let _restored = send(page.cdp(), cache(false), timeouts::COMMAND).await;
            }
            if let Err(error) = navigated {
                let _stopped = trace::stop(page.cdp(), recording).await;
                return Err(error);
            }
        }
        if !auto_stop {
            page.features_mut().get_mut::<Performance>().running = Some(recording);
            return Ok(vec![
                "The performance trace is being recorded. Use performance_stop_trace to stop it."
                    .into(),
            ]);
        }
        tokio::time::sleep(AUTO_STOP_AFTER).await;
        Self::finish_trace(page, recording, file_path, sandbox).await
    }

    /// Stops the running trace; when none is running, the line the reference 1.11.0 answers.
    pub async fn stop_trace(
        page: &mut McpPage,
        file_path: Option<&str>,
        sandbox: &Sandbox,
    ) -> Result<Vec<String>, String> {
        match Self::take_running(page) {
            Some(recording) => Self::finish_trace(page, recording, file_path, sandbox).await,
            None => Ok(vec![
                "Error: no active performance trace recording to stop.".into(),
            ]),
        }
    }

    async fn finish_trace(
        page: &mut McpPage,
        recording: trace::Recording,
        file_path: Option<&str>,
        sandbox: &Sandbox,
    ) -> Result<Vec<String>, String> {
        let recorded = trace::stop(page.cdp(), recording).await?;
        let mut lines = Vec::new();
        if let Some(path) = file_path {
            let gzip = path.ends_with(".gz");
            let bytes = recorded.to_file_bytes(gzip)?;
            let file = sandbox
                .save(path, FileKind::Trace { gzip }, &bytes)
                .map_err(|error| error.to_string())?;
            lines.push(format!("The raw trace data was saved to {file}."));
        }
        lines.push("The performance trace has been stopped.".into());
        let url = page.url().await;
        let emulation = page.emulation();
        let network = emulation.network.as_ref().map(|preset| preset.name);
        let summary = recorded.summarize_throttled(&url, Some(emulation.cpu_multiplier()), network);
        lines.push(summary.text.clone());
        page.features_mut().get_mut::<Performance>().last = Some(summary);
        Ok(lines)
    }

    /// One insight of the last trace; the reference answers misses as text, not errors.
    /// The insight sets of the page's last trace as numbers; none before a trace.
    pub fn insight_numbers(page: &McpPage) -> Vec<devtools_performance::InsightNumbers> {
        page.features()
            .get::<Performance>()
            .and_then(|state| state.last.as_ref())
            .map(TraceSummary::numbers)
            .unwrap_or_default()
    }

    pub fn analyze_insight(
        page: &McpPage,
        insight_set_id: &str,
        insight_name: &str,
    ) -> Result<Vec<String>, String> {
        let last = page.features().get::<Performance>();
        let Some(summary) = last.and_then(|state| state.last.as_ref()) else {
            return Ok(vec![
                "No recorded traces found. Record a performance trace so you have Insights to analyze.".into(),
            ]);
        };
        let text = match summary.analyze(insight_set_id, insight_name) {
            Ok(text) | Err(text) => text,
        };
        Ok(vec![text])
    }
}
