//! The interfaces a tool imports, implemented over the session. These impls hold no logic
//! of their own: they forward to the session and its pages, and record response intents.

mod extensions;
mod heap;
mod interop;
mod lighthouse;
mod page_tools;
mod pages;
mod pwa;
mod response;
mod screencast;
mod styles;
mod vision;

use super::capability::{Capability, Grants};
use super::limits::{LimitExceeded, Limits, MemoryLimiter, OutputMeter};
use crate::browser::McpPage;
use crate::response::ResponseDraft;
use crate::session::SessionState;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OwnedMutexGuard;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// What a component built for WASI may print, per call, before its output is cut.
const WASI_OUTPUT_CAPACITY: usize = 64 << 10;

/// A `page` handle held by the guest: just the page id; the host owns the page.
pub struct PageHandle {
    pub id: u32,
}

/// The store data of one call.
pub struct CallState {
    pub table: ResourceTable,
    pub limiter: MemoryLimiter,
    /// The session, locked for this call. `None` while computing definitions.
    pub session: Option<OwnedMutexGuard<SessionState>>,
    pub response: ResponseDraft,
    /// Set when the wall-clock budget ran out (the epoch callback interrupts the guest).
    pub wall_clock_hit: bool,
    pub limits: Limits,
    grants: Arc<Grants>,
    output: OutputMeter,
    /// A WASI that grants nothing, made on first use (only components built for WASI use it).
    wasi: Option<(WasiCtx, MemoryOutputPipe)>,
    /// Init scripts installed for a navigation of this call, by page id: removed when the
    /// navigation ends and, whatever stopped the call, by [`CallState::clean_up`] after it.
    init_scripts: Vec<(u32, String)>,
    /// Images declared so far (attached or screenshots).
    images: usize,
}

impl CallState {
    pub fn new(
        session: Option<OwnedMutexGuard<SessionState>>,
        grants: Arc<Grants>,
        limits: Limits,
    ) -> CallState {
        CallState {
            table: ResourceTable::new(),
            limiter: MemoryLimiter::new(limits.memory_bytes),
            session,
            response: ResponseDraft::default(),
            wall_clock_hit: false,
            limits,
            grants,
            output: OutputMeter::default(),
            wasi: None,
            init_scripts: Vec::new(),
            images: 0,
        }
    }

    /// Undoes what the call set up in the browser and must not outlive it (init scripts).
    /// Runs after the guest returned, trapped or ran out of budget, from the host's side, so
    /// no guest code can skip it.
    pub async fn clean_up(&mut self) {
        let scripts = std::mem::take(&mut self.init_scripts);
        let Some(session) = self.session.as_deref_mut() else {
            return;
        };
        for (page_id, identifier) in scripts {
            if let Ok(page) = session.page_mut(page_id) {
                remove_init_script(page, &identifier).await;
            }
        }
    }

    /// Counts `bytes` of text (an error message) against the output budget.
    pub fn charge_text(&mut self, bytes: usize) -> Result<(), wasmtime::Error> {
        self.charge(bytes, 0)
    }

