//! Every process a test starts goes through here, so every server under test gets its private
//! temp dir, whoever starts it: the test itself, the one-shot CLI, the MCP Inspector (Node),
//! the Python client, a shell. A server inherits `TMPDIR` from the program that starts it, and
//! the harness's `TMPDIR` keeps the compiled-code cache out of the server's temp dir, which it
//! would refuse as a code folder inside a writable one (a clone under `/tmp`, or any `TMPDIR`).
//! `harness_selftest::tests_start_processes_only_through_the_harness` holds every test to it.

use std::ffi::OsStr;

/// A command with the servers' environment ([`super::server_env`]).
pub fn command(program: impl AsRef<OsStr>) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    command.envs(super::server_env());
    command
}

/// The same, for tokio.
pub fn tokio_command(program: impl AsRef<OsStr>) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command.envs(super::server_env());
    command
}
