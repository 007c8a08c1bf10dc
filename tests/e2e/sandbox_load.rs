//! The hostile suite at load time: where code may live, what a definition may say and do,
//! and components that are not what they claim. Each case is a real server start (or a
//! `plugin check`) that must end in a clear error naming the file and the rule, never a
//! panic, a hang or a start-up that takes N times a plugin's budget.

use crate::support::{McpServer, binary_dir, browser_args, server_command, server_temp_dir};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A fresh plugin folder in `scratch`.
/// A file of `tests/fixtures/malformed` (see its README).
fn malformed(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/malformed")
        .join(name)
}

fn plugin_folder(scratch: &Path) -> PathBuf {
    let plugins = scratch.join("plugins");
    std::fs::create_dir_all(&plugins).expect("plugin folder");
    plugins
}

/// The hostile_definition fixture with its configuration block rewritten (same length).
fn hostile_definition(config: &str) -> Vec<u8> {
    const MARKER: &[u8] = b"DTMCP-CONFIG:";
    const BLOCK: usize = 512;
    let mut bytes = std::fs::read(binary_dir().join("test-plugins/hostile_definition.wasm"))
        .expect("hostile_definition fixture");
    let start = bytes
        .windows(MARKER.len())
        .position(|window| window == MARKER)
        .expect("the configuration block");
    let mut block = format!("DTMCP-CONFIG:{config}|").into_bytes();
    assert!(block.len() <= BLOCK, "configuration too long");
    block.resize(BLOCK, b' ');
    bytes[start..start + BLOCK].copy_from_slice(&block);
    bytes
}

fn config(mode: &str, name: &str, description: &str, pattern: &str) -> String {
    format!(
        "mode={mode}|name={name}|title=Hostile definition|description={description}|pattern={pattern}"
    )
}

/// Starts a server on `plugins` with `extra` flags; `Err` is the start-up failure text.
async fn start(plugins: &Path, extra: &[&str]) -> Result<McpServer, String> {
    let mut args = browser_args();
    args.extend([
        "--plugin-dir".into(),
        plugins.to_string_lossy().into_owned(),
    ]);
    args.extend(extra.iter().map(|arg| arg.to_string()));
    McpServer::start_with(args, Vec::new()).await
}

/// Why the server refused to run: at start, or, for a plugin it was still compiling when it
/// answered `initialize`, as soon as that plugin failed (it exits then, saying why on stderr).
async fn refused(plugins: &Path, extra: &[&str]) -> String {
    match start(plugins, extra).await {
        Ok(server) => {
            let deadline = Instant::now() + Duration::from_secs(90);
            while crate::support::is_alive(server.pid()) && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            if crate::support::is_alive(server.pid()) {
                server.shutdown().await;
                panic!("the server must refuse to run ({extra:?})")
            }
            server.stderr()
        }
        Err(error) => error,
    }
}

#[tokio::test]
async fn code_folders_that_plugins_or_tenants_could_write_to_are_refused_at_start() {
    let scratch = tempfile::tempdir().expect("scratch");
    let workspace = scratch.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let plugins = plugin_folder(scratch.path());
    let workspace_arg = workspace.to_string_lossy().into_owned();

    // The cache inside a workspace: a plugin with files.write could plant native code there.
    let cache_in_workspace = workspace.join("cache").to_string_lossy().into_owned();
    let error = refused(
        &plugins,
        &[
            "--workspace",
            &workspace_arg,
            "--cache-dir",
            &cache_in_workspace,
        ],
    )
    .await;
    assert!(
        error.contains(&format!(
            "Refusing to start: the compiled-code cache (--cacheDir) {cache_in_workspace} overlaps the --workspace {workspace_arg}"
        )) && error.contains("--cacheDir"),
        "{error}"
    );
    // The cache in the temp dir, which is always a file root.
    let cache_in_temp = server_temp_dir().join("planted-cache");
    let error = refused(&plugins, &["--cache-dir", &cache_in_temp.to_string_lossy()]).await;
    assert!(error.contains("overlaps the temp dir"), "{error}");
    // A plugin folder inside a workspace: one plugin could replace another's code.
    let inner_plugins = plugin_folder(&workspace);
    let error = refused(&inner_plugins, &["--workspace", &workspace_arg]).await;
    assert!(
        error.contains(&format!(
            "the --pluginDir {} overlaps the --workspace {workspace_arg}",
            inner_plugins.display()
        )),
        "{error}"
    );
    // A workspace that contains the plugin folder is the same overlap.
    let error = refused(
        &plugins,
        &["--workspace", &scratch.path().to_string_lossy()],
    )
    .await;
    assert!(error.contains("the --pluginDir"), "{error}");

    // The cache folder itself: not a symlink, not someone else's.
    let real = scratch.path().join("real-cache");
    std::fs::create_dir(&real).expect("real cache");
    let link = scratch.path().join("link-cache");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let error = refused(&plugins, &["--cache-dir", &link.to_string_lossy()]).await;
    assert!(
        error.contains("is unusable: it is a symlink or not a folder"),
        "{error}"
    );
    let foreign = scratch.path().join("foreign-cache");
    std::fs::create_dir(&foreign).expect("foreign cache");
    let chowned = crate::support::command("chown")
        .arg("65534")
        .arg(&foreign)
        .status();
    if chowned.is_ok_and(|status| status.success()) {
        let error = refused(&plugins, &["--cache-dir", &foreign.to_string_lossy()]).await;
        assert!(error.contains("is owned by uid 65534"), "{error}");
    }
}

