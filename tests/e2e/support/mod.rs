//! Test-side support for the end-to-end tests: a fixture web server, an MCP client driving the
//! real server binary, and process helpers to check that no Chromium outlives the server.

// Each test uses only some helpers (and re-exports); the rest would warn in every build.
#![allow(dead_code, unused_imports)]

mod fixture_server;
mod http;
mod mcp;
mod private_tmp;
mod process;
pub mod reference;
pub mod side_by_side;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The folder of the server binary under test: `plugins/`, `test-plugins*/` are beside it.
pub fn binary_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_devtools-mcp"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

pub use fixture_server::{FixtureServer, Route};
pub use http::{HttpClient, HttpServer, ServerSetup, TenantSpec, refused_start};
pub use mcp::{
    McpServer, ToolOutput, browser_args, cache_dir, chromium_path, server_command, server_env,
    server_temp_dir, timeout,
};
pub use private_tmp::PrivateTmp;
pub use process::{command, devtools_mcp, free_port, keygen, tokio_command, wait_for_port, which};

/// Live (non-zombie) processes descending from `pid`, found through the ppid field of
/// `/proc/*/stat`. Take this list before shutting the server down: once it has exited its
/// children are re-parented and no longer descend from it.
pub fn descendants(pid: u32) -> Vec<u32> {
    let processes = process_table();
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for (&child, info) in &processes {
            if info.ppid == parent && !found.contains(&child) {
                found.push(child);
                frontier.push(child);
            }
        }
    }
    found.retain(|p| processes.get(p).is_some_and(|info| info.state != 'Z'));
    found.sort_unstable();
    found
}

/// Whether `pid` exists and is not a zombie (an exited process nobody has reaped yet).
pub fn is_alive(pid: u32) -> bool {
    read_stat(pid).is_some_and(|info| info.state != 'Z')
}

/// Polls until none of `pids` is alive or `timeout` passes; returns the survivors.
pub async fn wait_until_gone(pids: &[u32], timeout: Duration) -> Vec<u32> {
    let deadline = Instant::now() + timeout;
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|&p| is_alive(p)).collect();
        if alive.is_empty() || Instant::now() >= deadline {
            return alive;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// SIGKILLs `pid` and its descendants (found first, while the ppid chains still hold). Used
/// to clean up after a failed test.
pub fn kill_tree(pid: u32) {
    let mut pids = descendants(pid);
    pids.push(pid);
    sigkill(pids.iter().map(u32::to_string));
}

/// The names in `folder`, sorted; none when it cannot be read.
pub fn file_names(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// SIGKILLs each of `pids` (a browser, its renderers) at once.
pub fn kill_all(pids: &[u32]) {
    sigkill(pids.iter().map(u32::to_string));
}

/// SIGKILLs every process in the process group `pgid`, which also reaches processes whose
/// parent already died.
pub fn kill_group(pgid: u32) {
    sigkill([format!("-{pgid}")]);
}

/// std can only signal processes it spawned itself (and `unsafe` is denied, so no
/// `libc::kill`): this runs procps' `kill`. Negative targets are process groups.
fn sigkill(targets: impl IntoIterator<Item = String>) {
    let _ = crate::support::command("kill")
        .args(["-KILL", "--"])
        .args(targets)
        .stderr(std::process::Stdio::null())
        .status();
}

/// Replaces the fixture server's port with `PORT`, so snapshots of tool output are stable.
pub fn normalize(text: &str, fixtures: &FixtureServer) -> String {
    let port = fixtures.port();
    text.replace(&format!("127.0.0.1:{port}"), "127.0.0.1:PORT")
        .replace(&format!("localhost:{port}"), "localhost:PORT")
}

/// The fields of `/proc/<pid>/stat` the helpers need.
struct ProcInfo {
    ppid: u32,
    state: char,
}

fn process_table() -> HashMap<u32, ProcInfo> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, read_stat(pid)?)))
        .collect()
}

/// Parses `pid (comm) state ppid ...`; `comm` may hold spaces and parentheses, so the fields
/// are read after the last `)`.
fn read_stat(pid: u32) -> Option<ProcInfo> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some(ProcInfo { ppid, state })
}
