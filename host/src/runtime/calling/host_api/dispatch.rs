//! The one gate every host function passes through. A function's body gets a [`Call`], the
//! only way to reach the session, the browser or a file; [`CallState::dispatch`] makes one
//! after checking the function's declared capabilities, and after the body it applies the
//! function's marks: the landing check of every page it reached or opened, and the end of
//! long-lived effects it started. At the end of the call, [`CallState::clean_up`] undoes what
//! must not outlive it. Nothing here is the body's choice, so a new host function is checked
//! like the old ones.
//!
//! The page scope (a plugin under URL patterns): a body reaches a page only through
//! [`Call::page_id`] (and [`Call::page`], [`Call::page_and_sandbox`], [`Call::page_by_id`],
//! which use it), and that resolution checks where the page stands now, asked of the browser,
//! before the body gets it; the dispatcher checks it again after the body. The call's own page
//! is checked before the handler runs ([`CallState::begin`]) and at its end. Only pages this
//! call reached, opened or was given are judged (attribution by cause), never the session's
//! other pages, which other calls may be moving meanwhile (`--experimentalParallelPages`).

use super::function::{HostFunction, Marks};
use super::provenance::Strings;
use super::{CLEANUP_TIMEOUT, FrozenClock, PageHandle, WASI_OUTPUT_CAPACITY};
use crate::browser::McpPage;
use crate::browser::features::call_timers::TimerMark;
use crate::browser::features::long_lived::{self, LongLived};
use crate::policy::capability::{Capability, Denied, Grants};
use crate::policy::limits::{Limits, MAX_IMAGES};
use crate::response::ResponseDraft;
use crate::runtime::calling::limits::{LimitExceeded, MemoryLimiter, OutputMeter};
use crate::sandbox::{FileKind, Sandbox};
use crate::session::SessionState;
use std::sync::Arc;
use tokio::sync::OwnedMutexGuard;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

mod page_code;
mod page_scope;

/// How many dispatched functions a call remembers (a guest may call millions of cheap ones).
const MAX_RECORDED: usize = 1024;

/// The store data of one call.
pub struct CallState {
    pub table: ResourceTable,
    /// The tool's source map (a TypeScript tool's build carries one): its crash report's
    /// stack is told in the author's source.
    pub source_map: Option<Arc<crate::source_map::SourceMap>>,
    pub limiter: MemoryLimiter,
    /// Set when the wall-clock budget ran out (the epoch callback interrupts the guest).
    pub wall_clock_hit: bool,
    pub limits: Limits,
    /// The intents declared so far; the pipeline assembles the answer from them.
    pub response: ResponseDraft,
    /// The session, locked for this call; reachable only through a [`Call`]. `None` while
    /// computing definitions.
    session: Option<OwnedMutexGuard<SessionState>>,
    grants: Arc<Grants>,
    output: OutputMeter,
    /// A WASI that grants nothing, made on first use (only components built for WASI use it),
    /// with what the guest wrote to its stdout and to its stderr.
    wasi: Option<(WasiCtx, MemoryOutputPipe, MemoryOutputPipe)>,
    /// The panic the Rust SDK's hook reported (its message and location), for the crash report.
    guest_panic: Option<String>,
    /// Init scripts installed for a navigation of this call, by page id: removed when the
    /// navigation ends and, whatever stopped the call, by [`CallState::clean_up`] after it.
    init_scripts: Vec<(u32, String)>,
    /// Effects started by this call that end with it (no `long-lived` grant), by page id.
    long_lived: Vec<(u32, LongLived)>,
    /// Where the timers of each page stood before this call first ran page code on it (no
    /// `long-lived` grant): the ones set since are cleared when the call ends.
    timer_marks: Vec<(u32, TimerMark)>,
    /// The session's pages before the call's first function that runs page code (no
    /// `long-lived` grant): a page that appeared since and is the call's had all of its page
    /// code started by the call.
    pages_before_page_code: Option<Vec<u32>>,
    /// Every page a function of this call handed to the guest.
    handed_in_call: Vec<u32>,
    /// The pages this call reached, opened or was given, each with where it stood when last
    /// checked (under URL patterns): the only pages its checks judge.
    touched: Vec<(u32, String)>,
    /// The pages the function running now reached through its [`Call`].
    reached: Vec<u32>,
    /// The pages the function running now handed to the guest (one it opened, found or chose).
    handed: Vec<u32>,
    /// Images declared so far (attached or screenshots).
    images: usize,
    /// The first functions dispatched in this call, in order (for tests and the debug log).
    dispatched: Vec<&'static str>,
    /// `--experimentalParallelPages`: waits release the session ([`Call::unlocked`]).
    parallel_pages: bool,
    /// `--experimentalFencePageContent`: what page-content functions answer is recorded, so
    /// the answer fences it wherever the plugin prints it (without the flag, no work is done).
    records_page_text: bool,
    /// The session a wait released, until the call takes it back: a call stopped in the middle
    /// of the wait takes it back in [`CallState::clean_up`].
    released: Option<Arc<tokio::sync::Mutex<SessionState>>>,
}

