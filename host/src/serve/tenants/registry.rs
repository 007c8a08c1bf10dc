//! The tenants at run time: the current tenants file, and for each tenant in use its session
//! (its own lock, pages, page ids, collectors, dialogs and sandbox) in the shared browser or a
//! browser of its own. Idle tenants are closed; a reloaded file revokes tokens at once.

use super::checks::TenantChecks;
use super::{BrowserMode, Tenant, TenantTable, TenantsError};
use crate::browser::features::downloads::Downloads;
use crate::browser::{BrowserOptions, SharedBrowser};
use crate::net::{EgressPolicy, EgressProxy, PROXY_BYPASS_LIST, TenantNetwork};
use crate::sandbox::Sandbox;
use crate::session::Session;
use crate::session::saved::{Owner, SessionStore};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

mod discard;

/// A tenant's window (`--window-size`) when the operator gives no `--viewport`: Playwright
/// MCP's default viewport size.
/// Headless Chromium sizes a window to the 4K screen 1.11.0 emulates (1905x2140), and the GPU
/// process keeps each window's surfaces: about 16 MiB per tenant at that size, 4 MiB at this
/// one (BENCHMARKS.md, "What an idle agent costs").
pub const TENANT_VIEWPORT: (u32, u32) = (1280, 720);

/// WebRTC's UDP does not go through a proxy: only proxied traffic, or none.
const WEBRTC_PROXIED_ONLY: &str = "--force-webrtc-ip-handling-policy=disable_non_proxied_udp";

/// Time given to each tenant's browser context (or own browser) to close.
const CLOSE_BUDGET: Duration = Duration::from_secs(2);

/// One tenant in use.
pub struct TenantRuntime {
    pub name: String,
    /// Where its files and its lease (see [`super::lease`]) live.
    sandbox_root: std::path::PathBuf,
    pub session: Session,
    /// Where every request of the tenant's browser contexts goes through.
    pub proxy: EgressProxy,
    /// Cancelled when the tenant is revoked, removed or changed by a reload: its running calls
    /// stop at once.
    pub revoked: CancellationToken,
    /// The tenant's [`Tenant::revision`] it was made with.
    revision: u64,
    /// Calls waiting for or holding the tenant's lock.
    queued: AtomicUsize,
    last_used: Mutex<Instant>,
}

impl TenantRuntime {
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }
}

/// A token bucket of one tenant's requests per minute.
struct RateWindow {
    tokens: f64,
    refilled: Instant,
}

/// A call's hold on its tenant: counted in the queue depth, and keeping the tenant from being
/// closed as idle, until dropped.
pub struct CallTicket {
    pub runtime: Arc<TenantRuntime>,
}

impl Drop for CallTicket {
    fn drop(&mut self) {
        if let Ok(mut last_used) = self.runtime.last_used.lock() {
            *last_used = Instant::now();
        }
        self.runtime.queued.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An open MCP session counted against its tenant's `max_sessions`, until dropped. The count
/// lives apart from the tenant's runtime, so closing an idle tenant does not forget sessions
/// that are still open.
pub struct SessionSlot {
    pub tenant: String,
    open: Arc<AtomicUsize>,
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::SeqCst);
    }
}

pub struct Registry {
    path: PathBuf,
    /// What the file is checked against, at start and at every reload alike.
    checks: TenantChecks,
    table: RwLock<Arc<TenantTable>>,
    runtimes: Mutex<HashMap<String, Arc<TenantRuntime>>>,
    /// Open MCP sessions per tenant name.
    sessions: Mutex<HashMap<String, Arc<AtomicUsize>>>,
    shared: Arc<SharedBrowser>,
    /// The proxy of the shared browser's own default context, where no tenant works: it
    /// refuses everything (a page opened there by any means reaches nothing).
    _nowhere: Option<EgressProxy>,
    rates: Mutex<HashMap<String, RateWindow>>,
    /// For tenants with a browser of their own: the server's flags, always with a throwaway
    /// profile (several browsers cannot share one).
    dedicated: BrowserOptions,
    idle_timeout: Duration,
    /// Tenants held at once (`--max-tenants`); `None`: no limit.
    max_tenants: Option<usize>,
    /// `--discard-idle-secs`: an idle tenant's pages are closed after this (see `discard`).
    discard_after: Option<Duration>,
    /// `--sessionStore`: each tenant saves and restores named sessions in a folder of its own.
    session_store: Option<Arc<SessionStore>>,
}

