//! `devtools:tool/types`: the page handle every interface shares. Knowing a handle's id, and
//! dropping it, needs no capability.

use super::function::{HostFunction as F, Marks as M};
use super::{CallState, PageHandle};
use crate::runtime::calling::bindings::v0_3::devtools::tool::types;
use wasmtime::component::Resource;

const ID: F = F::new("types", "[method]page.id", M::NONE);
const DROP: F = F::new("types", "[resource-drop]page", M::NONE);

pub(super) const FUNCTIONS: &[&F] = &[&ID, &DROP];

impl types::Host for CallState {}

impl types::HostPage for CallState {
    async fn id(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<u32> {
        // The number the handle holds: the page itself is not reached (nor checked).
        let id = self.table.get(&handle)?.id;
        self.dispatch(&ID, async |_call| Ok(id)).await
    }

    async fn drop(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<()> {
        self.dispatch(&DROP, async |call| call.drop_handle(handle))
            .await
    }
}
