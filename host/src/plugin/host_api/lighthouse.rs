//! `devtools:tool/lighthouse`: a Lighthouse audit of a page, run by the host (Node.js and
//! Lighthouse's npm package, found from the server's flags) with reports written through the
//! sandbox.

use super::{CallState, PageHandle};
use crate::lighthouse::{AuditRequest, report_lines};
use crate::plugin::bindings::devtools::tool::lighthouse;
use crate::plugin::capability::Capability;
use crate::sandbox::save_temporary_file;
use std::path::Path;
use wasmtime::component::Resource;

impl lighthouse::Host for CallState {
    async fn run_lighthouse_audit(
        &mut self,
        handle: Resource<PageHandle>,
        options: lighthouse::AuditOptions,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::Lighthouse, "run-lighthouse-audit")?;
        // Reports are always written, to temp files at least.
        self.require(Capability::FilesWrite, "run-lighthouse-audit")?;
        Ok(self.audit(&handle, &options).await)
    }
}

impl CallState {
    async fn audit(
        &mut self,
        handle: &Resource<PageHandle>,
        options: &lighthouse::AuditOptions,
    ) -> Result<Vec<String>, String> {
        let mode = options.mode.as_str();
        let device = options.device.as_str();
        if !matches!(mode, "navigation" | "snapshot") {
            return Err(format!(
                "Invalid mode \"{mode}\": expected \"navigation\" or \"snapshot\"."
            ));
        }
        if !matches!(device, "desktop" | "mobile") {
            return Err(format!(
                "Invalid device \"{device}\": expected \"desktop\" or \"mobile\"."
            ));
        }
        let id = self.page_id(handle).map_err(|error| error.to_string())?;
        let session = self.session()?;
        // Checked before the audit runs, so a refused folder costs nothing.
        let output_dir = match &options.output_dir_path {
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
        let target_id = session.page(id)?.page.target_id().inner().clone();
        let request = AuditRequest {
            ws_endpoint: &ws_endpoint,
            target_id: &target_id,
            mode,
            device,
        };
        let reports = crate::lighthouse::run(&settings, &request)
            .await
            .map_err(|error| error.to_string())?;
        let lhr: serde_json::Value = serde_json::from_str(&reports.json)
            .map_err(|error| format!("Lighthouse returned an unreadable report: {error}"))?;
        let session = self.session()?;
        let mut paths = Vec::new();
        for (extension, data) in [(".json", &reports.json), (".html", &reports.html)] {
            let path = match &output_dir {
                Some(dir) => {
                    let base = Path::new(dir).join("report");
                    session
                        .sandbox
                        .save(&base.display().to_string(), extension, data.as_bytes())
                        .map_err(|error| error.to_string())?
                }
                None => save_temporary_file(data.as_bytes(), &format!("report{extension}"))?
                    .display()
                    .to_string(),
            };
            paths.push(path);
        }
        Ok(report_lines(mode, device, &lhr, &paths))
    }
}