/// Why a tenant has no runtime here.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(
        "This server instance is full: it holds {max} tenants (its --max-tenants). Retry in a few seconds; behind a load balancer another instance takes the tenant."
    )]
    Full { max: usize },
    #[error("{0}")]
    Unusable(String),
}

impl Registry {
    /// Reads the tenants file at `path` through `checks` (as every reload does) and holds its
    /// tenants, each served by `options`' browser (shared) or its own.
    pub fn open(
        path: PathBuf,
        checks: TenantChecks,
        options: BrowserOptions,
        idle_timeout: Duration,
    ) -> Result<Registry, TenantsError> {
        let table = checks.load(&path)?;
        Ok(Registry::with_table(
            path,
            checks,
            table,
            options,
            idle_timeout,
        ))
    }

    fn with_table(
        path: PathBuf,
        checks: TenantChecks,
        table: TenantTable,
        options: BrowserOptions,
        idle_timeout: Duration,
    ) -> Registry {
        let mut options = options;
        options.chrome_args.push(WEBRTC_PROXIED_ONLY.to_string());
        options.block_popups = true;
        if options.viewport.is_none() {
            options.viewport = Some(TENANT_VIEWPORT);
        }
        // Never the loopback listener: a tenant's live views are served on its own endpoint,
        // for the tenants that opted in (`http::live_view`).
        options.human_in_the_loop = false;
        let mut dedicated = options.clone();
        if dedicated.browser_url.is_none() && dedicated.ws_endpoint.is_none() {
            dedicated.isolated = true;
            dedicated.user_data_dir = None;
        }
        if options.proxy_server.is_some() {
            tracing::warn!(
                "--proxyServer does not apply to tenants: each tenant's browser context goes through its own egress proxy"
            );
        }
        let nowhere = match EgressProxy::start(EgressPolicy::nothing()) {
            Ok(proxy) => {
                options.proxy_server = Some(proxy.proxy_server());
                options
                    .chrome_args
                    .push(format!("--proxy-bypass-list={PROXY_BYPASS_LIST}"));
                Some(proxy)
            }
            Err(error) => {
                tracing::warn!(%error, "cannot start the shared browser's refuse-all proxy");
                None
            }
        };
        Registry {
            path,
            checks,
            table: RwLock::new(Arc::new(table)),
            runtimes: Mutex::new(HashMap::new()),
            sessions: Mutex::new(HashMap::new()),
            shared: Arc::new(SharedBrowser::new(options)),
            _nowhere: nowhere,
            rates: Mutex::new(HashMap::new()),
            dedicated,
            idle_timeout,
            max_tenants: None,
            discard_after: None,
            session_store: None,
        }
    }

    /// Named sessions for the tenants (those whose `flags` do not switch `sessionStore` off).
    pub fn with_session_store(mut self, store: Option<Arc<SessionStore>>) -> Registry {
        self.session_store = store;
        self
    }

    /// Caps the tenants this instance holds at once.
    pub fn with_max_tenants(mut self, max: Option<usize>) -> Registry {
        self.max_tenants = max;
        self
    }

    pub fn with_discard_idle(mut self, after: Option<Duration>) -> Registry {
        self.discard_after = after;
        self
    }

    /// Whether a tenant not yet here would be refused.
    pub fn is_full(&self) -> bool {
        let held = self.runtimes.lock().map_or(0, |runtimes| runtimes.len());
        self.max_tenants.is_some_and(|max| held >= max)
    }

    /// Takes `tenant` in (its runtime made now if it has none), unless the instance is full:
    /// a request of a new tenant is refused here, before it opens an MCP session a full
    /// instance could not serve.
    pub fn reserve(&self, tenant: &Tenant) -> Result<(), RuntimeError> {
        self.runtime(tenant, false).map(drop)
    }

