//! The faces the server shows: MCP over stdio to one client ([`stdio`]), one call from the
//! command line ([`oneshot`]), and MCP over authenticated streamable HTTP ([`http`]) to the
//! [`tenants`] of a tenants file. Each runs calls through the pipeline.

pub mod http;
pub mod oneshot;
pub mod stdio;
pub mod tenants;
