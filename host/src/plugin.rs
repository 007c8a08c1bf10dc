//! Tool components: loading them from disk, and running one call in a fresh instance.

mod bindings;
mod cache;
mod host_api;
mod loader;

pub use bindings::exports::devtools::tool::tool::{Category, ToolDefinition};
pub use host_api::{CallState, PageHandle};
pub use loader::Loader;

use bindings::Plugin;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use wasmtime::component::{Component, Linker, Resource};
use wasmtime::{Engine, Store};

/// How long one call may run, wall clock, before the instance is interrupted.
const CALL_DEADLINE: Duration = Duration::from_secs(300);
/// Epoch tick: the granularity of the deadline above.
const EPOCH_TICK: Duration = Duration::from_millis(10);
/// Linear memory a tool instance may grow to.
const MEMORY_LIMIT_BYTES: usize = 64 << 20;

/// The compiled engine and linker every tool instance is created from.
#[derive(Clone)]
pub struct Runtime {
    engine: Engine,
    linker: Arc<Linker<CallState>>,
}

impl Runtime {
    pub fn new() -> wasmtime::Result<Runtime> {
        let mut config = wasmtime::Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        let engine = Engine::new(&config)?;
        let mut linker = Linker::new(&engine);
        Plugin::add_to_linker::<_, wasmtime::component::HasSelf<_>>(&mut linker, |state| state)?;
        spawn_epoch_ticker(&engine);
        Ok(Runtime {
            engine,
            linker: Arc::new(linker),
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    fn store(&self, state: CallState) -> Store<CallState> {
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limits);
        let ticks = CALL_DEADLINE.as_millis() / EPOCH_TICK.as_millis();
        store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX));
        store.epoch_deadline_trap();
        store
    }

    /// Evaluates a component's definition for these flags, in a throwaway instance.
    pub async fn definition(
        &self,
        component: &Component,
        flags_json: &str,
    ) -> wasmtime::Result<ToolDefinition> {
        let mut store = self.store(CallState::without_session(MEMORY_LIMIT_BYTES));
        let plugin = Plugin::instantiate_async(&mut store, component, &self.linker).await?;
        plugin
            .devtools_tool_tool()
            .call_definition(&mut store, flags_json)
            .await
    }

    /// Runs the handler in a fresh instance. The state (and the session lock it holds) comes
    /// back whatever happens in the guest, so the response can still be rendered.
    pub async fn handle(
        &self,
        component: &Component,
        state: CallState,
        params_json: &str,
        page: Option<u32>,
    ) -> (CallState, Result<Result<(), String>, wasmtime::Error>) {
        let mut store = self.store(state);
        let outcome = async {
            let plugin = Plugin::instantiate_async(&mut store, component, &self.linker).await?;
            let page: Option<Resource<PageHandle>> = match page {
                Some(id) => Some(store.data_mut().table.push(PageHandle { id })?),
                None => None,
            };
            plugin
                .devtools_tool_tool()
                .call_handle(&mut store, params_json, page)
                .await
        }
        .await;
        (store.into_data(), outcome)
    }
}

/// A loaded tool: its component and its definition for the server's flags.
pub struct LoadedTool {
    pub definition: ToolDefinition,
    pub component: Component,
    pub source: PathBuf,
    /// The parsed `input-schema`.
    pub input_schema: serde_json::Map<String, serde_json::Value>,
}

fn spawn_epoch_ticker(engine: &Engine) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("wasm-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .ok();
}

#[cfg(test)]
pub mod bindings_for_tests {
    use super::bindings::exports::devtools::tool::tool::Annotations;
    use super::{Category, ToolDefinition};

    /// A definition as a component would export it, for unit tests of the pipeline steps.
    pub fn definition(name: &str, category: Category, conditions: &[&str]) -> ToolDefinition {
        ToolDefinition {
            name: name.to_string(),
            description: String::new(),
            annotations: Annotations {
                title: None,
                category,
                read_only_hint: false,
                conditions: conditions
                    .iter()
                    .map(|condition| condition.to_string())
                    .collect(),
            },
            input_schema: "{\"type\":\"object\",\"properties\":{}}".into(),
            page_scoped: false,
            blocked_by_dialog: false,
            file_params: Vec::new(),
        }
    }
}
