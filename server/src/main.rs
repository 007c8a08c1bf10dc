//! devtools-mcp: an MCP server for driving Chromium in which every tool is a sandboxed
//! WebAssembly component (see `devtools_mcp::cli` for what the binary does). This crate adds
//! the built-in tools, embedded by build.rs, and how it was built (for `--version`) to the
//! host library.

mod builtins;

fn main() -> std::process::ExitCode {
    let build = devtools_mcp::config::version::BuildInfo {
        commit: devtools_build_info::COMMIT,
        target: devtools_build_info::TARGET,
    };
    devtools_mcp::cli::main(&builtins::BUILTINS, build)
}
