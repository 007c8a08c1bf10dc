//! Errors a plugin author can act on (issue 49, item 2): a tool whose code raises answers with
//! its language's account, trimmed to the author's frames (a Python traceback, a JavaScript
//! stack, a Rust panic's message and location), to the MCP caller and in `plugin test`; a
//! Python syntax error in `plugin build` is the compiler's message without a Rust backtrace;
//! an MCP client whose server refuses to start reads the reason on the server's stderr.

use crate::support::{McpServer, browser_args, cache_dir};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const BINARY: &str = env!("CARGO_BIN_EXE_devtools-mcp");

/// A tool made by `plugin new --lang LANG`, its source edited by `edit`, built once per
/// content: the component is kept under the target's temp dir by a hash of the project's
/// sources (a TypeScript build takes half a minute). Returns the component and its source.
fn built_scaffold(lang: &str, name: &str, edit: impl Fn(&str) -> String) -> (PathBuf, String) {
    let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch");
    let created = crate::support::command(BINARY)
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
    let source_file = project.join(match lang {
        "ts" => "src/tool.ts",
        "rust" => "src/lib.rs",
        _ => "app.py",
    });
    let source = std::fs::read_to_string(&source_file).expect("source");
    let edited = edit(&source);
    assert_ne!(edited, source, "the edit applies to the scaffold");
    std::fs::write(&source_file, &edited).expect("edit");
    let mut hasher = Sha256::new();
    for file in walk(&project) {
        hasher.update(
            file.strip_prefix(&project)
                .expect("inside")
                .to_string_lossy()
                .as_bytes(),
        );
        hasher.update(std::fs::read(&file).expect("file"));
    }
    let key = hex::encode(&hasher.finalize()[..8]);
    let kept = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("author-errors")
        .join(key);
    let component = kept.join(format!("{name}.wasm"));
    if component.is_file() {
        return (component, edited);
    }
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugin-cli-target");
    let built = crate::support::command(BINARY)
        .args(["plugin", "build"])
        .arg(&project)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("plugin build");
    assert!(
        built.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&built.stdout),
        String::from_utf8_lossy(&built.stderr)
    );
    std::fs::create_dir_all(&kept).expect("kept");
    let partial = kept.join("partial");
    std::fs::copy(project.join(format!("dist/{name}.wasm")), &partial).expect("copy");
    std::fs::rename(&partial, &component).expect("rename");
    (component, edited)
}

/// The project's files a build reads (not what a build or `npm install` writes).
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("dir")
        .flatten()
        .map(|entry| entry.path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if matches!(
            name.as_ref(),
            "node_modules" | "dist" | "build" | "types" | "target"
        ) {
            continue;
        }
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The 1-based number of the line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|line| line.contains(needle))
        .map(|index| index + 1)
        .unwrap_or_else(|| panic!("{needle} not in the source"))
}

