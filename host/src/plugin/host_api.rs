//! The interfaces a tool imports, implemented over the session. These impls hold no logic
//! of their own: they forward to the session and its pages, and record response intents.

mod extensions;
mod interop;
mod lighthouse;
mod page_tools;
mod pages;
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
        }
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

    /// Navigation needs the capability and a granted URL.
    fn require_url(&self, url: &str, function: &'static str) -> wasmtime::Result<()> {
        self.grants
            .require_url(url, function)
            .map_err(wasmtime::Error::new)
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
                .build();
            (ctx, pipe)
        });
        WasiCtxView {
            ctx,
            table: &mut self.table,
        }
    }
}

/// A tool's timeout parameter; none (or 0) means the default.
fn timeout(milliseconds: Option<u32>) -> Option<Duration> {
    milliseconds
        .filter(|ms| *ms > 0)
        .map(|ms| Duration::from_millis(u64::from(ms)))
}
