//! The same steps against this server and, when Node is here, chrome-devtools-mcp 1.11.0, each
//! answer normalised as the differential test does; what ours said is kept for the test's own
//! assertions, every difference from 1.11.0 for one final check.

use super::reference::{ensure_installed, node_missing, start_reference};
use super::{FixtureServer, McpServer, browser_args};
use crate::differential::{normalize, render};
use serde_json::Value;

/// One step: a unique label, the tool, its arguments.
pub type Step = (&'static str, &'static str, Value);

pub struct SideBySide {
    pub ours: McpServer,
    /// `None` (said loudly) where Node or the reference cannot run.
    pub reference: Option<McpServer>,
}

impl SideBySide {
    /// Both servers with `flags`, page-id routing on as in 1.11.0.
    pub async fn start(flags: &[&str]) -> SideBySide {
        let mut args = browser_args();
        args.retain(|arg| arg != "--no-page-id-routing");
        args.extend(flags.iter().map(|flag| flag.to_string()));
        let ours = match McpServer::start_with(args, Vec::new()).await {
            Ok(server) => server,
            Err(message) => panic!("{message}"),
        };
        let reference = match node_missing() {
            Some(reason) => {
                eprintln!(
                    "\n!!! steps not compared with chrome-devtools-mcp 1.11.0: {reason}. scripts/test installs Node and the reference.\n"
                );
                None
            }
            None => {
                if let Err(error) = ensure_installed() {
                    panic!("{error}");
                }
                Some(start_reference(flags).await)
            }
        };
        SideBySide { ours, reference }
    }

    /// Runs the steps on both servers, in turn, then shuts both down.
    pub async fn run(self, steps: Vec<Step>, pages: &FixtureServer) -> Answers {
        let mut answers = Answers::default();
        for (label, tool, arguments) in steps {
            let mine = normalize(
                &render(
                    &self
                        .ours
                        .call_raw(tool, arguments.clone())
                        .await
                        .expect(label),
                ),
                pages,
            );
            if let Some(reference) = &self.reference {
                let theirs = normalize(
                    &render(&reference.call_raw(tool, arguments).await.expect(label)),
                    pages,
                );
                if mine != theirs {
                    answers.differences.push(format!(
                        "--- {label}\n--- ours:\n{mine}\n--- 1.11.0:\n{theirs}"
                    ));
                }
            }
            answers.said.push((label, mine));
        }
        self.ours.shutdown().await;
        if let Some(reference) = self.reference {
            reference.shutdown().await;
        }
        answers
    }
}

#[derive(Default)]
pub struct Answers {
    said: Vec<(&'static str, String)>,
    differences: Vec<String>,
}

impl Answers {
    /// What ours answered to the step `label` (normalised), whether or not 1.11.0 ran.
    pub fn said(&self, label: &str) -> String {
        self.said
            .iter()
            .find(|(step, _)| *step == label)
            .map(|(_, text)| text.clone())
            .unwrap_or_else(|| panic!("no step {label}"))
    }

    /// Fails with every step whose answer differs from 1.11.0's.
    pub fn assert_same_as_reference(&self, what: &str) {
        assert!(
            self.differences.is_empty(),
            "{what} answer differently from chrome-devtools-mcp 1.11.0:\n{}",
            self.differences.join("\n")
        );
    }
}
