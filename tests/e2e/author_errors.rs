//! Errors a plugin author can act on (issue 49, item 2): a tool whose code raises answers with
//! its language's account, trimmed to the author's frames (a Python traceback, a JavaScript
//! stack, a Rust panic's message and location), to the MCP caller and in `plugin test`; a
//! Python syntax error in `plugin build` is the compiler's message without a Rust backtrace;
//! an MCP client whose server refuses to start reads the reason on the server's stderr.

const BINARY: &str = env!("CARGO_BIN_EXE_devtools-mcp");

/// The 1-based number of the line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|line| line.contains(needle))
        .map(|index| index + 1)
        .unwrap_or_else(|| panic!("{needle} not in the source"))
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
        printed.contains(&format!("File \"{}/app.py\", line {line}", canonical.display())),
        "{printed}"
    );
    assert!(printed.contains("SyntaxError: invalid syntax"), "{printed}");
    for noise in ["Stack backtrace", "anyhow", "sys.exit(script())", "AssertionError"] {
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
