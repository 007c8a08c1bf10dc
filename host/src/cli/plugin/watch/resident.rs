//! The resident TypeScript builder (`builder.mjs`): the project's `compile` script done in one
//! Node.js process kept between edits, since a new one spends seconds warming V8 up on the
//! componentizer. Used only while the project's `compile` script is the one `plugin new`
//! wrote: any other script is run as written (through npm), so what is built is what the
//! author's script says.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const SCRIPT: &str = include_str!("builder.mjs");
/// What starts the builder's own lines on its output; every other line is the tools'.
const MARKER: &str = "\u{0}devtools-mcp-builder ";

pub struct ResidentBuilder {
    dir: PathBuf,
    world: String,
    running: Option<Running>,
}

struct Running {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

#[derive(serde::Deserialize)]
struct Outcome {
    ok: bool,
    #[serde(default)]
    error: String,
}

impl ResidentBuilder {
    pub fn new(dir: &Path, world: &str) -> ResidentBuilder {
        ResidentBuilder {
            dir: dir.to_path_buf(),
            world: world.to_string(),
            running: None,
        }
    }

    /// `tsc` and componentize-js, as the `compile` script runs them; writes the component to
    /// `out`. A builder that stopped (componentize-js exits the process on some errors) is
    /// started again by the next build.
    pub async fn compile(&mut self, out: &Path) -> Result<(), String> {
        if self.running.is_none() {
            self.running = Some(self.start().await?);
        }
        let Some(running) = self.running.as_mut() else {
            return Err("the TypeScript builder did not start".into());
        };
        let line = format!("{}\n", out.display());
        let asked = running.stdin.write_all(line.as_bytes()).await;
        let outcome = match asked {
            Ok(()) => outcome(&mut running.lines).await,
            Err(error) => Err(format!("the TypeScript builder stopped: {error}")),
        };
        if outcome.is_err() {
            // Whatever state it is in, the next build starts a new one.
            self.running = None;
        }
        match outcome? {
            Outcome { ok: true, .. } => Ok(()),
            Outcome { error, .. } => Err(error),
        }
    }

    /// Whether its process is up (a failed compile leaves it up; a stopped builder does not).
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    async fn start(&self) -> Result<Running, String> {
        let mut child = Command::new("node")
            .args(["--input-type=module", "--eval", SCRIPT, &self.world])
            .current_dir(&self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| {
                format!("Cannot run node: {error}. Install Node.js (20 or later) with npm.")
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("the TypeScript builder has no pipes".into());
        };
        let mut lines = BufReader::new(stdout).lines();
        // The first line says it loaded TypeScript and componentize-js.
        outcome(&mut lines).await?;
        Ok(Running {
            _child: child,
            stdin,
            lines,
        })
    }
}

/// The builder's next outcome line; the tools' own lines on the way are the author's to see.
async fn outcome(lines: &mut Lines<BufReader<ChildStdout>>) -> Result<Outcome, String> {
    loop {
        let line = lines
            .next_line()
            .await
            .map_err(|error| format!("Cannot read the TypeScript builder: {error}"))?
            .ok_or("the TypeScript builder stopped (its error is above)")?;
        match line.strip_prefix(MARKER) {
            Some(json) => {
                return serde_json::from_str(json)
                    .map_err(|error| format!("the TypeScript builder said {json:?}: {error}"));
            }
            None => eprintln!("{line}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_project_without_its_packages_is_an_error_not_a_hang() {
        // No node_modules: the builder cannot load TypeScript, says so on stderr and stops.
        let project = tempfile::tempdir().expect("temp dir");
        let mut builder = ResidentBuilder::new(project.path(), "tool");
        let out = project.path().join("dist/tool.wasm");
        let built = tokio::time::timeout(std::time::Duration::from_secs(30), builder.compile(&out))
            .await
            .expect("the builder answers");
        let error = built.expect_err("nothing to build with");
        assert!(
            error.contains("TypeScript builder stopped") || error.contains("Cannot run node"),
            "{error}"
        );
        assert!(
            builder.running.is_none(),
            "a stopped builder is started again next time"
        );
        assert!(!out.exists());
    }
}
