//! `lighthouse_audit`: Lighthouse scores and failing audits (accessibility, SEO, best
//! practices, agentic browsing), reports saved to disk. The host runs Lighthouse.

use devtools_tool::lighthouse::{AuditMode, AuditOptions, run_audit};
use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::{Deserialize, Serialize};

#[derive(Deserialize, Serialize, schemars::JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Navigation,
    Snapshot,
}

#[derive(Deserialize, Serialize, schemars::JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Device {
    Desktop,
    Mobile,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// "navigation" reloads & audits. "snapshot" analyzes current state.
    #[schemars(extend("default" = "navigation"))]
    mode: Option<Mode>,
    /// Device to emulate.
    #[schemars(extend("default" = "desktop"))]
    device: Option<Device>,
    /// Directory for reports. If omitted, uses temporary files.
    output_dir_path: Option<String>,
}

struct LighthouseAudit;

impl PageTool for LighthouseAudit {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "lighthouse_audit",
            Category::Debugging,
            "Get Lighthouse scores, failing audits, and the DOM nodes they flag for accessibility, SEO, best practices, and agentic browsing. Full reports are saved to disk. This excludes performance. For performance audits, run performance_start_trace",
        )
        .blocked_by_dialog()
        .file_param("outputDirPath")
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let options = AuditOptions {
            mode: match params.mode.unwrap_or(Mode::Navigation) {
                Mode::Navigation => AuditMode::Navigation,
                Mode::Snapshot => AuditMode::Snapshot,
            },
            device: match params.device.unwrap_or(Device::Desktop) {
                Device::Desktop => devtools_tool::lighthouse::Device::Desktop,
                Device::Mobile => devtools_tool::lighthouse::Device::Mobile,
            },
            output_dir_path: params.output_dir_path,
        };
        let lines = run_audit(page, &options)?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(LighthouseAudit);
