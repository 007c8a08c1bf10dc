//! `devtools:tool/pwa`: web apps installed in the browser profile. Every function needs `pwa`;
//! the URLs a plugin passes are held to its `navigate` grant (the browser fetches them). A
//! session that shares its browser, or one with a URL policy, gets the reference's refusal:
//! an installed app belongs to the whole profile and its windows load what its manifest says.

use super::function::{HostFunction as F, Marks as M};
use super::{Call, CallState, PageHandle, or_return};
use crate::browser::features::pwa;
use crate::browser::page::tab;
use crate::browser::pipe::PipeLink;
use crate::policy::capability::Capability::{Navigate, Script};
use crate::runtime::calling::bindings::v0_3::devtools::tool::pwa as wit;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::Resource;

/// The browser fetches the install URL (and may open the app): held to `navigate`.
pub(super) const INSTALL_PWA: F =
    F::new("pwa", "install", M::NAVIGATES).depending(&[Navigate, Script]);
const UNINSTALL_PWA: F = F::new("pwa", "uninstall", M::NONE);
/// The app's window loads what its manifest says: landing-checked like any new page.
const LAUNCH_PWA: F = F::new("pwa", "launch", M::NAVIGATES).depending(&[Navigate, Script]);
const GET_OS_APP_STATE: F = F::new("pwa", "get-os-app-state", M::PAGE_CONTENT);

pub(super) const FUNCTIONS: &[&F] = &[&INSTALL_PWA, &UNINSTALL_PWA, &LAUNCH_PWA, &GET_OS_APP_STATE];

/// The reference waits up to its navigation timeout for the launched window's page.
const LAUNCH_WAIT: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(50);

