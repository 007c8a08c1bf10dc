//! `devtools:tool/extensions` (`extensions`): the browser's installed extensions; and
//! `extensions-install` (`extensions.install`): loading extension code from disk into the whole
//! browser, the folder checked by the file gateway here too, whatever the plugin passes.

use super::function::{HostFunction as F, Marks as M};
use super::{Call, CallState, Outcome, PageHandle, or_return};
use crate::browser::features::extensions;
use crate::runtime::calling::bindings::v0_3::devtools::tool::{
    extensions as wit, extensions_install,
};
use wasmtime::component::Resource;

/// The browser loads the folder's code: it is read through the gateway's checks, and what its
/// background script does to the session's pages during the call is landing-checked.
const INSTALL: F = F::new("extensions-install", "install", M::NAVIGATES.and(M::READS));
/// A reloaded extension reruns its background code, which can move any tab.
const RELOAD: F = F::new("extensions-install", "reload", M::NAVIGATES);
const UNINSTALL: F = F::new("extensions", "uninstall", M::NONE);
const INSTALLED: F = F::new("extensions", "installed", M::PAGE_CONTENT);
/// The extension's action runs its code on the tab.
const TRIGGER_ACTION: F = F::new("extensions", "trigger-action", M::NAVIGATES.and(M::ON_PAGE));

pub(super) const FUNCTIONS: &[&F] = &[&INSTALL, &RELOAD, &UNINSTALL, &INSTALLED, &TRIGGER_ACTION];

/// The browser's own endpoint, for browser-wide extension commands: never for a session
/// that shares its browser with other tenants (an extension sees every tab).
pub(super) fn ws_endpoint(call: &mut Call<'_>) -> Result<String, String> {
    let session = call.session()?;
    session.require_own_browser("Extensions act on the whole browser")?;
    session
        .browser_ws_endpoint()
        .ok_or_else(|| "The browser is not connected.".to_string())
}

impl extensions_install::Host for CallState {
    async fn install(&mut self, path: String) -> Outcome<String> {
        self.dispatch(&INSTALL, async |call| {
            let sandbox = or_return!(call.sandbox()?);
            let checked = match sandbox.resolve_folder(&path) {
                Ok(checked) => checked,
                Err(crate::sandbox::SandboxError::NotAFolder { path }) => {
                    return Ok(Err(format!(
                        "{} is not a folder: pass the folder of an unpacked extension (the one holding manifest.json).",
                        path.display()
                    )));
                }
                Err(error) => return Ok(Err(error.to_string())),
            };
            let endpoint = or_return!(ws_endpoint(call));
            Ok(extensions::install(&endpoint, &checked).await)
        })
        .await
    }

    async fn reload(&mut self, id: String) -> Outcome<()> {
        self.dispatch(&RELOAD, async |call| {
            let endpoint = or_return!(ws_endpoint(call));
            Ok(extensions::reload(&endpoint, &id).await)
        })
        .await
    }
}

impl wit::Host for CallState {
    async fn uninstall(&mut self, id: String) -> Outcome<()> {
        self.dispatch(&UNINSTALL, async |call| {
            let endpoint = or_return!(ws_endpoint(call));
            Ok(extensions::uninstall(&endpoint, &id).await)
        })
        .await
    }

    async fn installed(&mut self) -> Outcome<Vec<String>> {
        self.dispatch(&INSTALLED, async |call| {
            let endpoint = or_return!(ws_endpoint(call));
            Ok(extensions::list(&endpoint)
                .await
                .map(|list| extensions::lines(&list)))
        })
        .await
    }

    async fn trigger_action(&mut self, id: String, handle: Resource<PageHandle>) -> Outcome<()> {
        self.dispatch(&TRIGGER_ACTION, async |call| {
            let page_id = call.page_id(&handle).await?;
            let endpoint = or_return!(ws_endpoint(call));
            let target = or_return!(call.session().and_then(|session| session.page(page_id)))
                .cdp()
                .target_id()
                .inner()
                .clone();
            Ok(extensions::trigger_action(&endpoint, &id, &target).await)
        })
        .await
    }
}
