//! The engine every tool instance is created from, and one call's run: a fresh instance in a
//! store with the call's limits, the page checked before and cleaned up after.

use super::bindings::{self, ToolDefinition, ToolPre};
use super::compile_settings;
use super::host_api::CallState;
use super::limits::{self, LimitExceeded};
use crate::policy::capability::{Denied, Grants};
use crate::policy::limits::Limits;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, Store, UpdateDeadline};

/// Bytes a host call may copy from the guest beyond the output budget (its other arguments).
const HOSTCALL_SLACK: usize = 1 << 20;
/// Resource handles (pages, WASI streams) one call may hold; wasmtime's default is 1,000,000.
const MAX_HANDLES: usize = 10_000;

/// Epoch tick: how often a running guest yields to the scheduler and checks its deadline.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The compiled engine and linker every tool instance is created from.
#[derive(Clone)]
pub struct Runtime {
    engine: Engine,
    linker: Arc<Linker<CallState>>,
    /// The CPU level compiled code targets, for [`Runtime::compiler`].
    cpu: compile_settings::Cpu,
}

/// The settings the runtime's engine and its compiler engine share, so that code from one is
/// code the other takes. What compiled code depends on is shared with the build script's
/// precompiler (`compile_settings`).
fn code_config(cpu: compile_settings::Cpu) -> wasmtime::Config {
    let mut config = wasmtime::Config::new();
    compile_settings::apply(&mut config, cpu);
    config.max_wasm_stack(limits::MAX_WASM_STACK);
    config
}

/// How one call ended, besides the tool's own success or error.
pub type CallOutcome = Result<Result<(), String>, wasmtime::Error>;