#[tokio::test]
async fn a_definition_is_bounded_by_the_plugin_limits_and_plugins_load_together() {
    let scratch = tempfile::tempdir().expect("scratch");
    let plugins = plugin_folder(scratch.path());
    // Four plugins whose definition() never returns.
    for index in 0..4 {
        let bytes = hostile_definition(&config("loop", &format!("slow_{index}"), "x", "^a$"));
        std::fs::write(plugins.join(format!("slow_{index}.wasm")), bytes).expect("write");
    }
    let started = Instant::now();
    let error = refused(
        &plugins,
        &["--plugin-timeout", "2", "--plugin-fuel", "1000000000000"],
    )
    .await;
    let took = started.elapsed();
    assert!(
        error.contains(&format!(
            "Plugin {} has no usable definition: computing its definition was stopped: it ran longer than its time budget of 2 s",
            plugins.join("slow_0.wasm").display()
        )),
        "{error}"
    );
    // Loaded together: about one budget, not four.
    assert!(took < Duration::from_secs(7), "start-up took {took:?}");

    let error = refused(&plugins, &["--plugin-fuel", "50000000"]).await;
    assert!(
        error.contains(&format!(
            "Plugin {} has no usable definition: computing its definition was stopped: it used more than its CPU budget of 50000000 fuel units",
            plugins.join("slow_0.wasm").display()
        )),
        "{error}"
    );
    for index in 0..4 {
        std::fs::remove_file(plugins.join(format!("slow_{index}.wasm"))).expect("remove");
    }
    let bytes = hostile_definition(&config("memory", "greedy", "x", "^a$"));
    std::fs::write(plugins.join("greedy.wasm"), bytes).expect("write");
    let error = refused(&plugins, &["--plugin-memory", "16"]).await;
    assert!(
        error.contains(&format!(
            "Plugin {} has no usable definition: computing its definition was stopped: it tried to grow its memory to",
            plugins.join("greedy.wasm").display()
        ))
            && error.contains("over its limit of 16.0 MiB"),
        "{error}"
    );
}

#[tokio::test]
async fn definitions_must_name_tools_plainly_and_keep_schemas_linear() {
    let scratch = tempfile::tempdir().expect("scratch");
    let plugins = plugin_folder(scratch.path());
    let file = plugins.join("bad.wasm");
    let cases = [
        (
            config("normal", "click\u{202E}kcilc", "x", "^a$"),
            "its tool name is refused: tool names may use only A-Z, a-z, 0-9, `_`, `-` and `.`",
        ),
        (
            config(
                "normal",
                "fine_name",
                "Looks harmless\u{1b}[8m hidden",
                "^a$",
            ),
            "its description contains the control or bidi character \\u{1b}",
        ),
        (
            config("normal", "fine_name", "x", "^(a)\\1$"),
            "its input schema is refused: it is not a valid JSON Schema for this server",
        ),
    ];
    for (configuration, rule) in cases {
        std::fs::write(&file, hostile_definition(&configuration)).expect("write");
        let error = refused(&plugins, &[]).await;
        assert!(
            error.contains(&format!(
                "Plugin {} has no usable definition: ",
                file.display()
            )) && error.contains(rule),
            "{rule}: {error}"
        );
        assert!(
            !error.contains('\u{1b}') && !error.contains('\u{202E}'),
            "{error}"
        );
    }
    // A name that differs from another tool's only in case reads as the same tool.
    std::fs::write(
        &file,
        hostile_definition(&config("normal", "Hostile_definition", "x", "^a$")),
    )
    .expect("write");
    std::fs::copy(
        binary_dir().join("test-plugins/hostile_definition.wasm"),
        plugins.join("a_original.wasm"),
    )
    .expect("copy");
    let error = refused(&plugins, &[]).await;
    assert!(
        error.contains("defines the tool `Hostile_definition`, which differs only in letter case from `hostile_definition`"),
        "{error}"
    );
}