    fn table(&self) -> Arc<TenantTable> {
        match self.table.read() {
            Ok(table) => table.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The tenant of a bearer token, per the file as last read.
    pub fn authenticate(&self, token: &str) -> Option<Arc<Tenant>> {
        self.table().authenticate(token)
    }

    /// Whether `token` may read `/metrics`; `None` when the file sets no metrics token.
    pub fn authenticate_metrics(&self, token: &str) -> Option<bool> {
        self.table().authenticate_metrics(token)
    }

    /// The tenant named `name` in the file as last read, unless revoked.
    pub fn tenant(&self, name: &str) -> Option<Arc<Tenant>> {
        self.table().get(name).filter(|tenant| !tenant.revoked)
    }

    /// Whether a tenant of the file as last read has an output budget (`max_output_tokens`).
    pub fn any_output_budget(&self) -> bool {
        self.table().any_output_budget()
    }

    /// The running session of tenant `name`, if it has one.
    pub fn running(&self, name: &str) -> Option<Arc<TenantRuntime>> {
        self.runtimes
            .lock()
            .ok()
            .and_then(|runtimes| runtimes.get(name).cloned())
    }

    /// The tenants file's `[oauth]` section, as last read.
    pub fn oauth(&self) -> Option<Arc<crate::serve::tenants::oauth::OAuthConfig>> {
        self.table().oauth()
    }

    /// The tenants file's `public_url`, if it sets one.
    pub fn public_url(&self) -> Option<String> {
        self.table().public_url()
    }

    /// Counts one request against the tenant's requests per minute; `Err` past it.
    pub fn admit(&self, tenant: &Tenant) -> Result<(), String> {
        let capacity = f64::from(tenant.quotas.requests_per_minute);
        let mut rates = self
            .rates
            .lock()
            .map_err(|_| "The tenant registry is unavailable.".to_string())?;
        let window = rates.entry(tenant.name.clone()).or_insert(RateWindow {
            tokens: capacity,
            refilled: Instant::now(),
        });
        let now = Instant::now();
        let refill = now.duration_since(window.refilled).as_secs_f64() * capacity / 60.0;
        window.tokens = (window.tokens + refill).min(capacity);
        window.refilled = now;
        if window.tokens < 1.0 {
            return Err(format!(
                "Tenant {:?} sent more than its {} requests per minute; retry in a few seconds.",
                tenant.name, tenant.quotas.requests_per_minute
            ));
        }
        window.tokens -= 1.0;
        Ok(())
    }

    /// Re-reads the tenants file, checked as at start ([`TenantChecks::load`]). Tenants that
    /// are gone, revoked or changed are closed at once (their running calls are cancelled
    /// first, so closing does not wait for them): a changed tenant's next call starts afresh
    /// under its new settings (tools, egress, quotas), none runs on under the old ones.
    /// Unchanged tenants keep their pages. The old file stays in force, whole, when the new
    /// one fails a check.
    pub async fn reload(&self) -> Result<usize, TenantsError> {
        let table = self.checks.load(&self.path)?;
        let count = table.len();
        let table = Arc::new(table);
        match self.table.write() {
            Ok(mut current) => *current = table.clone(),
            Err(poisoned) => *poisoned.into_inner() = table.clone(),
        }
        let removed = self.take_runtimes(|runtime| {
            table
                .get(&runtime.name)
                .is_none_or(|tenant| tenant.revoked || tenant.revision != runtime.revision)
        });
        for runtime in &removed {
            runtime.revoked.cancel();
            super::lease::release(&runtime.sandbox_root);
        }
        close_all(removed).await;
        Ok(count)
    }

    /// Enters a call for `tenant`: its runtime (created on first use) with the call counted.
    pub fn enter(&self, tenant: &Tenant) -> Result<CallTicket, String> {
        // Counted under the registry's lock, so the idle reaper never closes a tenant that a
        // call has just entered.
        let runtime = self
            .runtime(tenant, true)
            .map_err(|error| error.to_string())?;
        let ticket = CallTicket { runtime };
        let limit = tenant.quotas.max_concurrent_calls;
        if ticket.runtime.queued() > limit {
            return Err(format!(
                "Tenant {:?} already has {limit} calls running or waiting (its max_concurrent_calls); wait for one to finish.",
                tenant.name
            ));
        }
        Ok(ticket)
    }

    /// Opens an MCP session for `tenant`, unless it already has `max_sessions` open.
    pub fn open_session(&self, tenant: &Tenant) -> Result<SessionSlot, String> {
        let open = self
            .sessions
            .lock()
            .map_err(|_| "The tenant registry is unavailable.".to_string())?
            .entry(tenant.name.clone())
            .or_default()
            .clone();
        let limit = tenant.quotas.max_sessions;
        let opened = open.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |count| {
            (count < limit).then_some(count + 1)
        });
        match opened {
            Ok(_) => Ok(SessionSlot {
                tenant: tenant.name.clone(),
                open,
            }),
            Err(_) => Err(format!(
                "Tenant {:?} already has {limit} open MCP sessions (its max_sessions); close one first.",
                tenant.name
            )),
        }
    }

    fn runtime(
        &self,
        tenant: &Tenant,
        count_call: bool,
    ) -> Result<Arc<TenantRuntime>, RuntimeError> {
        let mut runtimes = self
            .runtimes
            .lock()
            .map_err(|_| RuntimeError::Unusable("The tenant registry is unavailable.".into()))?;
        // A request authenticated before a reload that removed, revoked or changed its
        // tenant (its headers came before, its body after) must not run as the old tenant.
        let current = self.table();
        if current
            .get(&tenant.name)
            .is_none_or(|now| now.revoked || now.revision != tenant.revision)
        {
            return Err(RuntimeError::Unusable(format!(
                "Tenant {:?} was changed, revoked or removed by a reload of the tenants file while this request arrived; send it again.",
                tenant.name
            )));
        }
        if let Some(runtime) = runtimes.get(&tenant.name) {
            if count_call {
                runtime.queued.fetch_add(1, Ordering::SeqCst);
            }
            return Ok(runtime.clone());
        }
        if let Some(max) = self.max_tenants
            && runtimes.len() >= max
        {
            return Err(RuntimeError::Full { max });
        }
        let sandbox = Sandbox::new([tenant.sandbox_root.clone()]).map_err(|error| {
            RuntimeError::Unusable(format!(
                "The sandbox root {} of tenant {:?} is unusable: {error}",
                tenant.sandbox_root.display(),
                tenant.name
            ))
        })?;
        let proxy = EgressProxy::start(tenant.egress.clone()).map_err(|error| {
            RuntimeError::Unusable(format!(
                "Cannot start the egress proxy of tenant {:?}: {error}",
                tenant.name
            ))
        })?;
        let network = TenantNetwork {
            proxy_server: proxy.proxy_server(),
            urls: tenant.urls,
        };
        let max_pages = tenant.quotas.max_pages;
        let mut session = match tenant.browser {
            BrowserMode::Shared => {
                Session::in_shared_browser(self.shared.clone(), sandbox, max_pages, Some(network))
            }
            BrowserMode::Dedicated => {
                // Its own browser goes through the tenant's proxy as a whole.
                let mut options = self.dedicated.clone();
                options.proxy_server = Some(network.proxy_server.clone());
                options
                    .chrome_args
                    .push(format!("--proxy-bypass-list={PROXY_BYPASS_LIST}"));
                Session::dedicated(options, sandbox, max_pages, Some(network))
            }
        }
        .with_memory_cap(tenant.quotas.renderer_memory_bytes)
        .with_heap_budget(tenant.quotas.heap_snapshot_bytes)
        .with_limits(tenant.quotas.plugin_cap())
        .with_flag_overrides(tenant.flags.clone())
        .with_output_tokens(tenant.quotas.output_tokens);
        // Its downloads go under its own sandbox root, where its tools can reach them.
        if let Some(settings) = &self.dedicated.downloads {
            let folder = tenant.sandbox_root.join("downloads");
            let downloads = Downloads::new(folder, settings.limits).map_err(|error| {
                RuntimeError::Unusable(format!("Tenant {:?}: {error}", tenant.name))
            })?;
            session = session.with_downloads(downloads);
        }
        // Its named sessions: its own folder, sealed to its name (never another tenant's).
        let sessions_off =
            tenant.flags.get("sessionStore") == Some(&serde_json::Value::Bool(false));
        if let Some(store) = self.session_store.as_ref().filter(|_| !sessions_off) {
            session =
                session.with_named_sessions(store.of(Owner::Tenant(tenant.name.clone())), None);
        }
        if super::lease::claim(&tenant.sandbox_root) {
            tracing::warn!(tenant = %tenant.name, "the tenant's previous instance stopped; its browser state is lost");
            session.note(super::lease::STATE_LOST.to_string());
        }
        let runtime = Arc::new(TenantRuntime {
            name: tenant.name.clone(),
            sandbox_root: tenant.sandbox_root.clone(),
            session,
            proxy,
            revoked: CancellationToken::new(),
            revision: tenant.revision,
            queued: AtomicUsize::new(usize::from(count_call)),
            last_used: Mutex::new(Instant::now()),
        });
        runtimes.insert(tenant.name.clone(), runtime.clone());
        tracing::info!(tenant = %tenant.name, "tenant session created");
        Ok(runtime)
    }

    /// The tenants in use, for metrics.
    pub fn runtimes(&self) -> Vec<Arc<TenantRuntime>> {
        self.runtimes
            .lock()
            .map(|runtimes| runtimes.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Closes tenants without calls for the idle timeout; their next call starts afresh.
    pub async fn close_idle(&self) {
        let idle_timeout = self.idle_timeout;
        let idle = self.take_runtimes(|runtime| {
            runtime.queued() == 0
                && runtime
                    .last_used
                    .lock()
                    .is_ok_and(|last_used| last_used.elapsed() >= idle_timeout)
        });
        for runtime in &idle {
            tracing::info!(tenant = %runtime.name, "closing an idle tenant");
            super::lease::release(&runtime.sandbox_root);
        }
        close_all(idle).await;
    }

    /// Calls in flight over all tenants.
    pub fn in_flight(&self) -> usize {
        self.runtimes().iter().map(|runtime| runtime.queued()).sum()
    }

    pub fn idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// Closes every tenant, then the shared browser, giving every lease back.
    pub async fn shutdown(&self) {
        let all = self.take_runtimes(|_| true);
        // A stop asked for is not a crash: the leases go, so the instance that serves these
        // tenants next (this one restarted, or another) does not tell them their state was lost
        // as after a kill. (Their pages end with the browser either way, as after idling.)
        for runtime in &all {
            super::lease::release(&runtime.sandbox_root);
        }
        close_all(all).await;
        self.shared.shutdown(CLOSE_BUDGET).await;
    }

    fn take_runtimes(
        &self,
        mut take: impl FnMut(&TenantRuntime) -> bool,
    ) -> Vec<Arc<TenantRuntime>> {
        let Ok(mut runtimes) = self.runtimes.lock() else {
            return Vec::new();
        };
        let names: Vec<String> = runtimes
            .values()
            .filter(|runtime| take(runtime))
            .map(|runtime| runtime.name.clone())
            .collect();
        names
            .iter()
            .filter_map(|name| runtimes.remove(name))
            .collect()
    }
}

async fn close_all(runtimes: Vec<Arc<TenantRuntime>>) {
    let closing = runtimes
        .iter()
        .map(|runtime| runtime.session.shutdown(CLOSE_BUDGET));
    futures::future::join_all(closing).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::tenants::token_hash_hex;
    use std::path::Path;

    /// The registry, and the temporary folder holding alice's sandbox root (removed on drop).
    fn registry(extra: &str) -> (Registry, tempfile::TempDir) {
        let scratch = tempfile::tempdir().expect("a temporary folder");
        let root = scratch.path().join("alice");
        let text = format!(
            "[[tenant]]\nname = \"alice\"\ntoken_sha256 = {:?}\nsandbox_root = {:?}\n{extra}\n",
            token_hash_hex("token"),
            root.display().to_string()
        );
        let table = TenantTable::parse(&text, Path::new("tenants.toml")).expect("valid file");
        let registry = Registry::with_table(
            PathBuf::from("tenants.toml"),
            TenantChecks::default(),
            table,
            BrowserOptions::default(),
            Duration::ZERO,
        );
        (registry, scratch)
    }

    /// A reload closes a changed tenant at once (its call stopped), keeps an unchanged one,
    /// and refuses a request authenticated as the tenant before the change.
    #[tokio::test]
    async fn a_reload_applies_to_a_changed_tenant_at_once_and_keeps_the_others() {
        let scratch = tempfile::tempdir().expect("a temporary folder");
        let path = scratch.path().join("tenants.toml");
        let file = |extra: &str| {
            let mut text = String::new();
            for name in ["alice", "bob"] {
                text += &format!(
                    "[[tenant]]\nname = {name:?}\ntoken_sha256 = {:?}\nsandbox_root = {:?}\n",
                    token_hash_hex(name),
                    scratch.path().join(name).display().to_string()
                );
                if name == "alice" {
                    text += extra;
                    text += "\n";
                }
            }
            std::fs::write(&path, text).expect("the tenants file");
        };
        file("");
        let checks = TenantChecks::default();
        let table = checks.load(&path).expect("valid file");
        let registry = Registry::with_table(
            path.clone(),
            checks,
            table,
            BrowserOptions::default(),
            Duration::ZERO,
        );
        let alice = registry.authenticate("alice").expect("alice");
        let bob = registry.authenticate("bob").expect("bob");
        let running = registry.enter(&alice).expect("alice's call");
        drop(registry.enter(&bob).expect("bob's call"));
        registry.reload().await.expect("the same file");
        assert_eq!(
            registry.runtimes().len(),
            2,
            "nothing changed, nothing closed"
        );
        assert!(!running.runtime.revoked.is_cancelled());

        file("max_pages = 3");
        registry.reload().await.expect("the changed file");
        assert!(
            running.runtime.revoked.is_cancelled(),
            "alice's call runs on"
        );
        let names: Vec<String> = registry.runtimes().iter().map(|r| r.name.clone()).collect();
        assert_eq!(names, ["bob"], "bob keeps his pages");
        let stale = registry.enter(&alice).map(|_| ());
        assert!(
            stale.is_err_and(|message| message.contains("reload")),
            "a request authenticated before the change runs as the old alice"
        );
        let alice = registry.authenticate("alice").expect("the new alice");
        assert_eq!(alice.quotas.max_pages, 3);
        assert!(registry.enter(&alice).is_ok());
    }

    #[tokio::test]
    async fn a_tenant_with_a_call_in_flight_is_never_closed_as_idle() {
        let (registry, _scratch) = registry("");
        let tenant = registry.authenticate("token").expect("alice");
        let ticket = registry.enter(&tenant).expect("enter");
        registry.close_idle().await;
        assert_eq!(registry.runtimes().len(), 1, "closed under a running call");
        assert_eq!(registry.in_flight(), 1);
        drop(ticket);
        registry.close_idle().await;
        assert!(registry.runtimes().is_empty(), "the idle tenant stays open");
    }

    #[tokio::test]
    async fn the_session_quota_holds_across_closing_an_idle_tenant() {
        let (registry, _scratch) = registry("max_sessions = 1");
        let tenant = registry.authenticate("token").expect("alice");
        drop(registry.enter(&tenant).expect("enter"));
        let first = registry.open_session(&tenant).expect("the first session");
        registry.close_idle().await;
        let second = registry.open_session(&tenant);
        assert!(
            second.is_err_and(|message| message.contains("max_sessions")),
            "a second session beyond the quota"
        );
        drop(first);
        assert!(registry.open_session(&tenant).is_ok());
    }
}
