//! How the `devtools-mcp` binary was built, for `--version`. A crate of its own: its build
//! script reruns on every commit, and only this small crate and the binary's link follow (in
//! the host library, or in ../server's build script, which precompiles the built-in tools, a
//! commit would cost minutes of every build).

/// The short hash of the commit the binary was built from; `unknown` outside a git checkout
/// (a source tarball) or without git.
pub const COMMIT: &str = env!("DEVTOOLS_MCP_COMMIT");

/// The target triple the binary was built for, e.g. `x86_64-unknown-linux-gnu`.
pub const TARGET: &str = env!("DEVTOOLS_MCP_TARGET");
