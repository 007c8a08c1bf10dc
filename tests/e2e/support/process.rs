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

/// Runs the server binary with `args` (a CLI subcommand): whether it succeeded, and its stdout
/// and stderr together.
pub fn devtools_mcp(args: &[&str]) -> (bool, String) {
    let output = command(env!("CARGO_BIN_EXE_devtools-mcp"))
        .args(args)
        .output()
        .expect("run devtools-mcp");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// A key pair made by `plugin keygen` in `dir`: (private key file, base64 public key).
pub fn keygen(dir: &std::path::Path, name: &str) -> (String, String) {
    let key = dir.join(name).to_string_lossy().into_owned();
    let (ok, text) = devtools_mcp(&["plugin", "keygen", &key]);
    assert!(ok, "{text}");
    let public = text.lines().last().unwrap_or_default().trim().to_string();
    assert_eq!(public.len(), 44, "a base64 32-byte key: {text}");
    (key, public)
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

/// Waits until something accepts connections on the loopback `port`; panics after `limit`
/// naming `what`.
pub fn wait_for_port(port: u16, limit: std::time::Duration, what: &str) {
    let deadline = std::time::Instant::now() + limit;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A program on `PATH`, or in the system folders a non-root `PATH` may lack.
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|folder| folder.join(program))
        .find(|candidate| candidate.is_file())
}
