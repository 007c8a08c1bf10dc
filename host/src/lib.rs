//! devtools-mcp as a library: the server's parts, for the `devtools-mcp` binary (`server/`,
//! whose `main.rs` calls [`cli::main`] with the built-in tools it embeds), the end-to-end tests,
//! the fuzz targets and the micro benchmarks (`bench/benches/`).
//!
//! # Layers
//!
//! The modules are layers that read as the call, listed deepest first in
//! [`layers::LAYERS`]; a module may use only the ones below it, and a test fails on an import
//! that points up (the idea of Chromium's `DEPS` files):
//!
//! - `cli` turns the command line into a running server; `config` is what the operator says
//!   (flags, subcommands, the `--config` file);
//! - `serve` holds the faces: `stdio`, `oneshot`, `http` and its `tenants`;
//! - `pipeline` runs one call in the reference's order against the current tool set
//!   (`pipeline::tools`: the set, the current one, the folders it is loaded from);
//! - `runtime` is the wasm side in two rooms: `loading` (files, componentizing, the cache,
//!   memory images, the embedded tools) builds on `calling` (bindings, the engine and its
//!   limits, one host adapter per capability in `calling/host_api/`, each function passing the
//!   dispatcher's gate), never the reverse;
//! - `response` is what an answer holds; `session` is one client's browser state;
//! - `browser` is Chromium, itself in three layers: `features` -> `page` -> `cdp`;
//! - leaves anything may use: `shared_pool` (the one type for capacity tenants share),
//!   `policy` (who may do what, each rule once), `sandbox` (the file gateway), `schema` (the
//!   one bounded validator), `engine` (budgets for engines), `net` (tenants' egress),
//!   `snapshot`, `memory_analysis`, `lighthouse`, `telemetry`, `fswatch`.
//!
//! Engines that compute without I/O are crates of their own under `crates/` (snapshot text,
//! heap snapshots, trace insights, the CSS cascade, the console and network models): data in,
//! data and the reference's text out, no tokio, no files, optimised in dev builds.
//!
//! # Where a new capability goes
//!
//! One vertical slice, one name from WIT to engine: its WIT interface, a file of its own named
//! after it, in the next contract patch (a new `wit/since_vX.Y.Z`, never a released one), its
//! host adapter `runtime/calling/host_api/<name>.rs` (each function declared with its
//! capability and marks, so the gate applies them), its grant in `policy/capability.rs`, its
//! browser feature `browser/features/<name>.rs` (a type that keeps its state in the page's
//! slot), and an engine crate `crates/<name>` if it computes
//! (`layers::tests::every_capability_has_one_name`). Files stay under ~500 lines; one concept
//! per module.

pub mod activity;
pub mod browser;
pub mod cli;
pub mod config;
pub mod engine;
pub mod fswatch;
pub mod layers;
pub mod lighthouse;
pub mod memory_analysis;
pub mod net;
pub mod pipeline;
pub mod policy;
pub mod printable;
pub mod response;
pub mod runtime;
pub mod sandbox;
pub mod schema;
pub mod serve;
pub mod session;
pub mod shared_pool;
pub mod snapshot;
pub mod source_map;
pub mod telemetry;