#[tokio::test]
async fn a_crashing_tool_answers_with_its_languages_traceback() {
    let python_dir = crate::python_plugin::build_component();
    let python_source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/python/page_title/app.py"
    ))
    .expect("app.py");
    let python_line = line_of(&python_source, "len(title) / divisor");
    let (ts, ts_source) = built_scaffold("ts", "ts_boom", |source| {
        source.replacen(
            "    appendLine(",
            "    if (prefix === 'boom') {\n      throw new Error('boom');\n    }\n    appendLine(",
            1,
        )
    });
    let (rust, rust_source) = built_scaffold("rust", "rs_boom", |source| {
        source.replacen(
            "        let prefix =",
            "        if params.prefix.as_deref() == Some(\"boom\") {\n            panic!(\"boom on {}\", page.url());\n        }\n        let prefix =",
            1,
        )
    });
    let rust_line = line_of(&rust_source, "panic!(");
    let ts_line = line_of(&ts_source, "throw new Error('boom')");

    let plugins = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("plugin dir");
    std::fs::copy(
        python_dir.join("page_title.wasm"),
        plugins.path().join("page_title.wasm"),
    )
    .expect("copy");
    std::fs::copy(&ts, plugins.path().join("ts_boom.wasm")).expect("copy");
    std::fs::copy(&rust, plugins.path().join("rs_boom.wasm")).expect("copy");
    let policy = plugins.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[plugins.page_title]\ncapabilities = [\"pages.read\", \"script\"]\n",
    )
    .expect("policy");
    let cache = cache_dir().to_string_lossy().into_owned();
    // Compiled before the server starts (CPython and the JavaScript engine take a while the
    // first time), as an author's `plugin check` does.
    for file in ["page_title.wasm", "ts_boom.wasm"] {
        let checked = crate::support::command(BINARY)
            .args(["--cache-dir", &cache, "plugin", "check", "--policy"])
            .arg(&policy)
            .arg(plugins.path().join(file))
            .output()
            .expect("plugin check");
        let report = String::from_utf8_lossy(&checked.stdout);
        assert!(report.contains("Tool "), "{report}");
    }
    let mut args = browser_args();
    args.extend(
        [
            "--plugin-dir",
            &plugins.path().to_string_lossy(),
            "--policy",
            &policy.to_string_lossy(),
        ]
        .map(String::from),
    );
    let server = McpServer::start_with(args.clone(), Vec::new())
        .await
        .unwrap_or_else(|error| panic!("{error}"));

    let python = server.call("page_title", json!({ "divisor": 0 })).await;
    assert!(python.is_error, "{}", python.text);
    assert!(python.text.contains("crashed"), "{}", python.text);
    assert!(
        python.text.contains("ZeroDivisionError: division by zero"),
        "{}",
        python.text
    );
    assert!(
        python
            .text
            .contains(&format!("File \"app.py\", line {python_line}, in handle")),
        "{}",
        python.text
    );
    // The runtime's own panic after the traceback is not the author's.
    assert!(
        !python.text.contains("runtime/src/lib.rs"),
        "{}",
        python.text
    );
    assert!(!python.text.contains("RUST_BACKTRACE"), "{}", python.text);

    let ts = server.call("ts_boom", json!({ "prefix": "boom" })).await;
    assert!(ts.is_error, "{}", ts.text);
    assert!(ts.text.contains("boom\nStack:"), "{}", ts.text);
    // Told in the author's TypeScript (the build carries tsc's source map), not in the
    // generated build/tool.js.
    assert!(
        ts.text
            .contains(&format!("  handle@src/tool.ts:{ts_line}:")),
        "{}",
        ts.text
    );
    assert!(!ts.text.contains("@tool.js:"), "{}", ts.text);
    assert!(!ts.text.contains(".bindings.js"), "{}", ts.text);

    let rust = server.call("rs_boom", json!({ "prefix": "boom" })).await;
    assert!(rust.is_error, "{}", rust.text);
    assert!(
        rust.text
            .contains(&format!("panicked at src/lib.rs:{rust_line}:")),
        "{}",
        rust.text
    );
    assert!(rust.text.contains("boom on about:blank"), "{}", rust.text);
    // The panic is the crash's report, not a line of the answer.
    assert!(!rust.text.contains('\u{1}'), "{}", rust.text);

    // A crash leaves the tools working.
    let fine = server.call("rs_boom", json!({ "prefix": "At" })).await;
    assert_eq!(fine.text, "At about:blank");
    server.shutdown().await;

    // The report is the plugin's text: under the page-content fence, its line that carries
    // page text (the URL the tool read) is fenced, the host's crash line is not.
    args.push("--experimentalFencePageContent".to_string());
    let fenced_server = McpServer::start_with(args, Vec::new())
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    let fenced = fenced_server
        .call("rs_boom", json!({ "prefix": "boom" }))
        .await;
    fenced_server.shutdown().await;
    let lines: Vec<&str> = fenced.text.lines().collect();
    let at = lines
        .iter()
        .position(|line| *line == "boom on about:blank")
        .unwrap_or_else(|| panic!("{}", fenced.text));
    assert!(
        at > 0 && lines[at - 1].starts_with("<untrusted-"),
        "{}",
        fenced.text
    );
    assert!(
        lines
            .get(at + 1)
            .is_some_and(|line| line.starts_with("</untrusted-")),
        "{}",
        fenced.text
    );
    assert!(
        lines
            .iter()
            .any(|line| line.starts_with("Error: The tool's plugin (")),
        "{}",
        fenced.text
    );

    // The author sees the same in `plugin test`.
    let tested = crate::support::command(BINARY)
        .args(["--cache-dir", &cache, "plugin", "test", "--policy"])
        .arg(&policy)
        .arg(plugins.path().join("page_title.wasm"))
        .args(["--params", r#"{"divisor": 0}"#])
        .output()
        .expect("plugin test");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&tested.stdout),
        String::from_utf8_lossy(&tested.stderr)
    );
    assert!(!tested.status.success(), "{printed}");
    assert!(
        printed.contains("ZeroDivisionError: division by zero")
            && printed.contains(&format!("line {python_line}, in handle")),
        "{printed}"
    );
}

