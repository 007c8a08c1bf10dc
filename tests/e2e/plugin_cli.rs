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
    // The parameters' doc comments are the schema models read: written for the model.
    assert!(
        report.contains("Text to put before the page's URL in the answer"),
        "{report}"
    );
    assert!(!report.contains("field docs become"), "{report}");
    let bytes = std::fs::read(&component).expect("component");
    assert!(wasmparser::Parser::is_component(&bytes));
    // `plugin check` takes the tool's folder too, as `build` and `test` do.
    let checked = crate::support::command(binary)
        .args(["plugin", "check"])
        .arg(&crate_dir)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("plugin check");
    let checked_text = String::from_utf8_lossy(&checked.stdout).into_owned();
    assert!(
        checked.status.success() && checked_text.contains("Tool hello_page"),
        "{checked_text}\n{}",
        String::from_utf8_lossy(&checked.stderr)
    );

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

    // `plugin test` applies the server's rule for plugin folders: in its temp dir, refused,
    // with a temp dir that works.
    let in_temp = tempfile::tempdir_in(crate::support::server_temp_dir()).expect("in the temp dir");
    let copy = in_temp.path().join("hello_page.wasm");
    std::fs::copy(&component, &copy).expect("copy");
    let refused = crate::support::command(binary)
        .args(["plugin", "test"])
        .arg(&copy)
        .output()
        .expect("plugin test");
    let error = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(!refused.status.success(), "{error}");
    assert!(error.contains("overlaps the temp dir"), "{error}");
    assert!(
        error.contains("mkdir -p -m 700 ") && error.contains(" devtools-mcp ...`"),
        "{error}"
    );

    let dist = crate_dir.join("dist").to_string_lossy().into_owned();
    let server = McpServer::start(&["--plugin-dir", &dist]).await;
    let answer = server
        .call("hello_page", json!({ "prefix": "Here:" }))
        .await;
    assert_eq!(answer.text, "Here: about:blank");
    server.shutdown().await;

    // A capability the default policy does not grant: the build succeeds with a warning, and
    // fails with --strict.
    let lib = crate_dir.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).expect("lib.rs");
    let uses_script = source.replacen(
        "let prefix =",
        "let _title = page.evaluate_expression(\"document.title\")?;\n        let prefix =",
        1,
    );
    assert_ne!(uses_script, source);
    std::fs::write(&lib, uses_script).expect("edit lib.rs");
    let build = |strict: bool| {
        let mut command = crate::support::command(binary);
        command.args(["plugin", "build"]).arg(&crate_dir);
        if strict {
            command.arg("--strict");
        }
        let output = command
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .expect("plugin build");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.success(), text)
    };
    let (ok, text) = build(false);
    assert!(ok, "a good build succeeds: {text}");
    assert!(text.contains("script: NOT granted"), "{text}");
    assert!(text.contains("Warning: "), "{text}");
    assert!(
        text.contains("`plugin build --strict` makes this an error"),
        "{text}"
    );
    let (ok, text) = build(true);
    assert!(!ok, "{text}");
    assert!(
        text.contains("--strict: the default policy would not run"),
        "{text}"
    );
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

    // A built-in's name: refused with the way out, or created anyway with --force.
    let builtin = crate::support::command(binary)
        .args(["plugin", "new", "click", "--dir"])
        .arg(scratch.path())
        .output()
        .expect("plugin new");
    let error = String::from_utf8_lossy(&builtin.stderr).into_owned();
    assert!(!builtin.status.success(), "{error}");
    assert!(
        error.contains("`click` is the name of a built-in tool"),
        "{error}"
    );
    assert!(
        error.contains("`my_click`") && error.contains("--force"),
        "{error}"
    );
    assert!(!scratch.path().join("click").exists());
    let forced = crate::support::command(binary)
        .args(["plugin", "new", "click", "--force", "--dir"])
        .arg(scratch.path())
        .output()
        .expect("plugin new");
    assert!(forced.status.success());
    assert!(
        String::from_utf8_lossy(&forced.stderr).contains("Warning: `click` is the name of"),
        "{}",
        String::from_utf8_lossy(&forced.stderr)
    );

    // `plugin check` of a folder that holds no tool says what it expected.
    let (ok, text) = crate::support::devtools_mcp(&[
        "plugin",
        "check",
        &scratch.path().join("taken").to_string_lossy(),
    ]);
    assert!(
        !ok && text.contains("holds no tool made by `devtools-mcp plugin new`"),
        "{text}"
    );
}

/// Under the temp dir (where people try things), `plugin new`'s "Next:" gives the private temp
/// dir the server needs, and following it works: the server refuses the folder without it
/// (saying the same) and starts with it.
#[test]
fn plugin_new_in_the_temp_dir_suggests_a_temp_dir_the_server_accepts() {
    let binary = env!("CARGO_BIN_EXE_devtools-mcp");
    let home = tempfile::tempdir().expect("home");
    let cache_home = home.path().join("cache");
    let in_temp = tempfile::tempdir_in(crate::support::server_temp_dir()).expect("in the temp dir");
    let created = crate::support::command(binary)
        .args(["plugin", "new", "temp_tool", "--dir"])
        .arg(in_temp.path())
        .env("XDG_CACHE_HOME", &cache_home)
        .output()
        .expect("plugin new");
    let next = String::from_utf8_lossy(&created.stdout).into_owned();
    assert!(created.status.success(), "{next}");
    let private = cache_home.join("devtools-mcp/tmp");
    let advice = format!("export TMPDIR={}", private.display());
    assert!(next.contains(&advice), "{next}");
    let dist = in_temp.path().join("temp_tool/dist");
    std::fs::create_dir_all(&dist).expect("dist");
    let cache = crate::support::cache_dir();
    let list_tools = |temp: Option<&std::path::Path>| {
        let mut command = crate::support::command(binary);
        command
            .arg("--plugin-dir")
            .arg(&dist)
            .arg("--cache-dir")
            .arg(&cache)
            .arg("tools")
            .env("XDG_CACHE_HOME", &cache_home);
        if let Some(temp) = temp {
            command.env("TMPDIR", temp);
        }
        let output = command.output().expect("devtools-mcp tools");
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (ok, error) = list_tools(None);
    assert!(!ok, "{error}");
    assert!(error.contains("overlaps the temp dir"), "{error}");
    assert!(
        error.contains(&format!("TMPDIR={} devtools-mcp", private.display())),
        "{error}"
    );
    std::fs::create_dir_all(&private).expect("the private temp dir");
    let (ok, error) = list_tools(Some(&private));
    assert!(ok, "{error}");
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
