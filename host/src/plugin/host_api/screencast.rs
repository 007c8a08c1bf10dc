//! `devtools:tool/screencast`: recordings of a page. The recorder, the frame rate and ffmpeg
//! come from the server's flags, never from the plugin; the video goes through the sandbox.

use super::{CallState, PageHandle};
use crate::plugin::bindings::devtools::tool::screencast;
use crate::plugin::capability::Capability;
use wasmtime::component::Resource;

impl screencast::Host for CallState {
    async fn start_screencast(
        &mut self,
        handle: Resource<PageHandle>,
        file_path: Option<String>,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::Screencast, "start-screencast")?;
        // A recording is always written somewhere, a temp file at least.
        self.require(Capability::FilesWrite, "start-screencast")?;
        let id = self.page_id(&handle)?;
        let session = match self.session() {
            Ok(session) => session,
            Err(error) => return Ok(Err(error)),
        };
        let options = session.browser_options().screencast.clone();
        let (page, sandbox) = match session.page_and_sandbox(id) {
            Ok(pair) => pair,
            Err(error) => return Ok(Err(error)),
        };
        Ok(page
            .start_screencast(file_path.as_deref(), sandbox, &options)
            .await)
    }

    async fn stop_screencast(
        &mut self,
        handle: Resource<PageHandle>,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::Screencast, "stop-screencast")?;
        self.require(Capability::FilesWrite, "stop-screencast")?;
        let id = self.page_id(&handle)?;
        let (page, sandbox) = match self
            .session()
            .and_then(|session| session.page_and_sandbox(id))
        {
            Ok(pair) => pair,
            Err(error) => return Ok(Err(error)),
        };
        Ok(page.stop_screencast(sandbox).await)
    }
}
