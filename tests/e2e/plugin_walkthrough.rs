//! docs/plugins.md works as written: the command blocks marked `<!-- walk-through: LANG -->`
//! run, verbatim, in a fresh empty folder with this build's `devtools-mcp` first on PATH, and
//! must all succeed. A wrong command in the page fails its language's test.

use std::path::Path;

/// The `sh` blocks that follow `<!-- walk-through: LANG -->` in the page, in order.
fn walk_through(page: &str, lang: &str) -> String {
    let marker = format!("<!-- walk-through: {lang} -->");
    let mut script = String::new();
    let mut rest = page;
    while let Some(at) = rest.find(&marker) {
        let after = rest[at + marker.len()..].trim_start();
        let body = after
            .strip_prefix("```sh\n")
            .unwrap_or_else(|| panic!("{marker} is not followed by a ```sh block"));
        let end = body.find("\n```").expect("the block ends");
        script.push_str(&body[..=end]);
        rest = &body[end..];
    }
    script
}

fn run_walk_through(lang: &str) {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/plugins.md");
    let page = std::fs::read_to_string(&docs).expect("docs/plugins.md");
    let script = walk_through(&page, lang);
    assert!(script.contains("devtools-mcp plugin new"), "{script}");
    assert!(script.contains("devtools-mcp plugin test"), "{script}");
    let folder = tempfile::tempdir().expect("temp dir");
    let binary = Path::new(env!("CARGO_BIN_EXE_devtools-mcp"));
    let path = format!(
        "{}:{}",
        binary.parent().expect("bin folder").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = crate::support::command("sh");
    command
        .args(["-e", "-x", "-c", &script])
        .current_dir(folder.path())
        .env("PATH", path);
    if lang == "rust" {
        // Shared with the other runs so the SDK's dependencies compile once; the commands
        // are the page's own.
        let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugin-walkthrough-target");
        command.env("CARGO_TARGET_DIR", target);
    }
    let output = command.output().expect("sh");
    let printed = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{script}\n---\n{printed}");
    assert!(
        printed.contains("PASS: the answer contains every expected text."),
        "{printed}"
    );
}

#[test]
fn the_rust_walk_through_of_docs_plugins_md_works_verbatim() {
    run_walk_through("rust");
}

#[test]
fn the_typescript_walk_through_of_docs_plugins_md_works_verbatim() {
    run_walk_through("ts");
}

#[test]
fn the_python_walk_through_of_docs_plugins_md_works_verbatim() {
    run_walk_through("python");
}

#[test]
fn a_walk_through_is_every_block_after_its_marker() {
    let page = "x\n<!-- walk-through: rust -->\n```sh\na\nb\n```\ntext\n<!-- walk-through: ts -->\n```sh\nc\n```\n<!-- walk-through: rust -->\n```sh\nd\n```\n";
    assert_eq!(walk_through(page, "rust"), "a\nb\nd\n");
    assert_eq!(walk_through(page, "ts"), "c\n");
    assert_eq!(walk_through(page, "python"), "");
}
