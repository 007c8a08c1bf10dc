//! Performance traces and heap snapshots of a page, with the reference's texts around them.

use super::cdp::{cdp, send};
use super::page::{COMMAND_TIMEOUT, McpPage, Target};
use super::{heap, trace};
use crate::sandbox::{FileKind, Sandbox};
use std::time::Duration;

/// How long an auto-stopped trace keeps recording after the load, as the reference waits.
const AUTO_STOP_AFTER: Duration = Duration::from_secs(5);

impl McpPage {
    /// Starts a trace (around a reload when asked); with `auto_stop` it also stops it and
    /// returns the summary. Returns the response lines.
    pub async fn start_trace(
        &mut self,
        reload: bool,
        auto_stop: bool,
        ignore_cache: bool,
        file_path: Option<&str>,
        sandbox: &Sandbox,
    ) -> Result<Vec<String>, String> {
        if self.trace.is_some() {
            return Ok(vec![
                "Error: a performance trace is already running. Use performance_stop_trace to stop it. Only one trace can be running at any given time.".into(),
            ]);
        }
        let url = self.url().await;
        if reload {
            self.navigate(Target::Url("about:blank".into()), None, true, None)
                .await?;
        }
        let recording = trace::start(&self.page).await?;
        if reload {
            // A cold load: the document and its subresources come from the network.
            let cache = |disabled: bool| {
                cdp(
                    "Network.setCacheDisabled",
                    serde_json::json!({ "cacheDisabled": disabled }),
                )
            };
            if ignore_cache {
                send(&self.page, cache(true), COMMAND_TIMEOUT)
                    .await
                    .map_err(|error| error.to_string())?;
            }
            let navigated = self.navigate(Target::Url(url), None, true, None).await;
            if ignore_cache {
                let _restored = send(&self.page, cache(false), COMMAND_TIMEOUT).await;
            }
            if let Err(error) = navigated {
                let _stopped = trace::stop(&self.page, recording).await;
                return Err(error);
            }
        }
        if !auto_stop {
            self.trace = Some(recording);
            return Ok(vec![
                "The performance trace is being recorded. Use performance_stop_trace to stop it."
                    .into(),
            ]);
        }
        tokio::time::sleep(AUTO_STOP_AFTER).await;
        self.finish_trace(recording, file_path, sandbox).await
    }

    /// Stops the running trace; when none is running, the line the reference 1.11.0 answers.
    pub async fn stop_trace(
        &mut self,
        file_path: Option<&str>,
        sandbox: &Sandbox,
    ) -> Result<Vec<String>, String> {
        match self.trace.take() {
            Some(recording) => self.finish_trace(recording, file_path, sandbox).await,
            None => Ok(vec![
                "Error: no active performance trace recording to stop.".into(),
            ]),
        }
    }

    async fn finish_trace(
        &mut self,
        recording: trace::Recording,
        file_path: Option<&str>,
        sandbox: &Sandbox,
    ) -> Result<Vec<String>, String> {
        let recorded = trace::stop(&self.page, recording).await?;
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
        let url = self.url().await;
        let network = self.emulation.network.as_ref().map(|preset| preset.name);
        let summary =
            recorded.summarize_throttled(&url, Some(self.emulation.cpu_multiplier()), network);
        lines.push(summary.text.clone());
        self.last_trace = Some(summary);
        Ok(lines)
    }

    /// One insight of the last trace; the reference answers misses as text, not errors.
    pub fn analyze_insight(
        &self,
        insight_set_id: &str,
        insight_name: &str,
    ) -> Result<Vec<String>, String> {
        let Some(summary) = &self.last_trace else {
            return Ok(vec![
                "No recorded traces found. Record a performance trace so you have Insights to analyze.".into(),
            ]);
        };
        let text = match summary.analyze(insight_set_id, insight_name) {
            Ok(text) | Err(text) => text,
        };
        Ok(vec![text])
    }

    pub async fn take_heap_snapshot(
        &self,
        file_path: &str,
        sandbox: &Sandbox,
    ) -> Result<Vec<String>, String> {
        let bytes = heap::take_heap_snapshot(&self.page).await?;
        let file = sandbox
            .save(file_path, FileKind::HeapSnapshot, &bytes)
            .map_err(|error| error.to_string())?;
        Ok(vec![format!("Heap snapshot saved to {file}")])
    }
}
