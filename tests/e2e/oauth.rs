//! `serve` as an OAuth 2.1 resource server, against a real identity provider: oidc-provider
//! (OpenID Certified, `tests/idp/idp.mjs`) on 127.0.0.1 issues JWT access tokens with the
//! client-credentials grant and resource indicators; the server checks them against the
//! provider's JWKS. Skipped (loudly) when `node` is not installed; `scripts/test` installs the
//! npm package.

use crate::support::{FixtureServer, HttpServer, Route, TenantSpec, timeout};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

/// This server's resource URI (RFC 8707) in the tests; it need not be where the server
/// listens (behind a gateway it never is).
const RESOURCE: &str = "https://devtools-mcp.test/mcp";
const OTHER_RESOURCE: &str = "https://other.test/mcp";
const METADATA_URL: &str = "https://devtools-mcp.test/.well-known/oauth-protected-resource/mcp";

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

fn call(tool: &str) -> String {
    json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": tool, "arguments": {} } })
        .to_string()
}

/// The identity provider, killed on drop.
struct Idp {
    child: Child,
    issuer: String,
}

impl Idp {
    /// `None` (after saying so) when node is not installed.
    async fn start(clients: Value) -> Option<Idp> {
        if crate::support::command("node")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!(
                "SKIPPED: node is not installed; the OAuth tests need it for the identity provider"
            );
            return None;
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/idp");
        assert!(
            dir.join("node_modules/oidc-provider").is_dir(),
            "oidc-provider is not installed: run scripts/test, or `npm ci --prefix tests/idp`"
        );
        let config = json!({ "clients": clients, "resources": [RESOURCE, OTHER_RESOURCE] });
        let mut child = crate::support::tokio_command("node")
            .arg(dir.join("idp.mjs"))
            .arg(config.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the identity provider");
        let stdout = child.stdout.take().expect("its stdout");
        let mut lines = BufReader::new(stdout).lines();
        let issuer = tokio::time::timeout(timeout(), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(ready) = serde_json::from_str::<Value>(&line)
                    && let Some(issuer) = ready["issuer"].as_str()
                {
                    return issuer.to_owned();
                }
            }
            panic!("the identity provider exited before listening");
        })
        .await
        .expect("the identity provider did not start in time");
        Some(Idp { child, issuer })
    }

    /// An access token from the token endpoint (client credentials, RFC 8707 resource).
    async fn token(&self, client: &str, resource: &str, scope: &str) -> String {
        let form = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "client_credentials")
            .append_pair("resource", resource)
            .append_pair("scope", scope)
            .finish();
        let response = reqwest::Client::new()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(format!("secret-of-{client}")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .expect("the token endpoint answered");
        let status = response.status();
        let body: Value = response.json().await.expect("a JSON token response");
        assert!(status.is_success(), "token request failed: {body}");
        body["access_token"]
            .as_str()
            .expect("an access token")
            .to_owned()
    }

    /// A token with `claims`, signed by a key of the provider's making that is not its own,
    /// under the kid of its real key.
    async fn forge(&self, claims: &Value) -> String {
        reqwest::Client::new()
            .post(format!("{}/test/forge", self.issuer))
            .body(claims.to_string())
            .send()
            .await
            .expect("the forge endpoint answered")
            .text()
            .await
            .expect("a token")
    }
}

