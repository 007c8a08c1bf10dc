//! Live views (`request_human`) under `serve`: opt-in by the server's
//! `--experimentalHumanInTheLoop` and, per tenant, by `flags = { experimentalHumanInTheLoop =
//! true }` in its entry; served on this listener under `/live/<token>/`
//! ([`crate::browser::features::human::tenant`]), never on a port of their own. Their URLs
//! are built on the server's public address: the tenants file's `public_url`, else the origin
//! of `[oauth] resource`, else the `Host` the agent's client reached the server by when that
//! is a loopback name (plain `http` is then what it used). Anything else is refused, naming
//! the setting to give.

use crate::browser::features::human::tenant::{Bearer, Endpoint};
use crate::pipeline::Pipeline;
use crate::serve::tenants::Tenant;
use crate::serve::tenants::registry::Registry;
use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// The flag, on the command line and in a tenant's `flags`.
pub const FLAG: &str = "experimentalHumanInTheLoop";
/// The tool it gates.
pub const TOOL: &str = "request_human";

/// Whether the server was started with the flag.
pub fn server_allows(pipeline: &Pipeline) -> bool {
    pipeline.flags.get(FLAG).and_then(|value| value.as_bool()) == Some(true)
}

/// Whether the tenant opted in (its entry says `experimentalHumanInTheLoop = true`).
pub fn opted_in(tenant: &Tenant) -> bool {
    tenant.flags.get(FLAG).and_then(|value| value.as_bool()) == Some(true)
}

/// Why `request_human` is off for a tenant of a server that allows it.
pub fn refusal(tenant: &Tenant) -> String {
    format!(
        "Tool {TOOL} is off for tenant {:?}: a person's live view is opt-in per tenant. Set flags = {{ {FLAG} = true }} in its [[tenant]] entry of the tenants file (and reload with SIGHUP).",
        tenant.name
    )
}

/// Where the live views of a call of `tenant` are served, when it may open any.
pub fn endpoint(
    pipeline: &Pipeline,
    tenants: &Registry,
    tenant: &Tenant,
    context: &RequestContext<RoleServer>,
) -> Option<Endpoint> {
    if !server_allows(pipeline) || !opted_in(tenant) {
        return None;
    }
    let host = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.headers.get(http::header::HOST))
        .and_then(|value| value.to_str().ok());
    let oauth_origin = tenants.oauth().and_then(|oauth| {
        url::Url::parse(&oauth.resource)
            .ok()
            .map(|url| url.origin().ascii_serialization())
    });
    Some(Endpoint {
        tenant: tenant.name.clone(),
        base: public_base(tenants.public_url(), oauth_origin, host),
    })
}

/// The origin a person's browser reaches this server at, or why it is unknown.
fn public_base(
    public_url: Option<String>,
    oauth_origin: Option<String>,
    host: Option<&str>,
) -> Result<String, String> {
    if let Some(base) = public_url.or(oauth_origin) {
        return Ok(base);
    }
    let loopback = host.and_then(|host| {
        let url = url::Url::parse(&format!("http://{host}/")).ok()?;
        crate::net::address::is_loopback_host(url.host())
            .then(|| url.origin().ascii_serialization())
    });
    loopback.ok_or_else(|| {
        format!(
            "The live view's address is unknown: the client reached this server as {:?}, and the tenants file says neither public_url nor [oauth] resource, so whether people's browsers reach it over https and at which name cannot be known. Set public_url = \"https://<the name people's browsers use>\" at the top of the tenants file (and reload with SIGHUP).",
            host.unwrap_or("(no Host header)")
        )
    })
}

/// Who a request to `/live/...` says it is: its bearer token's tenant (tenants-file tokens;
/// any other `Authorization` is unknown, and refused).
pub fn bearer(tenants: &Registry, headers: &http::HeaderMap) -> Bearer {
    if !headers.contains_key(http::header::AUTHORIZATION) {
        return Bearer::None;
    }
    match super::auth::bearer(headers)
        .ok()
        .and_then(|token| tenants.authenticate(token))
    {
        Some(tenant) => Bearer::Tenant(tenant.name.clone()),
        None => Bearer::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::public_base;

    #[test]
    fn the_public_address_is_configured_or_a_loopback_host() {
        let configured = Some("https://mcp.example.com".to_string());
        assert_eq!(
            public_base(configured, None, Some("10.0.0.2:8080")).as_deref(),
            Ok("https://mcp.example.com")
        );
        let oauth = Some("https://idp-resource.example".to_string());
        assert_eq!(
            public_base(None, oauth, None).as_deref(),
            Ok("https://idp-resource.example")
        );
        assert_eq!(
            public_base(None, None, Some("127.0.0.1:4000")).as_deref(),
            Ok("http://127.0.0.1:4000")
        );
        assert_eq!(
            public_base(None, None, Some("localhost:4000")).as_deref(),
            Ok("http://localhost:4000")
        );
        let unknown = public_base(None, None, Some("mcp.example.com")).expect_err("unknown");
        assert!(unknown.contains("public_url"), "{unknown}");
        assert!(public_base(None, None, None).is_err());
    }
}
