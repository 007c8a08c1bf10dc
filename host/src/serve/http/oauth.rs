//! The HTTP server as an OAuth 2.1 resource server (the MCP authorization spec), beside the
//! static tokens of the tenants file: RFC 9728 protected-resource metadata, `401` with
//! `WWW-Authenticate: Bearer resource_metadata="..."`, JWT access tokens verified against the
//! issuer's keys ([`TokenVerifier`]), the tenant taken from a configured claim, and `403
//! insufficient_scope` for a tool call the token's scopes do not grant. A token never travels
//! further than this module: it is taken off the request before rmcp and the tools see it.

pub mod jwks;
pub mod verifier;

use super::Body;
use super::auth::AuthError;
use crate::pipeline::Pipeline;
use crate::policy::tenant_tools::ToolPolicy;
use crate::runtime::definition::category_info;
use crate::serve::tenants::Tenant;
use crate::serve::tenants::oauth::OAuthConfig;
use crate::serve::tenants::registry::Registry;
use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use serde_json::Value;
use std::sync::Arc;
pub use verifier::{TokenVerifier, VerifiedToken, VerifyError};

pub use crate::serve::tenants::oauth::METADATA_PATH;

/// Verifies access tokens and answers for the resource's metadata.
pub struct ResourceServer {
    verifier: TokenVerifier,
    pipeline: Arc<Pipeline>,
    max_body_bytes: usize,
}

/// A refusal, already an HTTP answer.
pub type Refusal = Response<Body>;

impl ResourceServer {
    pub fn new(pipeline: Arc<Pipeline>, max_body_bytes: usize) -> ResourceServer {
        ResourceServer {
            verifier: TokenVerifier::default(),
            pipeline,
            max_body_bytes,
        }
    }

    /// `GET /.well-known/oauth-protected-resource[/<resource path>]`; `None` when OAuth is not
    /// configured or the path is not this resource's.
    pub fn metadata(&self, tenants: &Registry, path: &str) -> Option<Response<Body>> {
        let config = tenants.oauth()?;
        let suffix = path.strip_prefix(METADATA_PATH)?;
        let own = url::Url::parse(&config.resource)
            .map(|url| url.path().trim_end_matches('/').to_string())
            .unwrap_or_default();
        if !suffix.is_empty() && suffix != own {
            return None;
        }
        let mut document = serde_json::json!({
            "resource": config.resource,
            "authorization_servers": [config.issuer],
            "scopes_supported": config.scopes.iter().map(|scope| &scope.name).collect::<Vec<_>>(),
            "bearer_methods_supported": ["header"],
            "resource_signing_alg_values_supported": config.algorithms.iter().map(|alg| format!("{alg:?}")).collect::<Vec<_>>(),
        });
        if let Some(name) = &config.resource_name {
            document["resource_name"] = Value::String(name.clone());
        }
        let mut response = json_response(StatusCode::OK, document.to_string());
        // A public document browser-based clients read across origins.
        response.headers_mut().insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        Some(response)
    }