impl Runtime {
    pub fn new() -> wasmtime::Result<Runtime> {
        let cpu = compile_settings::Cpu::from_env().map_err(wasmtime::Error::msg)?;
        let mut config = code_config(cpu);
        // A fresh instance per call is the isolation we want; the pooling allocator makes it
        // cheap (pre-reserved memories and instance slots, reset instead of remapped). Where
        // the address space cannot be reserved, instances are allocated on demand instead.
        config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool()));
        let engine = match Engine::new(&config) {
            Ok(engine) => engine,
            Err(error) => {
                tracing::warn!(%error, "pooling allocator unavailable; allocating instances on demand");
                config.allocation_strategy(wasmtime::InstanceAllocationStrategy::OnDemand);
                Engine::new(&config)?
            }
        };
        let mut linker = Linker::new(&engine);
        // Every contract version the server links: the newest natively, released older ones
        // through their adapters (`host_api/v0_2.rs`).
        bindings::v0_3::Plugin::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
            &mut linker,
            |state| state,
        )?;
        bindings::v0_2::Plugin::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
            &mut linker,
            |state| state,
        )?;
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        spawn_epoch_ticker(&engine);
        Ok(Runtime {
            engine,
            linker: Arc::new(linker),
            cpu,
        })
    }

    /// An engine that only compiles, with this runtime's code settings (its code is what
    /// [`Runtime::engine`] accepts) and Cranelift's incremental cache in `functions`: a
    /// plugin compiled again after an edit recompiles only the functions that changed.
    pub fn compiler(&self, functions: Arc<dyn wasmtime::CacheStore>) -> wasmtime::Result<Engine> {
        let mut config = code_config(self.cpu);
        config.enable_incremental_compilation(functions)?;
        Engine::new(&config)
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Links a component once; every call then instantiates it afresh from this. Its memory
    /// images are made by the loader before (`loading::memory_image`), so a call never meets
    /// the kernel refusing one.
    pub fn link(&self, component: &Component) -> wasmtime::Result<ToolPre> {
        ToolPre::new(self.linker.instantiate_pre(component)?)
    }

    /// A store with the call's limits: fuel for CPU, the memory limiter, and an epoch
    /// callback that yields every tick and interrupts the guest once the wall clock runs out.
    fn store(&self, state: CallState) -> (Store<CallState>, wasmtime::Result<()>) {
        let limits = state.limits;
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        // Bytes one host call may copy out of the guest: what the output budget allows, plus
        // room for the call's own arguments. wasmtime's default (128 MiB) is far above it.
        store.set_hostcall_fuel(limits.output_bytes.saturating_add(HOSTCALL_SLACK));
        store.data_mut().table.set_max_capacity(MAX_HANDLES);
        let fuel = store.set_fuel(limits.fuel);
        let deadline = Instant::now() + limits.wall_clock;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |mut context| {
            if Instant::now() >= deadline {
                context.data_mut().wall_clock_hit = true;
                return Ok(UpdateDeadline::Interrupt);
            }
            Ok(UpdateDeadline::Yield(1))
        });
        (store, fuel)
    }

    /// Evaluates a component's definition for these flags, in a throwaway instance, under
    /// `limits` (fuel, memory, wall clock: a definition is bounded like a call). An error
    /// that a limit caused is that `LimitExceeded`.
    pub async fn definition(
        &self,
        pre: &ToolPre,
        flags_json: &str,
        budget: Limits,
    ) -> wasmtime::Result<(ToolDefinition, Option<String>)> {
        // No capability is needed to describe oneself.
        let grants =
            Arc::new(Grants::new("", Default::default(), None).map_err(wasmtime::Error::msg)?);
        let state = CallState::new(None, grants, budget);
        let (mut state, outcome) = self
            .run(state, async |store: &mut Store<CallState>| {
                pre.definition(store, flags_json).await
            })
            .await;
        let output_schema = state.response.output_schema.take();
        outcome
            .map(|definition| (definition, output_schema))
            .map_err(|error| {
                match limits::classify(
                    &error,
                    &state.limits,
                    state.limiter.refused.as_ref(),
                    state.wall_clock_hit,
                ) {
                    Some(exceeded) => wasmtime::Error::new(exceeded),
                    None => error,
                }
            })
    }

    /// Runs the handler in a fresh instance. The state (and the session lock it holds) comes
    /// back whatever happens in the guest, so the response can still be rendered.
    pub async fn handle(
        &self,
        pre: &ToolPre,
        state: CallState,
        params_json: &str,
        page: Option<u32>,
    ) -> (CallState, CallOutcome) {
        // The call's page is checked before any guest code runs (a plugin under URL patterns
        // reads no page outside them, whatever moved it since its last call).
        let mut state = state;
        if let Err(denied) = state.begin(page).await {
            return (state, Err(wasmtime::Error::new(denied)));
        }
        let (mut state, outcome) = self
            .run(state, async |store: &mut Store<CallState>| {
                pre.handle(store, params_json, page).await
            })
            .await;
        // Whatever ended the call (a return, a trap, the budget), nothing it set up in the
        // browser outlives it, and a page it moved outside its URL patterns is reported.
        let cleaned = state.clean_up().await;
        let limit = state.limits.output_bytes;
        let outcome = outcome.map_err(|error| copy_limit_as_output_limit(error, limit));
        let outcome = match cleaned {
            Err(denied) if !outcome.as_ref().is_err_and(|error| error.is::<Denied>()) => {
                Err(wasmtime::Error::new(denied))
            }
            _ => outcome,
        };
        // The handler's error text is output too.
        let outcome = match outcome {
            Ok(Err(message)) => match state.charge_text(message.len()) {
                Ok(()) => Ok(Err(message)),
                Err(exceeded) => Err(exceeded),
            },
            other => other,
        };
        (state, outcome)
    }

    /// Runs guest work under the state's limits. Host work the guest waits on is bounded by
    /// the same wall clock (the future is dropped), so a call always ends.
    async fn run<T>(
        &self,
        state: CallState,
        work: impl AsyncFnOnce(&mut Store<CallState>) -> wasmtime::Result<T>,
    ) -> (CallState, wasmtime::Result<T>) {
        let budget = state.limits.wall_clock;
        let (mut store, ready) = self.store(state);
        if let Err(error) = ready {
            return (store.into_data(), Err(error));
        }
        let fuel = store.data().limits.fuel;
        let outcome = tokio::time::timeout(budget, work(&mut store)).await;
        if let Ok(left) = store.get_fuel() {
            tracing::debug!(fuel_used = fuel - left, "plugin call finished");
        }
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(_elapsed) => {
                store.data_mut().wall_clock_hit = true;
                Err(wasmtime::Error::new(LimitExceeded::WallClock { budget }))
            }
        };
        (store.into_data(), outcome)
    }
}

/// wasmtime stops a guest that hands the host more bytes in one call than the store's
/// hostcall fuel (set from the output budget): for the guest's returned error text or a
/// declared line, that is the output budget being exceeded, and is reported as such.
fn copy_limit_as_output_limit(error: wasmtime::Error, limit: usize) -> wasmtime::Error {
    let copy_limit = error
        .chain()
        .any(|cause| cause.to_string().contains("fuel allocated for hostcalls"));
    if copy_limit {
        wasmtime::Error::new(LimitExceeded::OutputBytes { limit })
    } else {
        error
    }
}

/// Slots for concurrent instances (calls in flight across tenants, plus definitions being
/// evaluated); each memory slot is address space reserved up to the largest memory a policy may
/// grant (`policy::limits::MAX_MEMORY_BYTES`).
fn pool() -> wasmtime::PoolingAllocationConfig {
    const SLOTS: u32 = 128;
    let mut pool = wasmtime::PoolingAllocationConfig::default();
    pool.total_component_instances(SLOTS)
        .total_core_instances(SLOTS * 8)
        .total_memories(SLOTS * 2)
        .total_tables(SLOTS * 4)
        .total_stacks(SLOTS)
        .max_memory_size(crate::policy::limits::MAX_MEMORY_BYTES)
        .table_elements(100_000)
        .max_component_instance_size(8 << 20)
        .max_core_instance_size(8 << 20);
    pool
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
