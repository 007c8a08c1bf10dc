//! The plugin author's path, as the README's guide walks it: `plugin new`, `plugin build`
//! (cargo + componentize), `plugin check`, then the server loads the result.

use crate::support::McpServer;
use serde_json::json;

#[tokio::test]
async fn a_new_plugin_builds_checks_and_loads() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let binary = env!("CARGO_BIN_EXE_devtools-mcp");
    // As a new author does it: the binary alone, an empty folder, no checkout. The SDK comes
    // from the binary, written beside the crate.
    let created = crate::support::command(binary)
        .args(["plugin", "new", "hello_page", "--dir"])
        .arg(scratch.path())
        .current_dir(scratch.path())
        .output()
        .expect("plugin new");
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let crate_dir = scratch.path().join("hello_page");
    assert!(crate_dir.join("src/lib.rs").is_file());
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).expect("manifest");
    assert!(
        manifest.contains("devtools-tool = { path = \"devtools-tool\" }"),
        "{manifest}"
    );
    let checkout = env!("CARGO_MANIFEST_DIR").trim_end_matches("/server");
    for file in [
        "devtools-tool/Cargo.toml",
        "devtools-tool/src/devtools_tool.rs",
    ] {
        let text = std::fs::read_to_string(crate_dir.join(file)).expect(file);
        assert!(!text.contains(checkout), "{file} refers to the checkout");
    }
    assert!(crate_dir.join("devtools-tool/wit/tool.wit").is_file());

    // A target dir that outlives the test, so reruns compile only the new crate.
    let target = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugin-cli-target");
    let built = crate::support::command(binary)
        .args(["plugin", "build"])
        .arg(&crate_dir)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("plugin build");
    let report = String::from_utf8_lossy(&built.stdout).into_owned();
    assert!(
        built.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let component = crate_dir.join("dist/hello_page.wasm");
    assert!(
        report.contains(&format!("Built {}.", component.display())),
        "{report}"
    );
    assert!(report.contains("Tool hello_page"), "{report}");
    assert!(report.contains("pages.read: granted"), "{report}");
    assert!(
        report.contains("OK: the server loads it and grants everything its code can call for."),
        "{report}"
    );
    let bytes = std::fs::read(&component).expect("component");
    assert!(wasmparser::Parser::is_component(&bytes));

    // `plugin test`: the tool on a page of the author's, served on loopback, no MCP client.
    let page = scratch.path().join("page.html");
    std::fs::write(&page, "<!doctype html><title>Fixture</title><p>hello</p>").expect("page");
    let tested = crate::support::command(binary)
        .args(["plugin", "test"])
        .arg(&crate_dir)
        .arg("--page")
        .arg(&page)
        .args(["--params", r#"{"prefix": "At"}"#])
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("plugin test");
    let printed = String::from_utf8_lossy(&tested.stdout).into_owned();
    assert!(
        tested.status.success(),
        "{printed}\n{}",
        String::from_utf8_lossy(&tested.stderr)
    );
    assert!(
        printed.contains("Granted for this test: pages.read"),
        "{printed}"
    );
    assert!(
        printed
            .lines()
            .any(|line| line.starts_with("At http://127.0.0.1:") && line.ends_with("/page.html")),
        "{printed}"
    );
    let refused = crate::support::command(binary)
        .args(["plugin", "test"])
        .arg(crate_dir.join("dist/hello_page.wasm"))
        .args(["--params", r#"{"prefix": 3}"#])
        .output()
        .expect("plugin test");
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stdout).contains("prefix: Invalid input: expected string"),
        "{}",
        String::from_utf8_lossy(&refused.stdout)
    );

    let dist = crate_dir.join("dist").to_string_lossy().into_owned();
    let server = McpServer::start(&["--plugin-dir", &dist]).await;
    let answer = server
        .call("hello_page", json!({ "prefix": "Here:" }))
        .await;
    assert_eq!(answer.text, "Here: about:blank");
    server.shutdown().await;
}

#[test]
fn plugin_new_refuses_bad_names_and_existing_folders() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let binary = env!("CARGO_BIN_EXE_devtools-mcp");
    let bad = crate::support::command(binary)
        .args(["plugin", "new", "../Evil", "--dir"])
        .arg(scratch.path())
        .output()
        .expect("plugin new");
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("Invalid tool name \"../Evil\""),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    std::fs::create_dir(scratch.path().join("taken")).expect("dir");
    let taken = crate::support::command(binary)
        .args(["plugin", "new", "taken", "--dir"])
        .arg(scratch.path())
        .output()
        .expect("plugin new");
    assert!(String::from_utf8_lossy(&taken.stderr).contains("already exists"));
}

/// One scaffold of another language, as a new author runs it: `plugin new --lang`, `plugin
/// build` (the language's own toolchain), `plugin check` in the build's report, then `plugin
/// test` loads it in a real browser and calls it on a page of theirs.
fn author_path(lang: &str, name: &str) {
    let scratch = tempfile::tempdir().expect("temp dir");
    let binary = env!("CARGO_BIN_EXE_devtools-mcp");
    let created = crate::support::command(binary)
        .args(["plugin", "new", name, "--lang", lang, "--dir"])
        .arg(scratch.path())
        .output()
        .expect("plugin new");
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let project = scratch.path().join(name);
    let world = std::fs::read_to_string(project.join("wit/world.wit")).expect("world");
    assert!(world.contains("import devtools:tool/pages@"), "{world}");
    assert!(project.join("wit/deps/devtools-tool/tool.wit").is_file());

    let built = crate::support::command(binary)
        .args(["plugin", "build"])
        .arg(&project)
        .output()
        .expect("plugin build");
    let report = String::from_utf8_lossy(&built.stdout).into_owned();
    assert!(
        built.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    assert!(report.contains(&format!("Tool {name}")), "{report}");
    assert!(report.contains("pages.read: granted"), "{report}");
    // Its world imports only what it uses: no capability beyond `pages.read` is asked for.
    assert!(!report.contains("NOT granted"), "{report}");

    let page = scratch.path().join("page.html");
    std::fs::write(&page, "<!doctype html><title>Fixture</title><p>hello</p>").expect("page");
    let tested = crate::support::command(binary)
        .args(["plugin", "test"])
        .arg(project.join(format!("dist/{name}.wasm")))
        .arg("--page")
        .arg(&page)
        .args(["--params", r#"{"prefix": "At"}"#])
        .output()
        .expect("plugin test");
    let printed = String::from_utf8_lossy(&tested.stdout).into_owned();
    assert!(
        tested.status.success(),
        "{printed}\n{}",
        String::from_utf8_lossy(&tested.stderr)
    );
    assert!(
        printed
            .lines()
            .any(|line| line.starts_with("At http://127.0.0.1:") && line.ends_with("/page.html")),
        "{printed}"
    );
}

#[test]
fn a_typescript_plugin_from_the_scaffold_builds_checks_loads_and_answers() {
    if crate::support::command("npm")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!("npm is missing: scripts/test installs Node.js and npm");
    }
    author_path("ts", "ts_page_url");
}

#[test]
fn a_python_plugin_from_the_scaffold_builds_checks_loads_and_answers() {
    author_path("python", "py_page_url");
}
