//! `lighthouse_audit`: chrome-devtools-mcp 1.11.0 bundles Lighthouse; we run Lighthouse's
//! published npm package with Node.js against the same browser and page. The command line is
//! the host's alone (node, our runner script, one JSON argument); the process runs under a
//! timeout and is killed on every exit path (`kill_on_drop`, also when the call is cancelled).

mod summary;

pub use summary::report_lines;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// The Lighthouse version this server is tested with (`scripts/test` installs it).
pub const LIGHTHOUSE_VERSION: &str = "13.5.0";
/// One audit: a navigation on this machine takes 15-25 s; Lighthouse's own page-load wait is
/// 30 s.
const AUDIT_TIMEOUT: Duration = Duration::from_secs(110);
/// Reports of a large page are a few MiB; anything beyond this is refused.
const MAX_OUTPUT_BYTES: u64 = 256 << 20;
const MAX_ERROR_BYTES: u64 = 64 << 10;
const RUNNER: &str = include_str!("lighthouse/runner.mjs");

/// `--nodePath` and `--lighthousePath`.
#[derive(Debug, Clone, Default)]
pub struct LighthouseOptions {
    pub node_path: Option<PathBuf>,
    pub lighthouse_path: Option<PathBuf>,
}

/// What to audit: a page (by target id) of the browser at `ws_endpoint`.
pub struct AuditRequest<'a> {
    pub ws_endpoint: &'a str,
    pub target_id: &'a str,
    pub mode: &'a str,
    pub device: &'a str,
}

/// The reports Lighthouse produced.
pub struct AuditReports {
    pub json: String,
    pub html: String,
}

#[derive(Debug, thiserror::Error)]
pub enum LighthouseError {
    #[error(
        "lighthouse_audit runs Lighthouse with Node.js, and {0}. Install Node.js 20.19 or later (e.g. `apt-get install nodejs`) or pass --nodePath=/path/to/node."
    )]
    NodeMissing(String),
    #[error(
        "lighthouse_audit runs Lighthouse's npm package, and it was not found (looked in {searched}). Install it with `npm install --prefix {suggested} lighthouse@{version}` or pass --lighthousePath=<folder of the lighthouse package>."
    )]
    LighthouseMissing {
        searched: String,
        suggested: String,
        version: &'static str,
    },
    #[error("Lighthouse did not finish within {} s.", .0.as_secs())]
    Timeout(Duration),
    #[error("Lighthouse failed: {0}")]
    Failed(String),
    #[error("{0}")]
    Unsafe(String),
}

impl LighthouseOptions {
    /// `--nodePath` (must exist), else `node` on `PATH`.
    pub fn node(&self) -> Result<PathBuf, LighthouseError> {
        match &self.node_path {
            Some(path) if path.is_file() => Ok(path.clone()),
            Some(path) => Err(LighthouseError::NodeMissing(format!(
                "--nodePath {} does not exist",
                path.display()
            ))),
            None => find_on_path("node").ok_or_else(|| {
                LighthouseError::NodeMissing("`node` was not found on PATH".to_string())
            }),
        }
    }

    /// The folder of the `lighthouse` package: `--lighthousePath` (the package folder, or a
    /// folder holding `node_modules/lighthouse`), else the default install location, else a
    /// global npm install.
    pub fn lighthouse_dir(&self) -> Result<PathBuf, LighthouseError> {
        let candidates: Vec<PathBuf> = match &self.lighthouse_path {
            Some(path) => vec![path.clone(), path.join("node_modules").join("lighthouse")],
            None => {
                let mut list = vec![
                    default_install_dir()
                        .join("node_modules")
                        .join("lighthouse"),
                ];
                list.push(PathBuf::from("/usr/local/lib/node_modules/lighthouse"));
                list.push(PathBuf::from("/usr/lib/node_modules/lighthouse"));
                list
            }
        };
        candidates
            .iter()
            .find(|dir| dir.join("core").join("index.js").is_file())
            .cloned()
            .ok_or_else(|| LighthouseError::LighthouseMissing {
                searched: candidates
                    .iter()
                    .map(|dir| dir.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                suggested: default_install_dir().display().to_string(),
                version: LIGHTHOUSE_VERSION,
            })
    }
}

/// The first executable file called `name` in a folder of `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|folder| folder.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// Where `npm install --prefix` puts Lighthouse by default: the user's cache folder.
pub fn default_install_dir() -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("devtools-mcp")
        .join("lighthouse")
}

