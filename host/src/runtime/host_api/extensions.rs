//! `devtools:tool/extensions`: the browser's extensions. Installing and reloading need
//! `extensions.install` (and the folder is checked by the file gateway here too, whatever the
//! plugin passes); listing, uninstalling and triggering need `extensions`.

use super::function::{HostFunction as F, Marks as M};
use super::pages::evaluation_source;
use super::{Call, CallState, PageHandle, or_return};
use crate::browser::features::extensions;
use crate::policy::capability::Capability::{Extensions, ExtensionsInstall, FilesRead, Script};
use crate::runtime::bindings::devtools::tool::extensions as wit;
use crate::runtime::bindings::devtools::tool::pages::EvaluateOptions;
use wasmtime::component::Resource;

/// The browser loads the folder's code: it is read through the gateway's checks, and what its
/// background script does to the session's pages during the call is landing-checked.
const INSTALL_EXTENSION: F = F::new(
    "extensions",
    "install-extension",
    &[ExtensionsInstall],
    M::NAVIGATES.and(M::READS),
);
const UNINSTALL_EXTENSION: F = F::new("extensions", "uninstall-extension", &[Extensions], M::NONE);
const LIST_EXTENSIONS: F = F::new("extensions", "list-extensions", &[Extensions], M::NONE);
/// A reloaded extension reruns its background code, which can move any tab.
const RELOAD_EXTENSION: F = F::new(
    "extensions",
    "reload-extension",
    &[ExtensionsInstall],
    M::NAVIGATES,
);
/// The extension's action runs its code on the tab.
const TRIGGER_EXTENSION_ACTION: F = F::new(
    "extensions",
    "trigger-extension-action",
    &[Extensions],
    M::NAVIGATES,
);
/// A service worker can move any tab; `source-path` reads a script file.
const EVALUATE_IN_SERVICE_WORKER: F = F::new(
    "extensions",
    "evaluate-in-service-worker",
    &[Script],
    M::NAVIGATES.and(M::READS),
)
.depending(&[FilesRead]);

pub(super) const FUNCTIONS: &[&F] = &[
    &INSTALL_EXTENSION,
    &UNINSTALL_EXTENSION,
    &LIST_EXTENSIONS,
    &RELOAD_EXTENSION,
    &TRIGGER_EXTENSION_ACTION,
    &EVALUATE_IN_SERVICE_WORKER,
];

type Outcome<T> = wasmtime::Result<Result<T, String>>;

/// The browser's own endpoint, for browser-wide extension commands: never for a session
/// that shares its browser with other tenants (an extension sees every tab).
fn ws_endpoint(call: &mut Call<'_>) -> Result<String, String> {
    let session = call.session()?;
    session.require_own_browser("Extensions act on the whole browser")?;
    session
        .browser_ws_endpoint()
        .ok_or_else(|| "The browser is not connected.".to_string())
}

impl wit::Host for CallState {
    async fn install_extension(&mut self, path: String) -> Outcome<String> {
        self.dispatch(&INSTALL_EXTENSION, async |call| {
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

    async fn uninstall_extension(&mut self, id: String) -> Outcome<()> {
        self.dispatch(&UNINSTALL_EXTENSION, async |call| {
            let endpoint = or_return!(ws_endpoint(call));
            Ok(extensions::uninstall(&endpoint, &id).await)
        })
        .await
    }

    async fn list_extensions(&mut self) -> Outcome<Vec<String>> {
        self.dispatch(&LIST_EXTENSIONS, async |call| {
            let endpoint = or_return!(ws_endpoint(call));
            Ok(extensions::list(&endpoint)
                .await
                .map(|list| extensions::lines(&list)))
        })
        .await
    }

    async fn reload_extension(&mut self, id: String) -> Outcome<()> {
        self.dispatch(&RELOAD_EXTENSION, async |call| {
            let endpoint = or_return!(ws_endpoint(call));
            Ok(extensions::reload(&endpoint, &id).await)
        })
        .await
    }

    async fn trigger_extension_action(
        &mut self,
        id: String,
        handle: Resource<PageHandle>,
    ) -> Outcome<()> {
        self.dispatch(&TRIGGER_EXTENSION_ACTION, async |call| {
            let page_id = call.page_id(&handle)?;
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

    async fn evaluate_in_service_worker(
        &mut self,
        service_worker_id: String,
        function: String,
        options: EvaluateOptions,
    ) -> Outcome<String> {
        self.dispatch(&EVALUATE_IN_SERVICE_WORKER, async |call| {
            let function = or_return!(evaluation_source(call, &function, &options)?);
            let endpoint = or_return!(ws_endpoint(call));
            let session = or_return!(call.session());
            let Some(worker) = session.extension_service_worker(&service_worker_id).await else {
                return Ok(Err("Service worker not found.".into()));
            };
            Ok(extensions::evaluate_in_worker(&endpoint, &worker.target_id, &function).await)
        })
        .await
    }
}
