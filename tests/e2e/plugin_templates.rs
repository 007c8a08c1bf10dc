//! `plugin new --template`: every template in every language builds as generated and passes
//! its own test (`plugin test DIR` runs test/test.json on the fixture page beside it) in a
//! real browser; an unknown template is refused with the list of templates.

use std::path::Path;

const TEMPLATES: [&str; 3] = ["page-reader", "action", "structured"];

/// Runs the binary; whether it succeeded, and its stdout and stderr.
fn devtools_mcp(args: &[&str], dir: &Path, target: Option<&Path>) -> (bool, String) {
    let mut command = crate::support::command(env!("CARGO_BIN_EXE_devtools-mcp"));
    command.args(args).current_dir(dir);
    if let Some(target) = target {
        command.env("CARGO_TARGET_DIR", target);
    }
    let output = command.output().expect("devtools-mcp");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// Each template of `lang`, made, built and tested as its author would: `plugin new
/// --template`, then `plugin test DIR` (which builds first). Returns the scratch folder and
/// the last project made.
fn every_template(lang: &str, target: Option<&Path>) -> (tempfile::TempDir, std::path::PathBuf) {
    let scratch = tempfile::tempdir().expect("temp dir");
    let mut last = None;
    for template in TEMPLATES {
        let name = format!("{lang}_{}", template.replace('-', "_"));
        let (ok, text) = devtools_mcp(
            &[
                "plugin",
                "new",
                &name,
                "--lang",
                lang,
                "--template",
                template,
            ],
            scratch.path(),
            target,
        );
        assert!(ok, "{template}: {text}");
        assert!(text.contains("runs its test (test/test.json)"), "{text}");
        let project = scratch.path().join(&name);
        assert!(project.join("test/page.html").is_file(), "{template}");
        let (ok, text) = devtools_mcp(
            &["plugin", "test", &project.to_string_lossy()],
            scratch.path(),
            target,
        );
        assert!(ok, "{lang} {template}: {text}");
        assert!(text.contains("Running "), "{text}");
        assert!(
            text.contains("PASS: the answer contains every expected text."),
            "{text}"
        );
        match template {
            "action" => assert!(
                text.contains(
                    "Followed the link \"Read the guide\": the page landed on http://127.0.0.1:"
                ) && text.contains("/landed.html."),
                "{text}"
            ),
            "structured" => {
                // The JSON in the text, and the same as a structured result the host checked
                // against the schema the tool declared (contract 0.3.1, in every language).
                let line = text
                    .lines()
                    .find(|line| line.starts_with("{\"title\""))
                    .unwrap_or_else(|| panic!("no JSON answer: {text}"));
                let structured = text
                    .lines()
                    .find_map(|line| {
                        line.strip_prefix(
                            "Structured result (checked against the declared output schema): ",
                        )
                    })
                    .unwrap_or_else(|| panic!("{lang}: no structured result: {text}"));
                for line in [line, structured] {
                    let outline: serde_json::Value = serde_json::from_str(line).expect("JSON");
                    assert_eq!(outline["title"], "Fixture", "{line}");
                    assert_eq!(outline["headings"][0]["level"], 1, "{line}");
                    assert_eq!(outline["headings"][1]["text"], "Second section", "{line}");
                    assert!(
                        outline["url"]
                            .as_str()
                            .is_some_and(|url| url.ends_with("/page.html")),
                        "{line}"
                    );
                }
            }
            _ => assert!(
                text.contains("The fixture is at http://127.0.0.1:"),
                "{text}"
            ),
        }
        last = Some(project);
    }
    (scratch, last.expect("a project"))
}

#[test]
fn every_rust_template_builds_and_passes_its_test() {
    // A target dir that outlives the test, shared by the three crates.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugin-templates-target");
    let (scratch, project) = every_template("rust", Some(&target));
    // The test can fail: an answer without what test.json expects fails, naming it.
    let test = project.join("test/test.json");
    let text = std::fs::read_to_string(&test).expect("test.json");
    std::fs::write(&test, text.replace("Second section", "Third section")).expect("edit");
    let (ok, text) = devtools_mcp(
        &["plugin", "test", &project.to_string_lossy()],
        scratch.path(),
        Some(&target),
    );
    assert!(!ok, "{text}");
    assert!(
        text.contains("The answer does not contain \"\\\"text\\\":\\\"Third section\\\"\""),
        "{text}"
    );
}

#[test]
fn every_typescript_template_builds_and_passes_its_test() {
    every_template("ts", None);
}

#[test]
fn every_python_template_builds_and_passes_its_test() {
    every_template("python", None);
}

#[test]
fn an_unknown_template_is_refused_with_the_list_of_templates() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let (ok, text) = devtools_mcp(
        &["plugin", "new", "my_tool", "--template", "form-filler"],
        scratch.path(),
        None,
    );
    assert!(!ok, "{text}");
    for template in TEMPLATES {
        assert!(text.contains(template), "{text}");
    }
    assert!(!scratch.path().join("my_tool").exists());
}