#[tokio::test]
async fn plugin_check_prints_what_a_plugin_defines_escaped() {
    let scratch = tempfile::tempdir().expect("scratch");
    let file = scratch.path().join("check.wasm");
    // A right-to-left override inside a schema pattern (valid, so the check prints it).
    std::fs::write(
        &file,
        hostile_definition(&config("normal", "checked", "x", "^[a\u{202E}b]*$")),
    )
    .expect("write");
    let output = server_command()
        .args(["plugin", "check"])
        .arg(&file)
        .output()
        .expect("plugin check");
    let printed = [output.stdout, output.stderr].concat();
    let text = String::from_utf8_lossy(&printed);
    assert!(text.contains("Tool checked"), "{text}");
    assert!(text.contains("\\u{202e}"), "{text}");
    assert!(
        !text.contains('\u{202E}'),
        "raw bidi control printed: {text}"
    );
    // A refused definition: the error names the character, escaped.
    std::fs::write(
        &file,
        hostile_definition(&config("normal", "checked", "clear\u{1b}[2Jscreen", "^a$")),
    )
    .expect("write");
    let output = server_command()
        .args(["plugin", "check"])
        .arg(&file)
        .output()
        .expect("plugin check");
    assert!(!output.status.success());
    let printed = [output.stdout, output.stderr].concat();
    assert!(!printed.contains(&0x1b), "raw escape printed");
    assert!(String::from_utf8_lossy(&printed).contains("\\u{1b}"));
    // Nothing was written beside the component (no cache, no temp files).
    let names: Vec<_> = std::fs::read_dir(scratch.path())
        .expect("scratch")
        .filter_map(|entry| entry.ok().map(|entry| entry.file_name()))
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("check.wasm")]);
}

#[tokio::test]
async fn truncated_and_mutated_components_are_named_and_never_crash_the_server() {
    let scratch = tempfile::tempdir().expect("scratch");
    let plugins = plugin_folder(scratch.path());
    let noop = std::fs::read(binary_dir().join("test-plugins/noop.wasm")).expect("noop");
    let file = plugins.join("broken.wasm");
    let mut mutated = noop.clone();
    for index in (noop.len() / 3..noop.len()).step_by(97) {
        mutated[index] ^= 0x5a;
    }
    let cycle = std::fs::read(malformed("wit-package-cycle.wasm")).expect("fixture");
    for (what, bytes) in [
        ("header only", noop[..8].to_vec()),
        ("half", noop[..noop.len() / 2].to_vec()),
        ("one byte short", noop[..noop.len() - 1].to_vec()),
        ("mutated", mutated),
        // wit-component overflows its stack on it: an abort, unless it runs in a child.
        ("WIT packages in a cycle", cycle.clone()),
    ] {
        std::fs::write(&file, &bytes).expect("write");
        let started = Instant::now();
        let output = server_command()
            .args(browser_args())
            .arg("--plugin-dir")
            .arg(&plugins)
            .arg("tools")
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{what}: {stderr}");
        assert!(
            stderr.contains(&format!("Plugin {}", file.display())),
            "{what}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        assert!(started.elapsed() < Duration::from_secs(30), "{what}");
    }

    // With --watch, a broken component dropped in is skipped and the watcher keeps working.
    std::fs::remove_file(&file).expect("remove");
    let server = start(&plugins, &["--watch"]).await.expect("start");
    let before = server.list_tools().await.len();
    std::fs::write(&file, &noop[..noop.len() / 2]).expect("write broken");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(server.list_tools().await.len(), before);
    std::fs::write(plugins.join("cycle.wasm"), &cycle).expect("write the cycle");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        server.list_tools().await.len(),
        before,
        "the server survived"
    );
    std::fs::write(plugins.join("noop.wasm"), &noop).expect("write noop");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let tools = server.list_tools().await;
        if tools.iter().any(|tool| tool.name == "noop") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the watcher stopped after a broken component"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    server.shutdown().await;
}
