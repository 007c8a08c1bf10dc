//! The binary as a user installs it: copied alone into an empty folder (what `cargo install`
//! leaves in `~/.cargo/bin`), started from another empty folder, with an empty compiled-code
//! cache. It must serve every built-in tool, drive the browser, and compile nothing.

use crate::fixtures;
use crate::support::{McpServer, binary_dir, browser_args};
use serde_json::json;
use std::path::{Path, PathBuf};

/// `<root>/bin/devtools-mcp`, a copy of the binary under test and nothing else.
fn install_alone(root: &Path) -> PathBuf {
    let bin = root.join("bin");
    std::fs::create_dir(&bin).expect("bin dir");
    let installed = bin.join("devtools-mcp");
    std::fs::copy(env!("CARGO_BIN_EXE_devtools-mcp"), &installed).expect("copy the binary");
    installed
}

/// Runs `program args` with `dir` as its working directory (GNU env's `-C`), so nothing
/// beside the test's own folder can help it.
async fn start_in(dir: &Path, program: &Path, args: Vec<String>) -> Result<McpServer, String> {
    let mut command = vec![
        "-C".to_string(),
        dir.to_string_lossy().into_owned(),
        program.to_string_lossy().into_owned(),
    ];
    command.extend(args);
    McpServer::start_program(Path::new("/usr/bin/env"), command, Vec::new()).await
}

#[tokio::test]
async fn the_binary_alone_serves_every_tool_and_compiles_nothing_on_its_first_start() {
    let root = tempfile::tempdir().expect("install root");
    let installed = install_alone(root.path());
    let elsewhere = tempfile::tempdir().expect("working dir");
    let cache = tempfile::tempdir().expect("empty cache");
    let mut args = browser_args();
    // The later --cache-dir wins over the shared one in browser_args.
    args.extend([
        "--cache-dir".to_string(),
        cache.path().to_string_lossy().into_owned(),
    ]);
    let server = start_in(elsewhere.path(), &installed, args)
        .await
        .expect("the installed binary starts");

    let names: Vec<String> = server
        .list_tools()
        .await
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    let beside_the_build = std::fs::read_dir(binary_dir().join("plugins"))
        .expect("plugins/ beside the built binary")
        .count();
    assert!(beside_the_build > 20, "{beside_the_build} built-in tools");
    for tool in [
        "new_page",
        "take_snapshot",
        "click",
        "navigate_page",
        "list_pages",
    ] {
        assert!(names.iter().any(|name| name == tool), "{tool}: {names:?}");
    }

    let listed = listing(&server).await;
    let pages = fixtures::server();
    let url = pages.url("/");
    let opened = server.call("new_page", json!({ "url": url })).await;
    assert!(!opened.is_error, "{}", opened.text);
    assert!(opened.text.contains(&url), "{}", opened.text);
    server.shutdown().await;

    let compiled = cache_files(cache.path(), "cwasm");
    assert!(
        compiled.is_empty(),
        "the built-in tools come compiled in the binary, yet the first start compiled {compiled:?}"
    );
    let records = cache_files(cache.path(), "rec");
    assert_eq!(records.len(), 1, "one record of definitions: {records:?}");

    // The second start describes the tools from that record, running none of their code,
    // and links a tool's code on its first call: same tools, same answers.
    let again = server_again(&elsewhere, &installed, &cache).await;
    assert_eq!(listing(&again).await, listed);
    let opened = again.call("new_page", json!({ "url": url })).await;
    assert!(!opened.is_error, "{}", opened.text);
    assert!(opened.text.contains(&url), "{}", opened.text);
    again.shutdown().await;

    // A record whose text was changed (a description rewritten to steer the model) is
    // refused, logged, and the tools are described by their own code again.
    let record = &records[0];
    let mut bytes = std::fs::read(record).expect("record");
    let body = 40;
    let at = bytes[body..]
        .windows(14)
        .position(|window| window == b"Open a new tab")
        .map(|at| at + body)
        .expect("new_page's description in the record");
    bytes[at..at + 14].copy_from_slice(b"Shut a new tab");
    std::fs::write(record, &bytes).expect("alter the record");
    let refused = server_again(&elsewhere, &installed, &cache).await;
    assert_eq!(listing(&refused).await, listed);
    assert!(
        refused
            .stderr()
            .contains("refusing remembered tool definitions"),
        "{}",
        refused.stderr()
    );
    refused.shutdown().await;
    let installed_files = std::fs::read_dir(installed.parent().expect("bin"))
        .expect("bin dir")
        .count();
    assert_eq!(installed_files, 1, "the binary needs nothing beside it");
}

/// The files of `cache` with this extension.
fn cache_files(cache: &Path, extension: &str) -> Vec<PathBuf> {
    std::fs::read_dir(cache)
        .expect("cache dir")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|found| found == extension))
        .collect()
}

async fn server_again(
    dir: &tempfile::TempDir,
    installed: &Path,
    cache: &tempfile::TempDir,
) -> McpServer {
    let mut args = browser_args();
    args.extend([
        "--cache-dir".to_string(),
        cache.path().to_string_lossy().into_owned(),
    ]);
    start_in(dir.path(), installed, args)
        .await
        .expect("the installed binary starts again")
}

/// Every tool's name, description and schema, as listed.
async fn listing(server: &McpServer) -> Vec<String> {
    server
        .list_tools()
        .await
        .iter()
        .map(|tool| serde_json::to_string(tool).expect("tool as JSON"))
        .collect()
}

#[tokio::test]
async fn builtin_plugins_still_replaces_the_embedded_tools() {
    let root = tempfile::tempdir().expect("install root");
    let installed = install_alone(root.path());
    let builtins = tempfile::tempdir().expect("builtin folder");
    std::fs::copy(
        binary_dir().join("plugins/list_pages.wasm"),
        builtins.path().join("list_pages.wasm"),
    )
    .expect("copy one tool");
    let mut args = browser_args();
    args.extend([
        "--builtin-plugins".to_string(),
        builtins.path().to_string_lossy().into_owned(),
    ]);
    let server = start_in(root.path(), &installed, args)
        .await
        .expect("start with --builtin-plugins");
    let names: Vec<String> = server
        .list_tools()
        .await
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert_eq!(names, ["list_pages"]);
    server.shutdown().await;
}
