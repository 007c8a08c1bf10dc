//! `devtools:tool/extensions`: the browser's extensions. Installing and reloading need
//! `extensions.install` (and the folder is checked against the sandbox here too, whatever the
//! plugin passes); listing, uninstalling and triggering need `extensions`.

use super::{CallState, PageHandle};
use crate::browser::extensions;
use crate::plugin::bindings::devtools::tool::extensions as wit;
use crate::plugin::bindings::devtools::tool::pages::EvaluateOptions;
use crate::plugin::capability::Capability;
use wasmtime::component::Resource;

impl CallState {
    /// The browser's own endpoint, for browser-wide extension commands: never for a session
    /// that shares its browser with other tenants (an extension sees every tab).
    fn ws_endpoint(&mut self) -> Result<String, String> {
        let session = self.session()?;
        session.require_own_browser("Extensions act on the whole browser")?;
        session
            .browser_ws_endpoint()
            .ok_or_else(|| "The browser is not connected.".to_string())
    }
}

impl wit::Host for CallState {
    async fn install_extension(
        &mut self,
        path: String,
    ) -> wasmtime::Result<Result<String, String>> {
        self.require(Capability::ExtensionsInstall, "install-extension")?;
        let checked = match self.session() {
            Ok(session) => session
                .sandbox
                .resolve(&path)
                .map_err(|error| error.to_string()),
            Err(error) => Err(error),
        };
        let checked = match checked {
            Ok(checked) if std::path::Path::new(&checked).is_dir() => checked,
            Ok(checked) => {
                return Ok(Err(format!(
                    "{checked} is not a folder: pass the folder of an unpacked extension (the one holding manifest.json)."
                )));
            }
            Err(error) => return Ok(Err(error)),
        };
        let endpoint = match self.ws_endpoint() {
            Ok(endpoint) => endpoint,
            Err(error) => return Ok(Err(error)),
        };
        Ok(extensions::install(&endpoint, &checked).await)
    }

    async fn uninstall_extension(&mut self, id: String) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Extensions, "uninstall-extension")?;
        let endpoint = match self.ws_endpoint() {
            Ok(endpoint) => endpoint,
            Err(error) => return Ok(Err(error)),
        };
        Ok(extensions::uninstall(&endpoint, &id).await)
    }

    async fn list_extensions(&mut self) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::Extensions, "list-extensions")?;
        let endpoint = match self.ws_endpoint() {
            Ok(endpoint) => endpoint,
            Err(error) => return Ok(Err(error)),
        };
        Ok(extensions::list(&endpoint)
            .await
            .map(|list| extensions::lines(&list)))
    }

    async fn reload_extension(&mut self, id: String) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::ExtensionsInstall, "reload-extension")?;
        let endpoint = match self.ws_endpoint() {
            Ok(endpoint) => endpoint,
            Err(error) => return Ok(Err(error)),
        };
        Ok(extensions::reload(&endpoint, &id).await)
    }

    async fn trigger_extension_action(
        &mut self,
        id: String,
        handle: Resource<PageHandle>,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Extensions, "trigger-extension-action")?;
        let page_id = self.page_id(&handle)?;
        let endpoint = match self.ws_endpoint() {
            Ok(endpoint) => endpoint,
            Err(error) => return Ok(Err(error)),
        };
        let target = match self.session().and_then(|session| session.page(page_id)) {
            Ok(page) => page.page.target_id().inner().clone(),
            Err(error) => return Ok(Err(error)),
        };
        Ok(extensions::trigger_action(&endpoint, &id, &target).await)
    }

    async fn evaluate_in_service_worker(
        &mut self,
        service_worker_id: String,
        function: String,
        options: EvaluateOptions,
    ) -> wasmtime::Result<Result<String, String>> {
        self.require(Capability::Script, "evaluate-in-service-worker")?;
        let function =
            match self.evaluation_source(function, &options, "evaluate-in-service-worker")? {
                Ok(function) => function,
                Err(error) => return Ok(Err(error)),
            };
        let endpoint = match self.ws_endpoint() {
            Ok(endpoint) => endpoint,
            Err(error) => return Ok(Err(error)),
        };
        let worker = match self.session() {
            Ok(session) => session.extension_service_worker(&service_worker_id).await,
            Err(error) => return Ok(Err(error)),
        };
        let Some(worker) = worker else {
            return Ok(Err("Service worker not found.".into()));
        };
        Ok(extensions::evaluate_in_worker(&endpoint, &worker.target_id, &function).await)
    }
}