impl Drop for Idp {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn client(id: &str, tenant: &str, scope: &str, ttl: u64) -> Value {
    json!({ "id": id, "secret": format!("secret-of-{id}"), "tenant": tenant, "scope": scope, "ttl": ttl })
}

/// The `[oauth]` section for `issuer`: navigation tools, `take_snapshot`, or everything.
fn oauth_section(issuer: &str) -> String {
    format!(
        r#"[oauth]
resource = "{RESOURCE}"
issuer = "{issuer}"
tenant_claim = "tenant"
leeway_secs = 1
resource_name = "devtools-mcp under test"

[[oauth.scope]]
name = "devtools:pages"
categories = ["navigation"]

[[oauth.scope]]
name = "devtools:snapshot"
tools = ["take_snapshot"]

[[oauth.scope]]
name = "devtools:all"
tools = ["*"]
"#
    )
}

/// A raw `POST /mcp`; returns the status, the `WWW-Authenticate` header and the body.
async fn post(server: &HttpServer, token: Option<&str>, body: &str) -> (u16, String, String) {
    let mut request = reqwest::Client::new()
        .post(server.mcp_url())
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .timeout(Duration::from_secs(30))
        .body(body.to_owned());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the server answered");
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (status, challenge, response.text().await.unwrap_or_default())
}

/// The claims of a JWT, decoded without checking anything (to forge a copy).
fn claims_of(token: &str) -> Value {
    use base64::Engine;
    let payload = token.split('.').nth(1).expect("a JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON claims")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_access_token_from_the_identity_provider_drives_take_snapshot_end_to_end() {
    let Some(idp) = Idp::start(json!([client(
        "alice-agent",
        "alice",
        "devtools:pages devtools:snapshot devtools:all",
        300
    )]))
    .await
    else {
        return;
    };
    let pages = FixtureServer::start(vec![Route::html(
        "/app",
        "<!doctype html><title>OAuth fixture</title><button>Signed in through OAuth</button>",
    )]);
    let server = HttpServer::start_with_head(
        &oauth_section(&idp.issuer),
        &[TenantSpec::oauth_only("alice").on_loopback()],
        &[],
    )
    .await;

    // RFC 9728 metadata, at the path-suffixed and the plain well-known URL.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let metadata: Value = reqwest::get(format!("{}{path}", server.base))
            .await
            .expect("metadata")
            .json()
            .await
            .expect("JSON metadata");
        assert_eq!(metadata["resource"], RESOURCE, "{metadata}");
        assert_eq!(metadata["authorization_servers"], json!([idp.issuer]));
        assert_eq!(
            metadata["scopes_supported"],
            json!(["devtools:pages", "devtools:snapshot", "devtools:all"])
        );
    }

    // No token: 401 pointing at the metadata.
    let (status, challenge, _) = post(&server, None, INITIALIZE).await;
    assert_eq!(status, 401);
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{METADATA_URL}\"")
    );

    // A token for navigation and snapshots only: the tools it may use, and no others.
    let token = idp
        .token("alice-agent", RESOURCE, "devtools:pages devtools:snapshot")
        .await;
    let alice = server.connect(&token).await;
    let tools = alice.tool_names().await;
    for expected in ["take_snapshot", "new_page", "navigate_page", "list_pages"] {
        assert!(
            tools.iter().any(|tool| tool == expected),
            "{expected} in {tools:?}"
        );
    }
    assert!(
        !tools.iter().any(|tool| tool == "evaluate_script"),
        "the token's scopes do not grant evaluate_script: {tools:?}"
    );
    let opened = alice
        .call("new_page", json!({ "url": pages.url("/app") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let snapshot = alice.call("take_snapshot", json!({})).await;
    assert!(
        snapshot.text.contains("Signed in through OAuth"),
        "{}",
        snapshot.text
    );

    // A tool outside the token's scopes: 403 naming the scope that grants it.
    let (status, challenge, body) = post(&server, Some(&token), &call("evaluate_script")).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"devtools:all\"")
            && challenge.contains(&format!("resource_metadata=\"{METADATA_URL}\"")),
        "{challenge}"
    );

    // With the scope that grants everything, the same call goes through.
    let all = idp.token("alice-agent", RESOURCE, "devtools:all").await;
    let alice_all = server.connect(&all).await;
    let evaluated = alice_all
        .call("evaluate_script", json!({ "function": "() => 6 * 7" }))
        .await;
    assert!(evaluated.text.contains("42"), "{}", evaluated.text);
    alice.close().await;
    alice_all.close().await;
    assert!(
        !server.stderr().contains(&token),
        "the token never appears in the server's log"
    );
    // The autoscaling signal (deploy/kubernetes/horizontalpodautoscaler.yaml).
    let (status, metrics) = server.metrics().await;
    assert_eq!(status, 200, "{metrics}");
    assert!(
        metrics.contains("\ndevtools_mcp_calls_in_flight 0")
            && metrics.contains("\ndevtools_mcp_active_tenants 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_tokens_get_the_right_status_and_challenge() {
    let Some(idp) = Idp::start(json!([
        client(
            "alice-agent",
            "alice",
            "devtools:pages devtools:snapshot",
            300
        ),
        client("short-agent", "alice", "devtools:pages", 3),
        client("mallory-agent", "mallory", "devtools:all", 300),
        client("stranger-agent", "alice", "profile:read", 300),
    ]))
    .await
    else {
        return;
    };
    let server = HttpServer::start_with_head(
        &oauth_section(&idp.issuer),
        &[
            TenantSpec::oauth_only("alice").on_loopback(),
            TenantSpec::new("bob", "static-token-of-bob"),
        ],
        &[],
    )
    .await;
    let invalid = |challenge: &str, reason: &str| {
        assert!(
            challenge.starts_with(&format!("Bearer resource_metadata=\"{METADATA_URL}\""))
                && challenge.contains("error=\"invalid_token\"")
                && challenge.contains(reason),
            "expected invalid_token ({reason}): {challenge}"
        );
    };

    // The token the others are variations of is good.
    let good = idp
        .token("alice-agent", RESOURCE, "devtools:pages devtools:snapshot")
        .await;
    let (status, _, body) = post(&server, Some(&good), INITIALIZE).await;
    assert_eq!(status, 200, "{body}");

    // Issued for another resource (RFC 8707): the audience is not ours.
    let elsewhere = idp
        .token("alice-agent", OTHER_RESOURCE, "devtools:pages")
        .await;
    let (status, challenge, _) = post(&server, Some(&elsewhere), INITIALIZE).await;
    assert_eq!(status, 401);
    invalid(&challenge, "audience");

    // The same claims signed by another key under the provider's kid.
    let forged = idp.forge(&claims_of(&good)).await;
    let (status, challenge, _) = post(&server, Some(&forged), INITIALIZE).await;
    assert_eq!(status, 401);
    invalid(&challenge, "signature");

    // A token of a tenant the tenants file does not have.
    let mallory = idp.token("mallory-agent", RESOURCE, "devtools:all").await;
    let (status, challenge, _) = post(&server, Some(&mallory), INITIALIZE).await;
    assert_eq!(status, 401);
    invalid(&challenge, "names no tenant");

    // A valid token holding none of this server's scopes: 403 listing them.
    let stranger = idp.token("stranger-agent", RESOURCE, "profile:read").await;
    let (status, challenge, _) = post(&server, Some(&stranger), INITIALIZE).await;
    assert_eq!(status, 403);
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"devtools:pages devtools:snapshot devtools:all\""),
        "{challenge}"
    );

    // A scope that does not grant the tool called: 403.
    let (status, challenge, _) = post(&server, Some(&good), &call("take_screenshot")).await;
    assert_eq!(status, 403);
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );

    // Static tokens keep working beside OAuth; an unknown one is an invalid token.
    let (status, _, body) = post(&server, Some("static-token-of-bob"), INITIALIZE).await;
    assert_eq!(status, 200, "{body}");
    let (status, challenge, _) = post(&server, Some("no-such-static-token"), INITIALIZE).await;
    assert_eq!(status, 401);
    invalid(&challenge, "Unknown or revoked");

    // Expired: a 3 s token, past its expiry and the 1 s leeway.
    let short = idp.token("short-agent", RESOURCE, "devtools:pages").await;
    let expires = claims_of(&short)["exp"].as_u64().expect("exp");
    let (status, _, body) = post(&server, Some(&short), INITIALIZE).await;
    assert_eq!(status, 200, "fresh: {body}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|now| now.as_secs())
        .unwrap_or_default()
        <= expires + 1
    {
        assert!(Instant::now() < deadline, "the clock did not pass exp");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (status, challenge, _) = post(&server, Some(&short), INITIALIZE).await;
    assert_eq!(status, 401);
    invalid(&challenge, "expired");
}

/// The identity provider down: OAuth tenants are answered 503 with `Retry-After` (not a 401
/// that would make a client drop a valid token), and a tenant of the tenants file, whose token
/// needs no provider, is served as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_identity_provider_down_oauth_tenants_get_503_and_static_ones_are_served() {
    let Some(idp) = Idp::start(json!([client("alice-agent", "alice", "devtools:all", 300)])).await
    else {
        return;
    };
    let token = idp.token("alice-agent", RESOURCE, "devtools:all").await;
    let server = HttpServer::start_with_head(
        &oauth_section(&idp.issuer),
        &[
            TenantSpec::oauth_only("alice").on_loopback(),
            TenantSpec::new("bob", "token-bob").on_loopback(),
        ],
        &[],
    )
    .await;
    // The provider goes away before the server has fetched its keys.
    drop(idp);
    let response = reqwest::Client::new()
        .post(server.mcp_url())
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .bearer_auth(&token)
        .timeout(Duration::from_secs(30))
        .body(INITIALIZE)
        .send()
        .await
        .expect("the server answered");
    assert_eq!(response.status().as_u16(), 503);
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    assert!(
        retry_after.is_some_and(|seconds| seconds > 0),
        "no Retry-After in {:?}",
        response.headers()
    );
    let body = response.text().await.unwrap_or_default();
    assert!(body.contains("retry shortly"), "{body}");

    let bob = server.connect("token-bob").await;
    let listed = bob.call("list_pages", json!({})).await;
    assert!(!listed.is_error, "{}", listed.text);
    bob.close().await;
}
