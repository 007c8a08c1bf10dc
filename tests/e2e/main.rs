//! End-to-end tests: the real `devtools-mcp` binary, spoken to over MCP stdio, driving real
//! Chromium on fixture pages served by the tests on 127.0.0.1, with the real tool components.

mod attach;
mod container;
mod contract;
mod debugging;
mod deploy;
mod differential;
mod fixtures;
mod harness_selftest;
mod heap;
mod hostile_clients;
mod hostile_tenants;
mod hot_reload;
mod http;
mod input;
mod install;
mod integrity;
mod lifecycle;
mod lighthouse;
mod oauth;
mod parity;
mod performance;
mod pipeline;
mod plugin_cli;
mod python_client;
mod python_plugin;
mod sandbox;
mod sandbox_load;
mod screencast;
mod snapshot_frames;
mod styles;
mod support;
mod tenant_quotas;
mod tools;