/// Runs one audit and returns its reports.
pub async fn run(
    options: &LighthouseOptions,
    request: &AuditRequest<'_>,
) -> Result<AuditReports, LighthouseError> {
    let node = options.node()?;
    let lighthouse_dir = options.lighthouse_dir()?;
    // Code the server runs: refused where plugins or tenants can write (checked at start for
    // what was installed then, here for what was found since).
    use crate::policy::code_folders::{executable, node_package, vet};
    let code = executable("Node.js (for Lighthouse)", &node, false)
        .into_iter()
        .chain([node_package("the Lighthouse package", &lighthouse_dir)]);
    for folder in code {
        vet(&folder.what, &folder.path).map_err(LighthouseError::Unsafe)?;
    }
    let config = serde_json::json!({
        "lighthouseDir": lighthouse_dir,
        "wsEndpoint": request.ws_endpoint,
        "targetId": request.target_id,
        "mode": request.mode,
        "device": request.device,
    });
    let mut child = tokio::process::Command::new(&node)
        .args(["--input-type=module", "--eval", RUNNER])
        .arg(config.to_string())
        .current_dir(std::env::temp_dir())
        .env_remove("DEVTOOLS_MCP_SESSION_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| {
            LighthouseError::NodeMissing(format!(
                "{} could not be started: {error}",
                node.display()
            ))
        })?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let work = async {
        let (output, errors) = tokio::join!(
            read_bounded(stdout, MAX_OUTPUT_BYTES),
            read_bounded(stderr, MAX_ERROR_BYTES)
        );
        let status = child.wait().await;
        (output, errors, status)
    };
    let (output, errors, status) = match tokio::time::timeout(AUDIT_TIMEOUT, work).await {
        Ok(done) => done,
        Err(_) => {
            // `child` is dropped below too; kill now so the browser is released at once.
            let _killed = child.kill().await;
            return Err(LighthouseError::Timeout(AUDIT_TIMEOUT));
        }
    };
    let status = status.map_err(|error| LighthouseError::Failed(error.to_string()))?;
    if !status.success() {
        return Err(LighthouseError::Failed(failure_message(&errors)));
    }
    parse_output(&output)
}

fn parse_output(output: &[u8]) -> Result<AuditReports, LighthouseError> {
    let envelope: serde_json::Value = serde_json::from_slice(output)
        .map_err(|error| LighthouseError::Failed(format!("unreadable output: {error}")))?;
    let field = |name: &str| -> Result<String, LighthouseError> {
        envelope[name]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| LighthouseError::Failed(format!("no {name} report in its output")))
    };
    Ok(AuditReports {
        json: field("json")?,
        html: field("html")?,
    })
}

/// The error Node printed (its last `Error:` line), without the stack.
fn failure_message(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .rev()
        .find(|line| line.contains("Error"))
        .or_else(|| text.lines().rev().find(|line| !line.trim().is_empty()))
        .unwrap_or("Node.js exited with an error")
        .trim();
    line.strip_prefix("Error: ").unwrap_or(line).to_string()
}

async fn read_bounded<R: tokio::io::AsyncRead + Unpin>(reader: Option<R>, limit: u64) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let Some(reader) = reader {
        let mut limited = reader.take(limit);
        let _read = limited.read_to_end(&mut bytes).await;
        // Drain the rest so the child never blocks on a full pipe.
        let mut rest = limited.into_inner();
        let _drained = tokio::io::copy(&mut rest, &mut tokio::io::sink()).await;
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_node_says_how_to_enable_it() {
        let options = LighthouseOptions {
            node_path: Some(PathBuf::from("/nonexistent/node")),
            lighthouse_path: None,
        };
        let error = options.node().expect_err("missing");
        let text = error.to_string();
        assert!(text.contains("--nodePath"), "{text}");
        assert!(text.contains("Install Node.js"), "{text}");
    }

    #[test]
    fn missing_lighthouse_names_the_install_command() {
        let options = LighthouseOptions {
            node_path: None,
            lighthouse_path: Some(PathBuf::from("/nonexistent/lh")),
        };
        let text = options.lighthouse_dir().expect_err("missing").to_string();
        assert!(text.contains("npm install --prefix"), "{text}");
        assert!(text.contains(LIGHTHOUSE_VERSION), "{text}");
        assert!(
            text.contains("/nonexistent/lh/node_modules/lighthouse"),
            "{text}"
        );
    }

    #[test]
    fn node_errors_lose_their_stack() {
        let stderr = b"file:///x.mjs:3\nError: The page to audit was not found in the browser.\n    at file:///x.mjs:40:11\n";
        assert_eq!(
            failure_message(stderr),
            "The page to audit was not found in the browser."
        );
    }
}
