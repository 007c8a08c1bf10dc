//! `devtools:tool/screencast`: recordings of a page. The recorder, the frame rate and ffmpeg
//! come from the server's flags, never from the plugin; the video goes through the file
//! gateway, and a recording a plugin without `long-lived` starts ends with its call.

use super::function::{HostFunction as F, Marks as M};
use super::{CallState, PageHandle, or_return};
use crate::browser::features;
use crate::policy::capability::Capability::FilesWrite;
use crate::runtime::calling::bindings::v0_3::devtools::tool::screencast;
use wasmtime::component::Resource;

/// A recording is always written somewhere, a temp file at least.
const START_SCREENCAST: F = F::new(
    "screencast",
    "start",
    M::WRITES.and(M::LONG_LIVED).and(M::ON_PAGE),
)
.also(&[FilesWrite]);
const STOP_SCREENCAST: F =
    F::new("screencast", "stop", M::WRITES.and(M::ON_PAGE)).also(&[FilesWrite]);

pub(super) const FUNCTIONS: &[&F] = &[&START_SCREENCAST, &STOP_SCREENCAST];

type Lines = wasmtime::Result<Result<Vec<String>, String>>;

impl screencast::Host for CallState {
    async fn start(&mut self, handle: Resource<PageHandle>, file_path: Option<String>) -> Lines {
        self.dispatch(&START_SCREENCAST, async |call| {
            let options = or_return!(call.session())
                .browser_options()
                .screencast
                .clone();
            let (page, sandbox) = or_return!(call.page_and_sandbox(&handle).await?);
            Ok(features::screencast::Screencast::start(
                page,
                file_path.as_deref(),
                sandbox,
                &options,
            )
            .await)
        })
        .await
    }

    async fn stop(&mut self, handle: Resource<PageHandle>) -> Lines {
        self.dispatch(&STOP_SCREENCAST, async |call| {
            let (page, sandbox) = or_return!(call.page_and_sandbox(&handle).await?);
            Ok(features::screencast::Screencast::stop(page, sandbox).await)
        })
        .await
    }
}