/// A syntax error: the file, the line and the error, in a few lines, with RUST_BACKTRACE set
/// as many developers have it.
#[test]
fn a_python_syntax_error_is_the_compilers_message_without_a_backtrace() {
    let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch");
    let created = crate::support::command(BINARY)
        .args(["plugin", "new", "py_typo", "--lang", "python", "--dir"])
        .arg(scratch.path())
        .output()
        .expect("plugin new");
    assert!(created.status.success());
    let project = scratch.path().join("py_typo");
    let app = project.join("app.py");
    let source = std::fs::read_to_string(&app).expect("app.py");
    let broken = source.replacen("import json\n", "import json\ndef oops(:\n    pass\n", 1);
    std::fs::write(&app, &broken).expect("edit");
    let line = line_of(&broken, "def oops(:");
    let built = crate::support::command(BINARY)
        .args(["plugin", "build"])
        .arg(&project)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("plugin build");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&built.stdout),
        String::from_utf8_lossy(&built.stderr)
    );
    assert!(!built.status.success(), "{printed}");
    let canonical = project.canonicalize().expect("canonical");
    assert!(
        printed.contains(&format!(
            "File \"{}/app.py\", line {line}",
            canonical.display()
        )),
        "{printed}"
    );
    assert!(printed.contains("SyntaxError: invalid syntax"), "{printed}");
    for noise in [
        "Stack backtrace",
        "anyhow",
        "sys.exit(script())",
        "AssertionError",
    ] {
        assert!(!printed.contains(noise), "{noise}: {printed}");
    }
    assert!(printed.lines().count() <= 15, "{printed}");
}

/// The official Python SDK starting a server that refuses its configuration (a plugin folder
/// in the temp dir): the client fails to connect, and the reason is on the stderr it shows.
#[test]
fn an_mcp_client_reads_why_the_server_refused_to_start() {
    let home = tempfile::tempdir().expect("home");
    let in_temp = home.path().join("dist");
    std::fs::create_dir(&in_temp).expect("dist");
    let temp = std::env::temp_dir();
    // The SDK shows the server's stderr on its own (the default `errlog`), as clients do.
    let script = r#"
import json, os, sys
import anyio
from mcp import Client, StdioServerParameters

async def main():
    # As a client's entry for the server: its command, arguments and environment.
    server = StdioServerParameters(
        command=sys.argv[1], args=sys.argv[2:], env={"TMPDIR": os.environ["TMPDIR"]}
    )
    try:
        with anyio.fail_after(30):
            async with Client(server, mode="legacy") as client:
                await client.list_tools()
        return "connected"
    except BaseException as error:
        return type(error).__name__

print(json.dumps({"outcome": anyio.run(main)}))
"#;
    let script_file = home.path().join("client.py");
    std::fs::write(&script_file, script).expect("script");
    let output = crate::support::command("python3")
        .arg(&script_file)
        .arg(BINARY)
        .arg("--plugin-dir")
        .arg(&in_temp)
        .env("TMPDIR", &temp)
        .output()
        .expect("python3 with the mcp SDK");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|error| {
        panic!(
            "{error}: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert_ne!(report["outcome"], "connected", "{report}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let refusal: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("Refusing to start"))
        .collect();
    assert_eq!(refusal.len(), 1, "one line says why: {stderr}");
    assert!(
        refusal[0].contains("overlaps the temp dir") && refusal[0].contains("TMPDIR="),
        "{stderr}"
    );
    // And the exit status says it failed.
    let status = crate::support::command(BINARY)
        .arg("--plugin-dir")
        .arg(&in_temp)
        .env("TMPDIR", &temp)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("devtools-mcp");
    assert!(!status.success());
}
