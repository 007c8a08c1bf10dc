//! devtools-mcp as a library: the server's parts, for the `devtools-mcp` binary (see
//! `main.rs`) and for the micro benchmarks in `benches/`. The modules are layers, listed
//! deepest first in [`layers::LAYERS`] (a test keeps every import pointing down):
//!
//! - leaves that decide or compute without a browser: `sandbox` (file paths), `policy` (who
//!   may do what: grants, limits, URL rules, protected code folders, signatures), `schema`,
//!   `snapshot`, `net` (tenants' egress), engines in `crates/` (trace, CSS, collectors);
//! - the state a call acts on: `browser` (CDP and Chromium), `session`, `response`;
//! - tools: `plugin` (components, their host functions, each behind the dispatcher's gate),
//!   `pipeline` (one call, in the reference's order), `catalog` (which tools are served);
//! - the faces: `tenants` and `http` (MCP over authenticated HTTP), `mcp` (stdio),
//!   `oneshot`, `plugin_cli`, `cli` (flags, `--config` and its reload).
//!
//! A new host capability is one slice: its WIT interface, a host adapter in
//! `plugin/host_api/`, its grant in `policy/capability.rs`, its browser feature under
//! `browser/`, and an engine crate under `crates/` if it computes.

pub mod browser;
pub mod catalog;
pub mod cli;
pub mod engine;
pub mod heap_analysis;
pub mod http;
pub mod layers;
pub mod lighthouse;
pub mod mcp;
pub mod net;
pub mod oneshot;
pub mod pipeline;
pub mod plugin;
pub mod plugin_cli;
pub mod policy;
pub mod response;
pub mod sandbox;
pub mod schema;
pub mod session;
pub mod snapshot;
pub mod telemetry;
pub mod tenants;
