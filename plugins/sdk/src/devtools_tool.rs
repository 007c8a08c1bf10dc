//! Write a devtools-mcp tool in about fifteen lines.
//!
//! A tool is a parameters struct (serde + schemars derives; field docs become the JSON Schema),
//! one trait impl and one macro:
//!
//! ```ignore
//! use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(rename_all = "camelCase")]
//! struct Params {
//!     /// Whether to include all possible information available in the full a11y tree.
//!     verbose: Option<bool>,
//! }
//!
//! struct TakeSnapshot;
//! impl PageTool for TakeSnapshot {
//!     type Params = Params;
//!     fn definition(_flags: &Flags) -> Definition {
//!         Definition::new("take_snapshot", Category::Debugging, "Take a text snapshot ...")
//!     }
//!     fn handle(_page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
//!         response.include_snapshot(params.verbose.unwrap_or(false), None);
//!         Ok(())
//!     }
//! }
//! devtools_tool::register_page_tool!(TakeSnapshot);
//! ```
//!
//! Authors never see WIT, wit-bindgen or JSON: the SDK parses the parameters before `handle`
//! runs and turns a bad one into the tool's error.

mod definition;
mod response;

use serde::de::DeserializeOwned;

pub use definition::{Definition, Flags};
pub use response::Response;

#[doc(hidden)]
pub mod __bindings {
    wit_bindgen::generate!({
        // The crate's own copy of the contract (kept equal to the newest wit/since_vX.Y.Z by
        // server/build.rs), so the published crate builds on its own.
        path: "wit",
        world: "plugin",
        pub_export_macro: true,
        export_macro_name: "__export_plugin",
        default_bindings_module: "::devtools_tool::__bindings",
    });
}

mod page;

pub use __bindings::devtools::tool::emulation::{
    Emulation, ForcedColors, PrefersContrast, PrefersReducedMotion,
};
pub use __bindings::devtools::tool::navigate::{NavigateOptions, Navigated, Navigation};
pub use __bindings::devtools::tool::pages::{
    ConsoleMessage, Dialog, DialogKind, Header, ImageFormat, MessageKind, NetworkRequest, PageInfo,
    RequestState, Screenshot, ScreenshotOptions,
};
pub use __bindings::devtools::tool::performance::{InsightSet, LongTask, TraceOptions};
pub use __bindings::devtools::tool::response::ListOptions;
pub use __bindings::devtools::tool::types::{DialogAction, EvaluateOptions, Page, ScriptFormat};
pub use __bindings::exports::devtools::tool::tool::Category;

use __bindings::exports::devtools::tool::tool as wit_tool;

/// The names serde gives enum values (`#[serde(rename_all = ...)]`): what list filters such
/// as console message types or resource types are declared with.
pub fn serde_names<T: serde::Serialize>(values: &[T]) -> Vec<String> {
    values
        .iter()
        .filter_map(|value| match serde_json::to_value(value) {
            Ok(serde_json::Value::String(name)) => Some(name),
            _ => None,
        })
        .collect()
}

/// Errors cross the boundary as plain text: `Err(format!("…"))` is all a tool writes.
pub type Result<T, E = String> = core::result::Result<T, E>;

/// The page collection, for tools that are not page-scoped (`list_pages`, `new_page`, ...).
/// Reading it needs `pages.read`; selecting, opening and closing need `pages.manage`.
pub mod pages {
    pub use crate::__bindings::devtools::tool::pages::{all, get, selected};
    pub use crate::__bindings::devtools::tool::pages_manage::{close, new_page, select};
}

/// An element's CSS cascade, read by the host (`get_css_styles`; capability `styles`).
pub mod styles {
    pub use crate::__bindings::devtools::tool::styles::get_css_styles;
}

/// Page recordings; the host picks the recorder and frame rate from its flags (capability
/// `screencast`, and `files.write` for the video).
pub mod screencast {
    pub use crate::__bindings::devtools::tool::screencast::{start, stop};
}

/// A person in the loop: the host shows the page in a live view and waits for Done
/// (capability `human`; contract 0.3.2).
pub mod human {
    pub use crate::__bindings::devtools::tool::human::request;
}

/// Lighthouse audits, run by the host with Node.js (capability `lighthouse`).
pub mod lighthouse {
    pub use crate::__bindings::devtools::tool::lighthouse::{
        AuditMode, AuditOptions, Device, run_audit,
    };
}

/// Tools a page offers: third-party developer tools and WebMCP tools (capability
/// `page-tools`). The host escapes what the page says in the lines it returns.
pub mod page_tools {
    pub use crate::__bindings::devtools::tool::page_tools::{
        execute_developer_tool, execute_webmcp_tool, list_developer_tools, list_webmcp_tools,
    };
}

/// The browser's extensions (`--categoryExtensions`): listing, uninstalling and triggering
/// need `extensions`; installing and reloading need `extensions.install`; running code in an
/// extension's service worker needs `script`.
pub mod extensions {
    pub use crate::__bindings::devtools::tool::extensions::{installed, trigger_action, uninstall};
    pub use crate::__bindings::devtools::tool::extensions_install::{install, reload};
    pub use crate::__bindings::devtools::tool::script::evaluate_in_service_worker;
}

/// Web apps installed in the browser profile (`--categoryPwa`; capability `pwa`).
pub mod pwa {
    pub use crate::__bindings::devtools::tool::pwa::{
        DisplayMode, OsAppState, get_os_app_state, install, launch, uninstall,
    };
}