impl CallState {
    pub fn new(
        session: Option<OwnedMutexGuard<SessionState>>,
        grants: Arc<Grants>,
        limits: Limits,
    ) -> CallState {
        CallState {
            table: ResourceTable::new(),
            source_map: None,
            limiter: MemoryLimiter::new(limits.memory_bytes),
            wall_clock_hit: false,
            limits,
            response: ResponseDraft::default(),
            session,
            grants,
            output: OutputMeter::default(),
            wasi: None,
            guest_panic: None,
            init_scripts: Vec::new(),
            long_lived: Vec::new(),
            timer_marks: Vec::new(),
            pages_before_page_code: None,
            handed_in_call: Vec::new(),
            touched: Vec::new(),
            reached: Vec::new(),
            handed: Vec::new(),
            images: 0,
            dispatched: Vec::new(),
            parallel_pages: false,
            records_page_text: false,
            released: None,
        }
    }

    /// Runs `body` as `function`: its capabilities first (a denial traps), then the body, then
    /// what its marks require. The body's errors are its own; the dispatcher adds a trap only
    /// for a page outside the URL patterns: one the body reached (checked before it gets the
    /// page, and where it stands after) or one a navigating function opened. Every string of
    /// the answer of a function marked `PAGE_CONTENT` is recorded as page-written, and every
    /// function's error.
    pub(super) async fn dispatch<R: Strings>(
        &mut self,
        function: &'static HostFunction,
        body: impl AsyncFnOnce(&mut Call<'_>) -> wasmtime::Result<R>,
    ) -> wasmtime::Result<R> {
        if self.dispatched.len() < MAX_RECORDED {
            self.dispatched.push(function.name);
        }
        // What a client following the call's progress hears it is doing.
        crate::activity::set(|| format!("{}.{}", function.interface, function.name));
        for capability in function.needs() {
            self.grants
                .require(capability, function.name)
                .map_err(wasmtime::Error::new)?;
        }
        let scoped = self.grants.restricts_urls();
        // A navigating function may open pages (popups, apps): they are new after it.
        let pages_before = match scoped && function.marks.has(Marks::NAVIGATES) {
            true => self.session.as_deref().map(SessionState::page_ids),
            false => None,
        };
        self.reached.clear();
        self.handed.clear();
        if self.pages_before_page_code.is_none()
            && function.marks.has(Marks::NAVIGATES)
            && !self.grants.grants(Capability::LongLived)
        {
            self.pages_before_page_code = self.session.as_deref().map(SessionState::page_ids);
        }
        let effects_before = match function.marks.has(Marks::LONG_LIVED) {
            true if !self.grants.grants(Capability::LongLived) => Some(self.long_lived_effects()),
            _ => None,
        };
        let outcome = body(&mut Call {
            state: self,
            function,
        })
        .await;
        if let Ok(answer) = &outcome
            && self.records_page_text
        {
            let written = &mut self.response.page_written;
            match function.marks.has(Marks::PAGE_CONTENT) {
                true => answer.each_string(&mut |text| written.record(text)),
                false => answer.each_error_string(&mut |text| written.record(text)),
            }
        }
        if let Some(before) = effects_before {
            let started: Vec<(u32, LongLived)> = self
                .long_lived_effects()
                .into_iter()
                .filter(|effect| !before.contains(effect))
                .collect();
            self.long_lived.extend(started);
        }
        if scoped {
            let mut judged = std::mem::take(&mut self.reached);
            if let Some(before) = pages_before {
                let opened = self.opened_since(&before, &judged).await;
                judged.extend(opened);
            }
            self.check_landed(&judged)
                .await
                .map_err(wasmtime::Error::new)?;
        }
        outcome
    }

    /// Before the handler runs: the call's page must stand inside the plugin's URL patterns
    /// (a meta refresh or a timer may have moved it since the plugin's last call), and it is
    /// judged again at the end of the call. Nothing of a page outside them is read, and it is
    /// left where it is (the move may be the client's own).
    pub async fn begin(&mut self, page: Option<u32>) -> Result<(), Denied> {
        match page {
            Some(id) if self.grants.restricts_urls() => self.check_scope(id).await,
            _ => Ok(()),
        }
    }

    /// Undoes what the call set up in the browser and must not outlive it: page code a plugin
    /// without `long-lived` started (timers, workers, see `page_code`), init scripts, effects
    /// it started, and (under URL patterns) any page the call
    /// touched that now stands outside them, even moved late. Runs after the guest returned,
    /// trapped or ran out of budget, from the host's side, so no guest code can skip it.
    pub async fn clean_up(&mut self) -> Result<(), Denied> {
        if let Some(session) = self.released.take() {
            self.session = Some(session.lock_owned().await);
        }
        // First, so no timer or worker of the call's acts between the checks below and its end.
        self.end_page_code().await;
        let scripts = std::mem::take(&mut self.init_scripts);
        let effects = std::mem::take(&mut self.long_lived);
        let touched: Vec<u32> = self.touched.iter().map(|(id, _)| *id).collect();
        if let Some(session) = self.session.as_deref_mut() {
            for (page_id, identifier) in scripts {
                if let Ok(page) = session.page_mut(page_id) {
                    remove_init_script(page, &identifier).await;
                }
            }
            for (page_id, effect) in effects {
                if let Ok(page) = session.page_mut(page_id) {
                    long_lived::end(page, effect).await;
                    self.response.lines.push(format!(
                        "The {} this tool started was stopped when its call ended (its policy does not grant `long-lived`).",
                        effect.name()
                    ));
                }
            }
        }
        match self.grants.restricts_urls() {
            true => self.check_landed(&touched).await,
            false => Ok(()),
        }
    }

    /// `--experimentalParallelPages`: the page's lane is held by the pipeline, so a wait may
    /// release the session for calls on other pages.
    pub fn allow_parallel_pages(&mut self) {
        self.parallel_pages = true;
    }

    /// `--experimentalFencePageContent`: record the page-written strings functions answer.
    pub fn fence_page_content(&mut self) {
        self.records_page_text = true;
    }

    /// The session back from the call (it ended), for the response assembly.
    pub fn take_session(&mut self) -> Option<OwnedMutexGuard<SessionState>> {
        self.session.take()
    }

    /// The session, read-only, for what the pipeline does after a call was stopped.
    pub fn session(&self) -> Option<&SessionState> {
        self.session.as_deref()
    }

    /// The host functions this call went through, in order.
    pub fn dispatched(&self) -> &[&'static str] {
        &self.dispatched
    }

    /// Counts `bytes` of text (an error message, a rendered answer) against the output budget.
    pub fn charge_text(&mut self, bytes: usize) -> Result<(), wasmtime::Error> {
        self.charge(bytes, 0)
    }

    /// What the guest wrote to its WASI stdout and stderr, if anything.
    pub fn wasi_output(&self) -> Option<String> {
        let (_, stdout, stderr) = self.wasi.as_ref()?;
        let mut bytes = stdout.contents().to_vec();
        bytes.extend_from_slice(&stderr.contents());
        (!bytes.is_empty()).then(|| String::from_utf8_lossy(&bytes).into_owned())
    }

    /// What the guest's code said as it crashed: the panic the SDK reported and the last of
    /// its stderr, trimmed to the author's frames (`runtime::guest_report`).
    pub fn crash_report(&self) -> Option<String> {
        let stderr = self
            .wasi
            .as_ref()
            .map(|(_, _, stderr)| String::from_utf8_lossy(&stderr.contents()).into_owned())
            .unwrap_or_default();
        let report = crate::runtime::calling::guest_report::crash_report(
            self.guest_panic.as_deref(),
            &stderr,
        )?;
        Some(match &self.source_map {
            Some(map) => map.rewrite_frames(&report),
            None => report,
        })
    }

    /// Keeps the panic the SDK's hook reported (the first: a panic in the hook aborts).
    pub fn report_panic(&mut self, text: &str) {
        self.guest_panic.get_or_insert_with(|| text.to_string());
    }

    fn charge(&mut self, bytes: usize, lines: usize) -> wasmtime::Result<()> {
        self.output
            .charge(&self.limits, bytes, lines)
            .map_err(|exceeded: LimitExceeded| wasmtime::Error::new(exceeded))
    }

    fn long_lived_effects(&self) -> Vec<(u32, LongLived)> {
        let Some(session) = self.session.as_deref() else {
            return Vec::new();
        };
        session
            .page_ids()
            .into_iter()
            .filter_map(|id| session.page(id).ok())
            .flat_map(|page| {
                long_lived::running(page)
                    .into_iter()
                    .map(move |effect| (page.id, effect))
            })
            .collect()
    }
}

/// What a host function's body may touch, for the one function it was dispatched as.
pub struct Call<'a> {
    state: &'a mut CallState,
    function: &'static HostFunction,
}

