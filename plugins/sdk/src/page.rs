//! What a tool can do with a page, as methods. Each calls a function of the interface that is
//! its capability (`input`, `script`, `navigate`, ...), so the component imports, and asks the
//! operator for, exactly the capabilities of the methods it calls.

use crate::__bindings::devtools::tool::files_read;
use crate::__bindings::devtools::tool::{
    emulation, input, memory, navigate, pages, performance, script,
};
use crate::{
    ConsoleMessage, Dialog, DialogAction, Emulation, EvaluateOptions, InsightSet, NavigateOptions,
    Navigated, Navigation, NetworkRequest, Page, Result, Screenshot, ScreenshotOptions,
    ScriptFormat, TraceOptions,
};

impl Page {
    /// The current URL (`pages.read`).
    pub fn url(&self) -> String {
        pages::url(self)
    }

    /// The dialog open on the page, if any (`pages.read`).
    pub fn dialog(&self) -> Option<Dialog> {
        pages::open_dialog(self)
    }

    /// Waits until any of the texts appears on the page (`pages.read`).
    pub fn wait_for(&self, texts: &[String], timeout_ms: Option<u32>) -> Result<()> {
        pages::wait_for(self, texts, timeout_ms)
    }

    /// Captures the page, one element or the full page (`pages.read`).
    pub fn screenshot(&self, options: &ScreenshotOptions) -> Result<Screenshot> {
        pages::take_screenshot(self, options)
    }

    /// The page's network requests since its last navigation, as data (`pages.read`);
    /// `include_preserved` adds those of the 3 navigations before.
    pub fn network_requests(&self, include_preserved: bool) -> Vec<NetworkRequest> {
        pages::network_requests(self, include_preserved)
    }

    /// The page's console messages since its last navigation, as data (`pages.read`).
    pub fn console_messages(&self, include_preserved: bool) -> Vec<ConsoleMessage> {
        pages::console_messages(self, include_preserved)
    }

    /// Whether a DevTools window is open for the page (`pages.read`).
    pub fn devtools_open(&self) -> bool {
        pages::devtools_open(self)
    }

    /// Opens a DevTools window for the page (`pages.manage`).
    pub fn open_devtools(&self) -> Result<()> {
        crate::__bindings::devtools::tool::pages_manage::open_devtools(self)
    }

    /// The id of the tab holding the page (`pages.read`).
    pub fn tab_id(&self) -> Result<String> {
        pages::tab_id(self)
    }

    /// Navigates and waits for the page to settle (`navigate`).
    pub fn navigate(&self, target: &Navigation, options: &NavigateOptions) -> Result<Navigated> {
        navigate::navigate(self, target, options)
    }

    /// Clicks an element by snapshot uid, `count` times (`input`).
    pub fn click(&self, uid: &str, count: u32) -> Result<()> {
        input::click(self, uid, count)
    }

    /// Clicks at viewport coordinates, `count` times (`input`).
    pub fn click_at(&self, x: f64, y: f64, count: u32) -> Result<()> {
        input::click_at(self, x, y, count)
    }

    /// Moves the mouse over an element (`input`).
    pub fn hover(&self, uid: &str) -> Result<()> {
        input::hover(self, uid)
    }

    /// Fills a field, picks an option or sets a checkbox (`input`).
    pub fn fill(&self, uid: &str, value: &str) -> Result<()> {
        input::fill(self, uid, value)
    }

    /// Types into the focused element, then presses `submit_key` if given (`input`).
    pub fn type_text(&self, text: &str, submit_key: Option<&str>) -> Result<()> {
        input::type_text(self, text, submit_key)
    }

    /// Presses a key or a combination such as `Control+Shift+R` (`input`).
    pub fn press_key(&self, key: &str) -> Result<()> {
        input::press_key(self, key)
    }

    /// Drags one element onto another (`input`).
    pub fn drag(&self, from_uid: &str, to_uid: &str) -> Result<()> {
        input::drag(self, from_uid, to_uid)
    }

    /// Accepts (with an optional prompt text) or dismisses the open dialog (`input`).
    pub fn handle_dialog(&self, accept: bool, prompt_text: Option<&str>) -> Result<()> {
        input::handle_dialog(self, accept, prompt_text)
    }

    /// Sets files on a file input (`files.read`).
    pub fn upload_files(&self, uid: &str, paths: &[String]) -> Result<()> {
        files_read::upload_files(self, uid, paths)
    }

    /// Evaluates an expression; the JSON text of its awaited result (`script`).
    pub fn evaluate_expression(&self, expression: &str) -> Result<String> {
        script::evaluate_expression(self, expression)
    }

    /// Evaluates a function declaration with snapshot uids as arguments; the JSON text of its
    /// awaited result (`script`).
    pub fn evaluate(
        &self,
        source: &str,
        args: &[String],
        options: &EvaluateOptions,
    ) -> Result<String> {
        script::evaluate(self, source, args, options)
    }

    /// Resizes the page's content area (`emulate`).
    pub fn resize(&self, width: u32, height: u32) -> Result<()> {
        emulation::resize(self, width, height)
    }

    /// Sets the page's whole emulation state (`emulate`).
    pub fn emulate(&self, settings: &Emulation) -> Result<()> {
        emulation::emulate(self, settings)
    }

    /// Starts a performance trace; the response lines (`performance`).
    pub fn start_trace(&self, options: &TraceOptions) -> Result<Vec<String>> {
        performance::start_trace(self, options)
    }

    /// Stops the trace and summarises it; the response lines (`performance`).
    pub fn stop_trace(&self, file_path: Option<&str>) -> Result<Vec<String>> {
        performance::stop_trace(self, file_path)
    }

    /// One insight of the last trace, as response lines (`performance`).
    pub fn analyze_insight(&self, insight_set_id: &str, insight_name: &str) -> Result<Vec<String>> {
        performance::analyze_insight(self, insight_set_id, insight_name)
    }

    /// The insight sets of the page's last trace as numbers: paints, layout shift, blocking
    /// time, long tasks (`performance`).
    pub fn insight_sets(&self) -> Vec<InsightSet> {
        performance::insight_sets(self)
    }

    /// Writes a heap snapshot of the page; the response lines (`memory`, `files.write`).
    pub fn take_heap_snapshot(&self, file_path: &str) -> Result<Vec<String>> {
        memory::take_snapshot(self, file_path)
    }
}

impl DialogAction {
    /// The reference's `dialogAction` text: `accept`, `dismiss`, or a prompt text to accept
    /// with.
    pub fn from_reference(text: &str) -> DialogAction {
        match text {
            "accept" => DialogAction::Accept,
            "dismiss" => DialogAction::Dismiss,
            text => DialogAction::AcceptWith(text.to_string()),
        }
    }
}

impl ScriptFormat {
    /// The reference's `format`: `script` for classic JavaScript, anything else a function.
    pub fn from_reference(text: Option<&str>) -> ScriptFormat {
        match text {
            Some("script") => ScriptFormat::Script,
            _ => ScriptFormat::Function,
        }
    }
}

impl crate::DialogKind {
    /// The reference's name of a dialog type (`alert`, `confirm`, `prompt`, `beforeunload`).
    pub fn name(self) -> &'static str {
        match self {
            crate::DialogKind::Alert => "alert",
            crate::DialogKind::Confirm => "confirm",
            crate::DialogKind::Prompt => "prompt",
            crate::DialogKind::Beforeunload => "beforeunload",
        }
    }
}