    /// What the guest wrote to its WASI stdout and stderr, if anything.
    pub fn wasi_output(&self) -> Option<String> {
        let (_, pipe) = self.wasi.as_ref()?;
        let bytes = pipe.contents();
        (!bytes.is_empty()).then(|| String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The capability check every host function makes first; a denial traps.
    fn require(&self, capability: Capability, function: &'static str) -> wasmtime::Result<()> {
        self.grants
            .require(capability, function)
            .map_err(wasmtime::Error::new)
    }

    /// Navigation needs the capability and a granted URL; returns the checked URL's
    /// serialization, the only string the browser gets.
    fn require_url(&self, url: &str, function: &'static str) -> wasmtime::Result<String> {
        self.grants
            .require_url(url, function)
            .map_err(wasmtime::Error::new)
    }

    /// With URL patterns, a page that anything in the call may have navigated (a redirect, a
    /// click, the page's own script) is checked where it landed; outside the patterns it is
    /// sent to about:blank and the call is stopped.
    async fn check_landed(&mut self, page_id: u32) -> wasmtime::Result<()> {
        if !self.grants.restricts_urls() {
            return Ok(());
        }
        let Some(page) = self
            .session
            .as_deref_mut()
            .and_then(|session| session.page_mut(page_id).ok())
        else {
            return Ok(());
        };
        let current = page.url().await;
        if let Err(denied) = self.grants.check_landed(&current) {
            let blank =
                crate::browser::cdp("Page.navigate", serde_json::json!({ "url": "about:blank" }));
            let _left = tokio::time::timeout(CLEANUP_TIMEOUT, page.page.execute(blank)).await;
            return Err(wasmtime::Error::new(denied));
        }
        Ok(())
    }

    /// Installs an init script on a page for this call (needs `script`: it runs arbitrary
    /// JavaScript in every new document).
    async fn add_init_script(
        &mut self,
        page_id: u32,
        source: &str,
        function: &'static str,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Script, function)?;
        let page = match self.session().and_then(|session| session.page_mut(page_id)) {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        };
        let command = crate::browser::cdp(
            "Page.addScriptToEvaluateOnNewDocument",
            serde_json::json!({ "source": source }),
        );
        let added = tokio::time::timeout(CLEANUP_TIMEOUT, page.page.execute(command)).await;
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
            self.init_scripts.push((page_id, identifier));
        }
        Ok(Ok(()))
    }

    /// Removes the init scripts of this call on `page_id` now (the navigation is over).
    async fn remove_init_scripts(&mut self, page_id: u32) {
        let (done, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.init_scripts)
            .into_iter()
            .partition(|(page, _)| *page == page_id);
        self.init_scripts = kept;
        if let Some(page) = self
            .session
            .as_deref_mut()
            .and_then(|session| session.page_mut(page_id).ok())
        {
            for (_, identifier) in done {
                remove_init_script(page, &identifier).await;
            }
        }
    }

    /// Writing a file the guest named needs `files.write`.
    fn require_file(&self, path: Option<&str>, function: &'static str) -> wasmtime::Result<()> {
        match path {
            Some(_) => self.require(Capability::FilesWrite, function),
            None => Ok(()),
        }
    }

    /// Counts declared output against the budget; over it, the call traps.
    fn charge(&mut self, bytes: usize, lines: usize) -> wasmtime::Result<()> {
        self.output
            .charge(&self.limits, bytes, lines)
            .map_err(|exceeded: LimitExceeded| wasmtime::Error::new(exceeded))
    }

    fn session(&mut self) -> Result<&mut SessionState, String> {
        self.session.as_deref_mut().ok_or_else(|| {
            "Pages are not available while a tool computes its definition.".to_string()
        })
    }

    fn page_id(&self, handle: &Resource<PageHandle>) -> wasmtime::Result<u32> {
        Ok(self.table.get(handle)?.id)
    }

    /// The page behind a guest handle; the inner error is the tool-level message.
    fn page(
        &mut self,
        handle: &Resource<PageHandle>,
    ) -> wasmtime::Result<Result<&mut McpPage, String>> {
        let id = self.page_id(handle)?;
        Ok(self.session().and_then(|session| session.page_mut(id)))
    }

    /// Records a navigation an action caused, for `Page navigated to <url>.`.
    fn navigated(&mut self, url: Option<String>) {
        if url.is_some() {
            self.response.navigated_to = url;
        }
    }
}

/// Components built for `wasm32-wasip2` import WASI even when they do not use it. They get a
/// WASI that grants nothing: no preopened folders, no environment, no arguments, no sockets,
/// stdin closed; stdout and stderr are captured (bounded) for the server's log.
impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let (ctx, _) = self.wasi.get_or_insert_with(|| {
            let pipe = MemoryOutputPipe::new(WASI_OUTPUT_CAPACITY);
            let ctx = WasiCtx::builder()
                .stdout(pipe.clone())
                .stderr(pipe.clone())
                .allow_tcp(false)
                .allow_udp(false)
                .allow_ip_name_lookup(false)
                .wall_clock(FrozenClock)
                .monotonic_clock(FrozenClock)
                .build();
            (ctx, pipe)
        });
        WasiCtxView {
            ctx,
            table: &mut self.table,
        }
    }
}

/// How long host clean-up (removing an init script, leaving a refused page) may take.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(2);

async fn remove_init_script(page: &McpPage, identifier: &str) {
    let command = crate::browser::cdp(
        "Page.removeScriptToEvaluateOnNewDocument",
        serde_json::json!({ "identifier": identifier }),
    );
    match tokio::time::timeout(CLEANUP_TIMEOUT, page.page.execute(command)).await {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => tracing::warn!(%error, "could not remove a plugin's init script"),
        Err(_) => tracing::warn!("removing a plugin's init script timed out"),
    }
}

/// WASI clocks that tell nothing: the wall clock always reads the Unix epoch and the
/// monotonic clock always reads 0. The WIT promises tools no clocks; a plugin cannot time
/// the host or other tenants' work through them. (A WASI sleep still waits, within the
/// call's wall-clock budget.)
struct FrozenClock;

impl wasmtime_wasi::HostWallClock for FrozenClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl wasmtime_wasi::HostMonotonicClock for FrozenClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// A tool's timeout parameter; none (or 0) means the default.
fn timeout(milliseconds: Option<u32>) -> Option<Duration> {
    milliseconds
        .filter(|ms| *ms > 0)
        .map(|ms| Duration::from_millis(u64::from(ms)))
}