impl Call<'_> {
    /// Awaits `wait` (which holds nothing of the session) with the session released when
    /// pages run in parallel, so calls on other pages go on meanwhile; the session is taken
    /// again, in turn, before this returns. Page handles stay valid: they are ids, looked up
    /// again on use.
    ///
    /// A plugin held to URL patterns keeps the session: no other call acts on the pages it
    /// reached between its checks (its checks judge only those pages).
    pub async fn unlocked<T>(&mut self, wait: impl std::future::Future<Output = T>) -> T {
        if !self.state.parallel_pages || self.state.grants.restricts_urls() {
            return wait.await;
        }
        let Some(guard) = self.state.session.take() else {
            return wait.await;
        };
        let session = OwnedMutexGuard::mutex(&guard).clone();
        self.state.released = Some(session.clone());
        drop(guard);
        let answer = wait.await;
        self.state.session = Some(session.lock_owned().await);
        self.state.released = None;
        answer
    }

    /// The call's wall-clock budget: the longest an engine job it starts may run.
    pub fn wall_clock(&self) -> std::time::Duration {
        self.state.limits.wall_clock
    }

    /// The session, or the message for a guest calling while it computes its definition.
    pub fn session(&mut self) -> Result<&mut SessionState, String> {
        self.state.session.as_deref_mut().ok_or_else(|| {
            "Pages are not available while a tool computes its definition.".to_string()
        })
    }

    /// A capability this call needs for its arguments (a path given, an init script): it must
    /// be one the function declares it may need, so the declarations stay the whole truth.
    pub fn require(&self, capability: Capability) -> wasmtime::Result<()> {
        if !self.function.may_use(capability) {
            return Err(wasmtime::Error::new(Denied::Internal(format!(
                "{} used the capability `{capability}` without declaring it",
                self.function.name
            ))));
        }
        self.state
            .grants
            .require(capability, self.function.name)
            .map_err(wasmtime::Error::new)
    }

    /// Navigation to a URL: `navigate`, the URL patterns and (for `javascript:`/`data:`)
    /// `script`. Returns the checked URL's serialization, the only string the browser gets.
    pub fn require_url(&self, url: &str) -> wasmtime::Result<String> {
        if !self.function.may_use(Capability::Navigate) {
            return Err(wasmtime::Error::new(Denied::Internal(format!(
                "{} opened a URL without declaring `navigate`",
                self.function.name
            ))));
        }
        let needs_script = crate::policy::plugin_urls::parse_target(url)
            .is_ok_and(|parsed| crate::policy::plugin_urls::runs_script(&parsed));
        if needs_script {
            self.require(Capability::Script)?;
        }
        self.state
            .grants
            .require_url(url, self.function.name)
            .map_err(wasmtime::Error::new)
    }

    /// The page a guest handle names, the only way a body resolves one: the function must be
    /// marked [`Marks::ON_PAGE`], and under URL patterns the page must stand inside them now
    /// (else the call traps, nothing of the page read).
    pub async fn page_id(&mut self, handle: &Resource<PageHandle>) -> wasmtime::Result<u32> {
        let id = self.state.table.get(handle)?.id;
        self.page_by_id(id).await
    }

    /// A page a function names by id (`get`, `select`, `close`): checked as a handle is. The
    /// id comes back for the body to use.
    pub async fn page_by_id(&mut self, id: u32) -> wasmtime::Result<u32> {
        if !self.function.marks.has(Marks::ON_PAGE) {
            return Err(wasmtime::Error::new(Denied::Internal(format!(
                "{} reached a page without being marked as acting on one",
                self.function.name
            ))));
        }
        if self.state.reached.contains(&id) {
            return Ok(id);
        }
        if self.state.grants.restricts_urls() {
            self.state
                .check_scope(id)
                .await
                .map_err(wasmtime::Error::new)?;
        }
        self.mark_timers(id).await;
        // Only a page found inside the patterns is the function's to be judged after it: a
        // refused one is left where it is.
        self.state.reached.push(id);
        Ok(id)
    }

    /// The page behind a guest handle; the inner error is the tool-level message.
    pub async fn page(
        &mut self,
        handle: &Resource<PageHandle>,
    ) -> wasmtime::Result<Result<&mut McpPage, String>> {
        let id = self.page_id(handle).await?;
        Ok(self.session().and_then(|session| session.page_mut(id)))
    }

    /// A new guest handle for page `id`.
    pub fn handle(&mut self, id: u32) -> wasmtime::Result<Resource<PageHandle>> {
        self.state.handed.push(id);
        if !self.state.handed_in_call.contains(&id) {
            self.state.handed_in_call.push(id);
        }
        Ok(self.state.table.push(PageHandle { id })?)
    }

    pub fn drop_handle(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<()> {
        self.state.table.delete(handle)?;
        Ok(())
    }

    /// Whether the call is a built-in tool's under its default grants.
    pub fn trusted(&self) -> bool {
        self.state.grants.is_builtin()
    }

    /// Keeps the panic the guest's SDK reported, for the crash report.
    pub fn report_panic(&mut self, text: &str) {
        self.state.report_panic(text);
    }

    pub fn response(&mut self) -> &mut ResponseDraft {
        &mut self.state.response
    }

    /// Whether this is a `definition()` evaluation (no session) rather than a call.
    pub fn defining(&self) -> bool {
        self.state.session.is_none() && self.state.released.is_none()
    }

    /// Counts declared output against the budget; over it, the call traps.
    pub fn charge(&mut self, bytes: usize, lines: usize) -> wasmtime::Result<()> {
        self.state.charge(bytes, lines)
    }

    /// Counts an image (and its MIME type) against the output budget.
    pub fn charge_image(&mut self, data: &[u8], mime_type: &str) -> wasmtime::Result<()> {
        self.state.images += 1;
        if self.state.images > MAX_IMAGES {
            return Err(wasmtime::Error::new(LimitExceeded::Images {
                limit: MAX_IMAGES,
            }));
        }
        self.charge(data.len().saturating_add(mime_type.len()), 0)
    }

    /// Records a navigation an action caused, for `Page navigated to <url>.`.
    pub fn navigated(&mut self, url: Option<String>) {
        if url.is_some() {
            self.state.response.navigated_to = url;
        }
    }

    /// Writes through the file gateway: only functions marked as writing, with `files.write`,
    /// to a path checked again here (a plugin may pass any string), as one of the file kinds
    /// the host writes.
    pub fn write_file(
        &mut self,
        path: &str,
        kind: FileKind,
        data: &[u8],
    ) -> wasmtime::Result<Result<String, String>> {
        self.require_marked(Marks::WRITES)?;
        self.require(Capability::FilesWrite)?;
        Ok(self.session().and_then(|session| {
            session
                .sandbox
                .save(path, kind, data)
                .map_err(|error| error.to_string())
        }))
    }

    /// The sandbox, for functions marked as reading or writing files (the gateway's only
    /// ways in are its `open_*`, `save` and `write` methods).
    pub fn sandbox(&mut self) -> wasmtime::Result<Result<&Sandbox, String>> {
        if !self.function.marks.has(Marks::READS) {
            self.require_marked(Marks::WRITES)?;
        }
        Ok(self.session().map(|session| &session.sandbox))
    }

    /// A page and the sandbox together, for actions that write files.
    pub async fn page_and_sandbox(
        &mut self,
        handle: &Resource<PageHandle>,
    ) -> wasmtime::Result<Result<(&mut McpPage, &Sandbox), String>> {
        self.require_marked(Marks::WRITES)?;
        let id = self.page_id(handle).await?;
        Ok(self
            .session()
            .and_then(|session| session.page_and_sandbox(id)))
    }

    fn require_marked(&self, mark: Marks) -> wasmtime::Result<()> {
        if self.function.marks.has(mark) {
            return Ok(());
        }
        Err(wasmtime::Error::new(Denied::Internal(format!(
            "{} reached the file gateway without being marked as {}",
            self.function.name,
            mark.names().join(", ")
        ))))
    }

    /// Installs an init script on a page for this call (needs `script`: it runs arbitrary
    /// JavaScript in every new document). Removed when the navigation ends or the call does.
    pub async fn add_init_script(
        &mut self,
        page_id: u32,
        source: &str,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Script)?;
        let page = match self.session().and_then(|session| session.page_mut(page_id)) {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        };
        let command = crate::browser::cdp(
            "Page.addScriptToEvaluateOnNewDocument",
            serde_json::json!({ "source": source }),
        );
        let added = tokio::time::timeout(CLEANUP_TIMEOUT, page.cdp().execute(command)).await;
        let identifier = match added {
            Ok(Ok(response)) => response.result["identifier"].as_str().map(String::from),
            Ok(Err(error)) => return Ok(Err(format!("The init script was refused: {error}"))),
            Err(_) => {
                return Ok(Err(
                    "The browser did not accept the init script in time.".into()
                ));
            }
        };
        if let Some(identifier) = identifier {
            self.state.init_scripts.push((page_id, identifier));
        }
        Ok(Ok(()))
    }

    /// Removes the init scripts of this call on `page_id` now (the navigation is over).
    pub async fn remove_init_scripts(&mut self, page_id: u32) {
        let (done, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.state.init_scripts)
            .into_iter()
            .partition(|(page, _)| *page == page_id);
        self.state.init_scripts = kept;
        if let Ok(page) = self.session().and_then(|session| session.page_mut(page_id)) {
            for (_, identifier) in done {
                remove_init_script(page, &identifier).await;
            }
        }
    }
}

