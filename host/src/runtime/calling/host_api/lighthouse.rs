//! `devtools:tool/lighthouse`: a Lighthouse audit of a page, run by the host (Node.js and
//! Lighthouse's npm package, found from the server's flags, from code folders checked at
//! start) with reports written through the file gateway.

use super::function::{HostFunction as F, Marks as M};
use super::{Call, CallState, PageHandle};
use crate::lighthouse::{AuditRequest, report_lines};
use crate::policy::capability::Capability::FilesWrite;
use crate::runtime::calling::bindings::v0_3::devtools::tool::lighthouse;
use crate::sandbox::{FileKind, ReportFormat, save_temporary_file};
use std::path::Path;
use wasmtime::component::Resource;

/// A navigation audit reloads the page; reports are always written, to temp files at least.
pub(super) const RUN_LIGHTHOUSE_AUDIT: F = F::new(
    "lighthouse",
    "run-audit",
    M::NAVIGATES
        .and(M::WRITES)
        .and(M::PAGE_CONTENT)
        .and(M::ON_PAGE),
)
.also(&[FilesWrite]);

pub(super) const FUNCTIONS: &[&F] = &[&RUN_LIGHTHOUSE_AUDIT];

impl lighthouse::Host for CallState {
    async fn run_audit(
        &mut self,
        handle: Resource<PageHandle>,
        options: lighthouse::AuditOptions,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.dispatch(&RUN_LIGHTHOUSE_AUDIT, async |call| {
            let mode = match options.mode {
                lighthouse::AuditMode::Navigation => "navigation",
                lighthouse::AuditMode::Snapshot => "snapshot",
            };
            let device = match options.device {
                lighthouse::Device::Desktop => "desktop",
                lighthouse::Device::Mobile => "mobile",
            };
            audit(
                call,
                &handle,
                mode,
                device,
                options.output_dir_path.as_deref(),
            )
            .await
        })
        .await
    }
}

/// An audit in every contract's terms (`navigation`/`snapshot`, `desktop`/`mobile`).
pub(super) async fn audit(
    call: &mut Call<'_>,
    handle: &Resource<PageHandle>,
    mode: &str,
    device: &str,
    output_dir_path: Option<&str>,
) -> wasmtime::Result<Result<Vec<String>, String>> {
    let id = call.page_id(handle).await?;
    let prepared = prepare(call, id, output_dir_path, mode, device).await;
    let (reports, output_dir) = match prepared {
        Ok(done) => done,
        Err(error) => return Ok(Err(error)),
    };
    let lhr: serde_json::Value = match serde_json::from_str(&reports.json) {
        Ok(lhr) => lhr,
        Err(error) => {
            return Ok(Err(format!(
                "Lighthouse returned an unreadable report: {error}"
            )));
        }
    };
    let trusted = call.trusted();
    let mut paths = Vec::new();
    for (format, data) in [
        (ReportFormat::Json, &reports.json),
        (ReportFormat::Html, &reports.html),
    ] {
        let kind = FileKind::LighthouseReport(format);
        let name = format!("report{}", kind.extension());
        // Active content (the HTML report) never lands in a folder a community plugin chose.
        let chosen = output_dir
            .as_ref()
            .filter(|_| trusted || !kind.is_active_content());
        let path = match chosen {
            Some(dir) => {
                let base = Path::new(dir).join("report").display().to_string();
                match call.write_file(&base, kind, data.as_bytes())? {
                    Ok(path) => path,
                    Err(error) => return Ok(Err(error)),
                }
            }
            None => match save_temporary_file(data.as_bytes(), &name) {
                Ok(path) => path.display().to_string(),
                Err(error) => return Ok(Err(error)),
            },
        };
        paths.push(path);
    }
    Ok(Ok(report_lines(mode, device, &lhr, &paths)))
}

/// Checks the output folder (before the audit runs, so a refused folder costs nothing) and
/// runs Lighthouse against the page.
async fn prepare(
    call: &mut Call<'_>,
    id: u32,
    output_dir: Option<&str>,
    mode: &str,
    device: &str,
) -> Result<(crate::lighthouse::AuditReports, Option<String>), String> {
    let session = call.session()?;
    let output_dir = match output_dir {
        Some(dir) => Some(
            session
                .sandbox
                .resolve(dir)
                .map_err(|error| error.to_string())?,
        ),
        None => None,
    };
    let ws_endpoint = session
        .browser_ws_endpoint()
        .ok_or("The browser is not connected.")?;
    let settings = session.browser_options().lighthouse.clone();
    let target_id = session.page(id)?.cdp().target_id().inner().clone();
    // An audit takes tens of seconds on its own connection: other pages' calls go on meanwhile
    // (parallel pages).
    let audited = async {
        let request = AuditRequest {
            ws_endpoint: &ws_endpoint,
            target_id: &target_id,
            mode,
            device,
        };
        crate::lighthouse::run(&settings, &request).await
    };
    let reports = call
        .unlocked(audited)
        .await
        .map_err(|error| error.to_string())?;
    Ok((reports, output_dir))
}