/// Named sessions (`--sessionStore`; capability `sessions`): the session's cookies and local
/// storage saved under a name and restored later. Each function returns the response lines;
/// they name sessions, sites and counts, never values.
pub mod sessions {
    pub use crate::__bindings::devtools::tool::sessions::{delete, list_saved, restore, save};
}

/// Heap snapshots: taken of a page, and analysed in the host (capability `memory`). Each
/// analysis takes a `.heapsnapshot` path and returns the response lines.
pub mod memory {
    pub use crate::__bindings::devtools::tool::memory::*;

    /// The filter for the reference's `filterName` (and `objectId`, which
    /// `attributedToSpecificNativeContext` needs).
    pub fn node_filter(
        name: Option<&str>,
        object_id: Option<f64>,
    ) -> crate::Result<Option<NodeFilter>> {
        let Some(name) = name else {
            return Ok(None);
        };
        Ok(Some(match name {
            "objectsRetainedByDetachedDomNodes" => NodeFilter::RetainedByDetachedDomNodes,
            "objectsRetainedByConsole" => NodeFilter::RetainedByConsole,
            "objectsRetainedByEventHandlers" => NodeFilter::RetainedByEventHandlers,
            "objectsRetainedByContexts" => NodeFilter::RetainedByContexts,
            "sharedNativeContext" => NodeFilter::SharedNativeContext,
            "noNativeContext" => NodeFilter::NoNativeContext,
            "attributedToSpecificNativeContext" => {
                match object_id {
                    Some(id) => NodeFilter::AttributedToSpecificNativeContext(id),
                    None => {
                        return Err("objectId is required when filterName is attributedToSpecificNativeContext".into());
                    }
                }
            }
            _ => return Err("Invalid filter name".into()),
        }))
    }
}

/// A tool that acts on one page: the host resolves it (selected page, or `pageId` with
/// page-id routing) and refuses the call while a dialog blocks it, if the definition says so.
pub trait PageTool {
    type Params: DeserializeOwned + schemars::JsonSchema;
    /// The definition for these server flags (the reference's factory form).
    fn definition(flags: &Flags) -> Definition;
    fn handle(page: &Page, params: Self::Params, response: &mut Response) -> Result<()>;
}

/// A tool that works on the whole session rather than one page.
pub trait GlobalTool {
    type Params: DeserializeOwned + schemars::JsonSchema;
    /// The definition for these server flags (the reference's factory form).
    fn definition(flags: &Flags) -> Definition;
    fn handle(params: Self::Params, response: &mut Response) -> Result<()>;
}

fn parse_params<P: DeserializeOwned>(params: &str) -> Result<P> {
    serde_json::from_str(params).map_err(|error| format!("Invalid arguments: {error}"))
}

fn export_definition<P: schemars::JsonSchema>(
    definition: fn(&Flags) -> Definition,
    flags: &str,
    page_scoped: bool,
) -> wit_tool::ToolDefinition {
    let flags = Flags::parse(flags);
    definition(&flags).into_wit::<P>(page_scoped)
}

/// Marks the line a panic hands the host; the host moves it from the answer's lines into the
/// crash report. Must equal the host's `runtime::guest_report::PANIC_MARK`.
const PANIC_MARK: &str = "\u{1}devtools-tool:panic\u{1}";

/// A tool built for `wasm32-unknown-unknown` has no stderr, and its panics abort: without a
/// hook the caller would see only "unreachable instruction executed". The hook hands the
/// panic's message and location (`panicked at src/lib.rs:12:5: ...`) to the host first.
fn report_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            __bindings::devtools::tool::response::append_line(&format!("{PANIC_MARK}{info}"));
        }));
    });
}

#[doc(hidden)]
pub struct PageToolExport<T>(core::marker::PhantomData<T>);

impl<T: PageTool> wit_tool::Guest for PageToolExport<T> {
    fn definition(flags: String) -> wit_tool::ToolDefinition {
        export_definition::<T::Params>(T::definition, &flags, true)
    }

    fn handle(params: String, page: Option<&Page>) -> Result<()> {
        report_panics();
        let page = page.ok_or("This page-scoped tool was called without a page.")?;
        T::handle(page, parse_params(&params)?, &mut Response::new())
    }
}

#[doc(hidden)]
pub struct GlobalToolExport<T>(core::marker::PhantomData<T>);

impl<T: GlobalTool> wit_tool::Guest for GlobalToolExport<T> {
    fn definition(flags: String) -> wit_tool::ToolDefinition {
        export_definition::<T::Params>(T::definition, &flags, false)
    }

    fn handle(params: String, _page: Option<&Page>) -> Result<()> {
        report_panics();
        T::handle(parse_params(&params)?, &mut Response::new())
    }
}

/// Exports a [`PageTool`] as the component's tool.
#[macro_export]
macro_rules! register_page_tool {
    ($tool:ty) => {
        type __DevtoolsToolExport = $crate::PageToolExport<$tool>;
        $crate::__bindings::__export_plugin!(__DevtoolsToolExport with_types_in $crate::__bindings);
    };
}

/// Exports a [`GlobalTool`] as the component's tool.
#[macro_export]
macro_rules! register_global_tool {
    ($tool:ty) => {
        type __DevtoolsToolExport = $crate::GlobalToolExport<$tool>;
        $crate::__bindings::__export_plugin!(__DevtoolsToolExport with_types_in $crate::__bindings);
    };
}
