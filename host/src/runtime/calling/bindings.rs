//! Host bindings, one module per track of the contract the server links: the newest
//! (`wit/since_v0.3.1`) implemented by the adapters of `host_api/`, and every released older
//! track (`wit/since_v0.2.0`) implemented by `host_api/v0_2.rs` on top of the newest. Both page
//! resources are the same host handle, so an old component's page is a page like any other.
//!
//! One module serves a whole track: wasmtime matches names by semver (for 0.x.y, the same
//! 0.x), both the imports the linker defines and the `tool` export the host looks up, so a
//! component built against 0.3.0 links to the 0.3.1 definitions with no adapter. That holds
//! because a patch of a track only adds (new functions in imported interfaces; never a change
//! to a record, a signature or the exported interface).

/// `devtools:tool@0.3.2`: the 0.3 track, which the host implements natively.
pub mod v0_3 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.3.2",
        world: "plugin",
        imports: { default: async | trappable },
        exports: { default: async },
        with: { "devtools:tool/types.page": crate::runtime::calling::PageHandle },
    });
}

/// `devtools:tool@0.2.0`: released, frozen, linked through the adapter.
pub mod v0_2 {
    wasmtime::component::bindgen!({
        path: "../wit/since_v0.2.0",
        world: "plugin",
        imports: { default: async | trappable },
        exports: { default: async },
        with: { "devtools:tool/pages.page": crate::runtime::calling::PageHandle },
    });
}

pub use v0_3::exports::devtools::tool::tool::{Annotations, Category, ToolDefinition};

use crate::runtime::calling::{CallState, PageHandle};
use wasmtime::Store;
use wasmtime::component::{InstancePre, Resource};

/// A component linked once, for the contract version it was built against.
#[derive(Clone)]
pub enum ToolPre {
    V0_3(v0_3::PluginPre<CallState>),
    V0_2(v0_2::PluginPre<CallState>),
}

impl ToolPre {
    /// Picks the contract from the component's tool export (the newest first).
    pub fn new(instance: InstancePre<CallState>) -> wasmtime::Result<ToolPre> {
        match v0_3::PluginPre::new(instance.clone()) {
            Ok(pre) => Ok(ToolPre::V0_3(pre)),
            Err(newest) => match v0_2::PluginPre::new(instance) {
                Ok(pre) => Ok(ToolPre::V0_2(pre)),
                Err(_) => Err(newest),
            },
        }
    }

    /// The contract track the component was built against (any 0.3.x links as 0.3.2).
    pub fn version(&self) -> &'static str {
        match self {
            ToolPre::V0_3(_) => "0.3.2",
            ToolPre::V0_2(_) => "0.2.0",
        }
    }

    /// A fresh instance's definition for these flags (a 0.3.1 component may also declare its
    /// output schema meanwhile, through `response.declare-output-schema`).
    pub async fn definition(
        &self,
        store: &mut Store<CallState>,
        flags_json: &str,
    ) -> wasmtime::Result<ToolDefinition> {
        match self {
            ToolPre::V0_3(pre) => {
                let plugin = pre.instantiate_async(&mut *store).await?;
                plugin
                    .devtools_tool_tool()
                    .call_definition(&mut *store, flags_json)
                    .await
            }
            ToolPre::V0_2(pre) => {
                let plugin = pre.instantiate_async(&mut *store).await?;
                let old = plugin
                    .devtools_tool_tool()
                    .call_definition(&mut *store, flags_json)
                    .await?;
                Ok(from_v0_2(old))
            }
        }
    }

    /// A fresh instance's handler, with the target page's handle when there is one.
    pub async fn handle(
        &self,
        store: &mut Store<CallState>,
        params_json: &str,
        page: Option<u32>,
    ) -> wasmtime::Result<Result<(), String>> {
        let handle =
            |store: &mut Store<CallState>| -> wasmtime::Result<Option<Resource<PageHandle>>> {
                match page {
                    Some(id) => Ok(Some(store.data_mut().table.push(PageHandle { id })?)),
                    None => Ok(None),
                }
            };
        match self {
            ToolPre::V0_3(pre) => {
                let plugin = pre.instantiate_async(&mut *store).await?;
                let page = handle(store)?;
                plugin
                    .devtools_tool_tool()
                    .call_handle(&mut *store, params_json, page)
                    .await
            }
            ToolPre::V0_2(pre) => {
                let plugin = pre.instantiate_async(&mut *store).await?;
                let page = handle(store)?;
                plugin
                    .devtools_tool_tool()
                    .call_handle(&mut *store, params_json, page)
                    .await
            }
        }
    }
}

/// A 0.2.0 definition in today's terms: the record did not change between the versions.
fn from_v0_2(old: v0_2::exports::devtools::tool::tool::ToolDefinition) -> ToolDefinition {
    use v0_2::exports::devtools::tool::tool::Category as Old;
    let category = match old.annotations.category {
        Old::Input => Category::Input,
        Old::Navigation => Category::Navigation,
        Old::Emulation => Category::Emulation,
        Old::Performance => Category::Performance,
        Old::Network => Category::Network,
        Old::Debugging => Category::Debugging,
        Old::Extensions => Category::Extensions,
        Old::ExperimentalThirdParty => Category::ExperimentalThirdParty,
        Old::Memory => Category::Memory,
        Old::ExperimentalWebmcp => Category::ExperimentalWebmcp,
        Old::Pwa => Category::Pwa,
    };
    ToolDefinition {
        name: old.name,
        description: old.description,
        annotations: Annotations {
            title: old.annotations.title,
            category,
            read_only_hint: old.annotations.read_only_hint,
            conditions: old.annotations.conditions,
        },
        input_schema: old.input_schema,
        page_scoped: old.page_scoped,
        blocked_by_dialog: old.blocked_by_dialog,
        file_params: old.file_params,
    }
}
