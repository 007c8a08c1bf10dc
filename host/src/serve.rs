//! The faces the server shows: MCP over stdio to one client ([`stdio`]), one call from the
//! command line ([`oneshot`]), and MCP over authenticated streamable HTTP ([`http`]) to the
//! [`tenants`] of a tenants file. Each runs calls through the pipeline.

pub mod http;
pub mod live_view;
pub mod oneshot;
pub mod progress;
pub mod stdio;
pub mod tasks;
pub mod tenants;

/// What `initialize` and `server/discover` tell a model about using the server well. 1.11.0
/// sends no instructions, so no 1.11.0 text changes (parity compares capabilities, not these).
pub const INSTRUCTIONS: &str = include_str!("serve/instructions.md");

/// What `initialize` declares, as 1.11.0 declares it whatever the flags: tools whose list may
/// change (`notifications/tools/list_changed`) and logging (`logging/setLevel` is accepted).
#[allow(deprecated)] // logging: see `set_level` in stdio.rs
pub fn capabilities() -> rmcp::model::ServerCapabilities {
    rmcp::model::ServerCapabilities::builder()
        .enable_logging()
        .enable_tools()
        .enable_tool_list_changed()
        .build()
}

/// [`capabilities`], with `resources` under an output budget (`--maxOutputTokens`): the
/// answers it cut are read whole with `resources/read`.
pub fn capabilities_for(output_budget: bool) -> rmcp::model::ServerCapabilities {
    let mut capabilities = capabilities();
    if output_budget {
        capabilities.resources = Some(Default::default());
    }
    capabilities
}
