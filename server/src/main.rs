//! devtools-mcp: an MCP server for driving Chromium in which every tool is a sandboxed
//! WebAssembly component (see `devtools_mcp::cli` for what the binary does). This crate adds
//! the built-in tools, embedded by build.rs, to the host library.

mod builtins;

fn main() -> std::process::ExitCode {
    devtools_mcp::cli::main(&builtins::BUILTINS)
}