/// Components built for `wasm32-wasip2` import WASI even when they do not use it. They get a
/// WASI that grants nothing: no preopened folders, no environment, no arguments, no sockets,
/// stdin closed; stdout and stderr are captured (bounded) for the server's log.
impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let (ctx, _, _) = self.wasi.get_or_insert_with(|| {
            let stdout = MemoryOutputPipe::new(WASI_OUTPUT_CAPACITY);
            let stderr = MemoryOutputPipe::new(WASI_OUTPUT_CAPACITY);
            let ctx = WasiCtx::builder()
                .stdout(stdout.clone())
                .stderr(stderr.clone())
                .allow_tcp(false)
                .allow_udp(false)
                .allow_ip_name_lookup(false)
                .wall_clock(FrozenClock)
                .monotonic_clock(FrozenClock)
                .build();
            (ctx, stdout, stderr)
        });
        WasiCtxView {
            ctx,
            table: &mut self.table,
        }
    }
}

async fn remove_init_script(page: &McpPage, identifier: &str) {
    let command = crate::browser::cdp(
        "Page.removeScriptToEvaluateOnNewDocument",
        serde_json::json!({ "identifier": identifier }),
    );
    match tokio::time::timeout(CLEANUP_TIMEOUT, page.cdp().execute(command)).await {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => tracing::warn!(%error, "could not remove a plugin's init script"),
        Err(_) => tracing::warn!("removing a plugin's init script timed out"),
    }
}

#[cfg(test)]
mod tests;
