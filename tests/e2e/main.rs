//! End-to-end tests: the real `devtools-mcp` binary, spoken to over MCP stdio, driving real
//! Chromium on fixture pages served by the tests on 127.0.0.1, with the real tool components.

mod catalog;
mod debugging;
mod extensions;
mod fixtures;
mod harness_selftest;
mod hot_reload;
mod http;
mod input;
mod integrity;
mod lifecycle;
mod lighthouse;
mod page_tools;
mod parity;
mod performance;
mod pipeline;
mod plugin_cli;
mod python_client;
mod python_plugin;
mod sandbox;
mod screencast;
mod styles;
mod support;
mod tools;
mod vision;
