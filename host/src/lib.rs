//! devtools-mcp as a library: the pipeline and its parts, for the `devtools-mcp` binary (see
//! `main.rs`) and for the micro benchmarks in `benches/`. The modules read as the pipeline:
//! `plugin` (components, limits, policy), `pipeline` (one call, in the reference's order),
//! `session` and `browser` (the state a call acts on), `response` and `snapshot` (what it
//! answers), `sandbox` (file paths), `mcp` (the protocol face), `http` and `tenants` (MCP over
//! streamable HTTP for several tenants).

pub mod browser;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod engine;
pub mod heap_analysis;
pub mod http;
pub mod lighthouse;
pub mod mcp;
pub mod net;
pub mod oneshot;
pub mod pipeline;
pub mod plugin;
pub mod plugin_cli;
pub mod response;
pub mod sandbox;
pub mod schema;
pub mod session;
pub mod snapshot;
pub mod telemetry;
pub mod tenants;