impl Call<'_> {
    /// The browser's DevTools pipe for `PWA.*` commands (and its WebSocket endpoint, for tab
    /// look-ups), after the session's own refusals.
    fn pwa_browser(&mut self) -> Result<(Arc<PipeLink>, String), String> {
        let session = self.session()?;
        session.require_own_browser("Web apps are installed in the whole browser profile")?;
        // A tenant's egress policy, or --blockedUrlPattern/--allowedUrlPattern (as 1.11.0).
        if session.url_policy().is_some() || session.browser_options().url_patterns.is_some() {
            return Err(
                "PWA APIs are not supported when network restrictions are configured.".into(),
            );
        }
        let endpoint = session
            .browser_ws_endpoint()
            .ok_or_else(|| "The browser is not connected.".to_string())?;
        let pipe = session.browser_pipe().ok_or_else(|| {
            "The PWA tools need a browser this server launched: Chromium offers its PWA domain only on the DevTools pipe of the process that started it, not to --browserUrl or --wsEndpoint connections.".to_string()
        })?;
        Ok((pipe, endpoint))
    }

    /// A URL the browser will load for the plugin: its grant, then the server's own policy
    /// (for values that parse as URLs; a bundle path is the browser's to refuse).
    fn pwa_url(&mut self, url: &str) -> wasmtime::Result<Result<String, String>> {
        let url = self.require_url(url)?;
        let session = match self.session() {
            Ok(session) => session,
            Err(error) => return Ok(Err(error)),
        };
        if url::Url::parse(&url).is_ok()
            && let Err(refused) = session.navigation_policy().check(&url)
        {
            return Ok(Err(refused));
        }
        Ok(Ok(url))
    }

    /// The page the session adopts for the tab `tab_id` the browser opened for an app.
    async fn adopt_app_window(
        &mut self,
        endpoint: &str,
        tab_id: &str,
        known: &BTreeSet<u32>,
        manifest_id: &str,
    ) -> Result<u32, String> {
        let deadline = Instant::now() + LAUNCH_WAIT;
        let session = self.session()?;
        let mut checked = BTreeSet::new();
        loop {
            session.sync_pages().await;
            for id in session.page_ids() {
                if known.contains(&id) || checked.contains(&id) {
                    continue;
                }
                let target = session.page(id)?.cdp().target_id().inner().clone();
                match tab::tab_id(endpoint, &target).await {
                    Ok(tab) if tab == tab_id => return Ok(id),
                    // Another new page (a popup): not the app's window.
                    Ok(_) => {
                        checked.insert(id);
                    }
                    // Not attached yet: asked again on the next round.
                    Err(_) => {}
                }
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "Failed to create a page for the launched PWA (manifestId = {manifest_id})"
                ));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Until the app window has left `about:blank`, within what is left of the launch wait.
    async fn wait_for_app_url(&mut self, id: u32, started: Instant) {
        let Ok(session) = self.session() else { return };
        while started.elapsed() < LAUNCH_WAIT {
            let Ok(page) = session.page(id) else { return };
            let url = page.url().await;
            if !url.is_empty() && url != "about:blank" {
                return;
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// An install in every contract's terms (`standalone` or `browser`).
pub(super) async fn install(
    call: &mut Call<'_>,
    manifest_id: &str,
    install_url_or_bundle_url: &str,
    display_mode: Option<&str>,
) -> wasmtime::Result<Result<(), String>> {
    let install_url = or_return!(call.pwa_url(install_url_or_bundle_url)?);
    let (pipe, _) = or_return!(call.pwa_browser());
    Ok(pwa::install(&pipe, manifest_id, &install_url, display_mode).await)
}

impl wit::Host for CallState {
    async fn install(
        &mut self,
        manifest_id: String,
        install_url_or_bundle_url: String,
        display_mode: Option<wit::DisplayMode>,
    ) -> wasmtime::Result<Result<(), String>> {
        self.dispatch(&INSTALL_PWA, async |call| {
            let display_mode = display_mode.map(|mode| match mode {
                wit::DisplayMode::Standalone => "standalone",
                wit::DisplayMode::Browser => "browser",
            });
            install(call, &manifest_id, &install_url_or_bundle_url, display_mode).await
        })
        .await
    }

    async fn uninstall(&mut self, manifest_id: String) -> wasmtime::Result<Result<(), String>> {
        self.dispatch(&UNINSTALL_PWA, async |call| {
            let (pipe, _) = or_return!(call.pwa_browser());
            let uninstalled = pwa::uninstall(&pipe, &manifest_id).await;
            // The browser closes the app's windows: the page table follows.
            if let Ok(session) = call.session() {
                session.sync_pages().await;
            }
            Ok(uninstalled)
        })
        .await
    }

    async fn launch(
        &mut self,
        manifest_id: String,
        url: Option<String>,
    ) -> wasmtime::Result<Result<Resource<PageHandle>, String>> {
        self.dispatch(&LAUNCH_PWA, async |call| {
            let url = match &url {
                Some(url) => Some(or_return!(call.pwa_url(url)?)),
                None => None,
            };
            let (pipe, endpoint) = or_return!(call.pwa_browser());
            let session = or_return!(call.session());
            session.sync_pages().await;
            let known: BTreeSet<u32> = session.page_ids().into_iter().collect();
            let started = Instant::now();
            let tab_id = or_return!(pwa::launch(&pipe, &manifest_id, url.as_deref()).await);
            let id = or_return!(
                call.adopt_app_window(&endpoint, &tab_id, &known, &manifest_id)
                    .await
            );
            call.wait_for_app_url(id, started).await;
            Ok(Ok(call.handle(id)?))
        })
        .await
    }

    async fn get_os_app_state(
        &mut self,
        manifest_id: String,
    ) -> wasmtime::Result<Result<wit::OsAppState, String>> {
        self.dispatch(&GET_OS_APP_STATE, async |call| {
            let (pipe, _) = or_return!(call.pwa_browser());
            Ok(pwa::os_app_state(&pipe, &manifest_id)
                .await
                .map(|(badge_count, file_handlers)| wit::OsAppState {
                    badge_count,
                    file_handlers,
                }))
        })
        .await
    }
}