    /// The second verifier: a request whose bearer token is not one of the tenants file is
    /// let in when it carries a valid access token of the configured issuer for one of its
    /// tenants, that tenant narrowed to the token's scopes. Otherwise the refusal: `401` with a
    /// challenge that points to the metadata, `403 insufficient_scope`, or `503` when the
    /// issuer's keys cannot be fetched.
    pub async fn admit<B>(
        &self,
        mut request: Request<B>,
        tenants: &Registry,
        static_error: &AuthError,
    ) -> Result<(Request<Full<Bytes>>, Arc<Tenant>), Refusal>
    where
        B: http_body::Body<Data = Bytes>,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let Some(config) = tenants.oauth() else {
            return Err(refuse(
                StatusCode::UNAUTHORIZED,
                "Bearer realm=\"devtools-mcp\"".into(),
                static_error.message(),
            ));
        };
        let token = match static_error {
            AuthError::Unknown => bearer(&request).unwrap_or_default(),
            AuthError::Missing => {
                return Err(refuse(
                    StatusCode::UNAUTHORIZED,
                    challenge(&config, &[]),
                    "Missing bearer token: get an access token for this resource from the authorization server named in its protected-resource metadata, then send `Authorization: Bearer <token>`.",
                ));
            }
            AuthError::Malformed => {
                return Err(invalid_token(&config, static_error.message()));
            }
        };
        let verified = match self.verifier.verify(&config, &token).await {
            Ok(verified) => verified,
            Err(error) if error.is_unavailable() => {
                tracing::warn!(%error, "an access token could not be checked");
                let mut refusal = refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    challenge(&config, &[]),
                    "The authorization server's keys cannot be fetched right now; retry shortly.",
                );
                refusal
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
                return Err(refusal);
            }
            // Neither a token of the tenants file nor a JWT.
            Err(VerifyError::Malformed) => {
                return Err(invalid_token(&config, static_error.message()));
            }
            Err(error) => {
                tracing::info!(%error, "access token refused");
                return Err(invalid_token(&config, &format!("{error}.")));
            }
        };
        let Some(tenant) = tenants.tenant(&verified.tenant) else {
            tracing::info!(tenant = %verified.tenant, subject = ?verified.subject, "access token for an unknown or revoked tenant");
            return Err(invalid_token(
                &config,
                &format!(
                    "The token's {} claim names no tenant of this server (or a revoked one).",
                    config.tenant_claim
                ),
            ));
        };
        if !config.knows_any(&verified.scopes) {
            let all: Vec<&str> = config.scopes.iter().map(|s| s.name.as_str()).collect();
            return Err(insufficient_scope(
                &config,
                &all,
                "The token holds none of this server's scopes.",
            ));
        }
        let granted = config.policy_for(&verified.scopes);
        // The token itself goes no further than here.
        request.headers_mut().remove(header::AUTHORIZATION);
        let (parts, body) = request.into_parts();
        let body = match Limited::new(body, self.max_body_bytes).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(_) => {
                return Err(refuse(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    challenge(&config, &[]),
                    "The request body is too large or was cut off.",
                ));
            }
        };
        if let Some(tool) = self.refused_tool(&body, &granted) {
            let category = self.category(&tool);
            let needed = config.scopes_granting(&tool, &category);
            return Err(insufficient_scope(
                &config,
                &needed,
                &format!("The token's scopes do not grant tool {tool}."),
            ));
        }
        let mut narrowed: Tenant = (*tenant).clone();
        // Script through URLs and init scripts follows the token's scopes too.
        narrowed.urls.script &= granted.allows("evaluate_script", "debugging");
        narrowed.policy.within = Some(Box::new(granted));
        Ok((
            Request::from_parts(parts, Full::new(body)),
            Arc::new(narrowed),
        ))
    }

    /// The tool of a `tools/call` in the body that the granted scopes do not cover.
    fn refused_tool(&self, body: &[u8], granted: &ToolPolicy) -> Option<String> {
        let message: Value = serde_json::from_slice(body).ok()?;
        let messages = match message {
            Value::Array(batch) => batch,
            single => vec![single],
        };
        messages.iter().find_map(|message| {
            if message.get("method")?.as_str()? != "tools/call" {
                return None;
            }
            let tool = message.get("params")?.get("name")?.as_str()?;
            let category = self.category(tool);
            (!granted.allows(tool, &category)).then(|| tool.to_string())
        })
    }

    fn category(&self, tool: &str) -> String {
        self.pipeline
            .tools
            .current()
            .get(tool)
            .map(|entry| category_info(entry.definition().annotations.category).0)
            .unwrap_or_default()
            .to_string()
    }
}

/// The bearer token of a request, if it has one.
fn bearer<B>(request: &Request<B>) -> Option<String> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_string())
}

/// `Bearer resource_metadata="..."`, with RFC 6750 error attributes when there are any.
fn challenge(config: &OAuthConfig, attributes: &[(&str, &str)]) -> String {
    let mut value = format!("Bearer resource_metadata=\"{}\"", config.metadata_url());
    for (name, text) in attributes {
        // Quoted-string: no quotes or backslashes inside (RFC 6750 §3 restricts the charset).
        let text: String = text
            .chars()
            .filter(|c| *c != '"' && *c != '\\' && (' '..='~').contains(c))
            .collect();
        value.push_str(&format!(", {name}=\"{text}\""));
    }
    value
}

fn invalid_token(config: &OAuthConfig, description: &str) -> Refusal {
    refuse(
        StatusCode::UNAUTHORIZED,
        challenge(
            config,
            &[
                ("error", "invalid_token"),
                ("error_description", description),
            ],
        ),
        description,
    )
}

fn insufficient_scope(config: &OAuthConfig, scopes: &[&str], description: &str) -> Refusal {
    let scope = scopes.join(" ");
    let message = format!("{description} Ask the authorization server for scope \"{scope}\".");
    refuse(
        StatusCode::FORBIDDEN,
        challenge(
            config,
            &[
                ("error", "insufficient_scope"),
                ("scope", &scope),
                ("error_description", description),
            ],
        ),
        &message,
    )
}

/// A refusal with its challenge and a JSON-RPC error body saying why.
fn refuse(status: StatusCode, challenge: String, message: &str) -> Refusal {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32001, "message": message },
    });
    let mut response = json_response(status, body.to_string());
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

fn json_response(status: StatusCode, body: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
