//! The `[oauth]` section of the tenants file: this server's canonical resource URI (RFC 8707),
//! the authorization server whose JWT access tokens it accepts, the claim naming the tenant,
//! and which tools each scope grants. Parsed strictly: an unknown key, a non-canonical URI, a
//! symmetric or unknown algorithm or a category that does not exist is an error naming the fix.

use crate::policy::tenant_tools::ToolPolicy;
use jsonwebtoken::Algorithm;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::time::Duration;
use url::Url;

/// RFC 9728 §3: the well-known path of protected-resource metadata.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Algorithms accepted when the section does not say: the asymmetric ones identity providers
/// sign access tokens with. HMAC is never accepted (a JWKS publishes no shared secrets, and an
/// `HS256` token "signed" with a public key is the classic algorithm-confusion attack).
const DEFAULT_ALGORITHMS: [&str; 4] = ["RS256", "PS256", "ES256", "EdDSA"];
/// The leeway on `exp` and `nbf` when the section does not say, and the most it may be.
const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);
const MAX_LEEWAY: Duration = Duration::from_secs(300);
/// RFC 9068 access tokens say `typ: at+jwt`; an ID token (`JWT`) is not an access token.
const DEFAULT_TOKEN_TYPES: [&str; 2] = ["at+jwt", "application/at+jwt"];

/// Tool categories a scope may name (`plugin::definition::category_info`).
const CATEGORIES: [&str; 11] = [
    "input",
    "navigation",
    "emulation",
    "performance",
    "network",
    "debugging",
    "extensions",
    "experimentalThirdParty",
    "memory",
    "experimentalWebmcp",
    "pwa",
];

/// `[oauth]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthSection {
    /// This server's canonical resource URI; access tokens must name it in `aud`.
    resource: String,
    /// The authorization server (its issuer identifier, the tokens' `iss`).
    issuer: String,
    /// Where the issuer publishes its keys; discovered from its metadata when absent.
    #[serde(default)]
    jwks_uri: Option<String>,
    #[serde(default)]
    algorithms: Option<Vec<String>>,
    /// Accepted `typ` header values.
    #[serde(default)]
    token_types: Option<Vec<String>>,
    /// The claim whose value is the tenant's name in this file.
    #[serde(default = "default_tenant_claim")]
    tenant_claim: String,
    #[serde(default)]
    leeway_secs: Option<u64>,
    /// A name for people, shown in the protected-resource metadata.
    #[serde(default)]
    resource_name: Option<String>,
    #[serde(default, rename = "scope")]
    scopes: Vec<ScopeEntry>,
}

fn default_tenant_claim() -> String {
    "tenant".into()
}

/// One `[[oauth.scope]]`: the tools a token holding this scope may list and call.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScopeEntry {
    name: String,
    /// Tool names; `"*"` is every tool.
    #[serde(default)]
    tools: Vec<String>,
    #[serde(default)]
    categories: Vec<String>,
}

/// A scope, validated.
#[derive(Debug, Clone)]
pub struct Scope {
    pub name: String,
    /// `None`: every tool.
    tools: Option<BTreeSet<String>>,
    categories: BTreeSet<String>,
}

impl Scope {
    /// The tools it names (none when it grants every tool, `"*"`).
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().flatten().map(String::as_str)
    }

    fn allows(&self, tool: &str, category: &str) -> bool {
        self.tools.as_ref().is_none_or(|tools| tools.contains(tool))
            || self.categories.contains(category)
    }
}

/// `[oauth]`, validated.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    pub resource: String,
    pub issuer: String,
    pub jwks_uri: Option<Url>,
    pub algorithms: Vec<Algorithm>,
    pub token_types: Vec<String>,
    pub tenant_claim: String,
    pub leeway: Duration,
    pub resource_name: Option<String>,
    pub scopes: Vec<Scope>,
}

impl OAuthSection {
    pub fn validate(self) -> Result<OAuthConfig, String> {
        let resource = canonical_resource(&self.resource)?;
        let issuer = endpoint(&self.issuer, "issuer")?;
        if issuer.query().is_some() || issuer.fragment().is_some() {
            return Err(format!(
                "[oauth] issuer {:?} must not have a query or fragment (RFC 8414)",
                self.issuer
            ));
        }
        let jwks_uri = self
            .jwks_uri
            .as_deref()
            .map(|uri| endpoint(uri, "jwks_uri"))
            .transpose()?;
        let algorithms = self
            .algorithms
            .unwrap_or_else(|| DEFAULT_ALGORITHMS.map(String::from).to_vec())
            .iter()
            .map(|name| algorithm(name))
            .collect::<Result<Vec<_>, _>>()?;
        if algorithms.is_empty() {
            return Err("[oauth] algorithms must name at least one algorithm".into());
        }
        let leeway = self
            .leeway_secs
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_LEEWAY);
        if leeway > MAX_LEEWAY {
            return Err(format!(
                "[oauth] leeway_secs is {}; at most {} s of clock skew is tolerated",
                leeway.as_secs(),
                MAX_LEEWAY.as_secs()
            ));
        }
        if self.tenant_claim.trim().is_empty() {
            return Err("[oauth] tenant_claim must name a claim, e.g. \"tenant\"".into());
        }
        let scopes = self
            .scopes
            .into_iter()
            .map(scope)
            .collect::<Result<Vec<_>, _>>()?;
        if scopes.is_empty() {
            return Err(
                "[oauth] needs at least one [[oauth.scope]] naming the tools it grants (tools = [\"*\"] for all)".into(),
            );
        }
        let mut names = BTreeSet::new();
        if let Some(twice) = scopes.iter().find(|scope| !names.insert(&scope.name)) {
            return Err(format!("[oauth] scope {:?} is defined twice", twice.name));
        }
        Ok(OAuthConfig {
            resource,
            // The `iss` claim must equal the identifier exactly as the issuer writes it.
            issuer: self.issuer,
            jwks_uri,
            algorithms,
            token_types: self
                .token_types
                .unwrap_or_else(|| DEFAULT_TOKEN_TYPES.map(String::from).to_vec()),
            tenant_claim: self.tenant_claim,
            leeway,
            resource_name: self.resource_name,
            scopes,
        })
    }
}

impl OAuthConfig {
    /// The RFC 9728 metadata URL of this resource: the well-known path inserted between the
    /// resource's origin and its path (`https://h/mcp` -> `https://h/.well-known/oauth-protected-resource/mcp`).
    pub fn metadata_url(&self) -> String {
        match Url::parse(&self.resource) {
            Ok(url) => format!(
                "{}{}{}",
                url.origin().ascii_serialization(),
                METADATA_PATH,
                url.path().trim_end_matches('/')
            ),
            Err(_) => self.resource.clone(),
        }
    }

    /// The tools the scopes of a token grant, as a policy (a union, like a tenant's own).
    pub fn policy_for(&self, granted: &[String]) -> ToolPolicy {
        let held: Vec<&Scope> = self
            .scopes
            .iter()
            .filter(|scope| granted.contains(&scope.name))
            .collect();
        if held.iter().any(|scope| scope.tools.is_none()) {
            return ToolPolicy::default();
        }
        ToolPolicy {
            tools: Some(
                held.iter()
                    .flat_map(|scope| scope.tools.iter().flatten().cloned())
                    .collect(),
            ),
            categories: Some(
                held.iter()
                    .flat_map(|scope| scope.categories.iter().cloned())
                    .collect(),
            ),
            ..ToolPolicy::default()
        }
    }

    /// The scopes any one of which grants the tool.
    pub fn scopes_granting(&self, tool: &str, category: &str) -> Vec<&str> {
        self.scopes
            .iter()
            .filter(|scope| scope.allows(tool, category))
            .map(|scope| scope.name.as_str())
            .collect()
    }

    /// Whether any of the scopes is one this server knows.
    pub fn knows_any(&self, granted: &[String]) -> bool {
        self.scopes
            .iter()
            .any(|scope| granted.contains(&scope.name))
    }
}

/// The resource URI as RFC 8707 and the MCP authorization spec want it: absolute, `https`
/// (plain `http` only on a loopback host), lowercase scheme and host, no fragment.
fn canonical_resource(text: &str) -> Result<String, String> {
    let url = endpoint(text, "resource")?;
    if url.fragment().is_some() {
        return Err(format!(
            "[oauth] resource {text:?} must not have a fragment (RFC 8707)"
        ));
    }
    let canonical = url.as_str();
    let same = canonical == text || canonical.strip_suffix('/') == Some(text);
    if !same {
        return Err(format!(
            "[oauth] resource {text:?} is not in canonical form; write {:?}",
            canonical.trim_end_matches('/')
        ));
    }
    Ok(text.to_string())
}

/// An absolute URL of the authorization side: `https`, or `http` on a loopback host (a
/// development identity provider); never credentials in it.
fn endpoint(text: &str, key: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|error| format!("[oauth] {key} {text:?}: {error}"))?;
    let loopback = crate::net::address::is_loopback_host(url.host());
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        _ => {
            return Err(format!(
                "[oauth] {key} {text:?} must be an https URL (plain http only on a loopback host)"
            ));
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("[oauth] {key} {text:?} must not carry credentials"));
    }
    Ok(url)
}

fn algorithm(name: &str) -> Result<Algorithm, String> {
    let algorithm: Algorithm = name
        .parse()
        .map_err(|_| format!("[oauth] unknown algorithm {name:?}"))?;
    if matches!(
        algorithm,
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
    ) {
        return Err(format!(
            "[oauth] algorithm {name} is symmetric; access tokens must be signed with the issuer's published keys (RS256, PS256, ES256, EdDSA...)"
        ));
    }
    Ok(algorithm)
}

fn scope(entry: ScopeEntry) -> Result<Scope, String> {
    // RFC 6749 §3.3: printable ASCII except space, `"` and `\`.
    let valid_name = !entry.name.is_empty()
        && entry.name.bytes().all(|byte| {
            byte == 0x21 || (0x23..=0x5b).contains(&byte) || (0x5d..=0x7e).contains(&byte)
        });
    if !valid_name {
        return Err(format!(
            "[oauth] scope name {:?} is not a valid OAuth scope token",
            entry.name
        ));
    }
    if let Some(unknown) = entry
        .categories
        .iter()
        .find(|category| !CATEGORIES.contains(&category.as_str()))
    {
        return Err(format!(
            "[oauth] scope {:?}: unknown category {unknown:?} (one of {})",
            entry.name,
            CATEGORIES.join(", ")
        ));
    }
    if entry.tools.is_empty() && entry.categories.is_empty() {
        return Err(format!(
            "[oauth] scope {:?} grants nothing: give it tools (\"*\" for all) or categories",
            entry.name
        ));
    }
    let tools = if entry.tools.iter().any(|tool| tool == "*") {
        None
    } else {
        Some(entry.tools.into_iter().collect())
    };
    Ok(Scope {
        name: entry.name,
        tools,
        categories: entry.categories.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<OAuthConfig, String> {
        toml::from_str::<OAuthSection>(text)
            .map_err(|error| error.to_string())?
            .validate()
    }

    const BASE: &str = "resource = \"https://mcp.example.com/mcp\"\nissuer = \"https://idp.example.com\"\n[[scope]]\nname = \"devtools:read\"\ntools = [\"list_pages\"]\ncategories = [\"navigation\"]\n";

    #[test]
    fn a_minimal_section_gets_safe_defaults() {
        let config = parse(BASE).expect("valid");
        assert_eq!(config.tenant_claim, "tenant");
        assert_eq!(config.leeway, DEFAULT_LEEWAY);
        assert!(!config.algorithms.contains(&Algorithm::HS256));
        assert_eq!(
            config.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
    }

    #[test]
    fn refuses_unknown_keys_symmetric_algorithms_and_plain_http_issuers() {
        assert!(parse(&format!("{BASE}\nextra = 1")).is_err());
        let hmac = BASE.replace(
            "issuer = \"https://idp.example.com\"",
            "issuer = \"https://idp.example.com\"\nalgorithms = [\"HS256\"]",
        );
        assert!(parse(&hmac).expect_err("HS256").contains("symmetric"));
        let plain = BASE.replace("https://idp.example.com", "http://idp.example.com");
        assert!(parse(&plain).expect_err("http").contains("https"));
        let loopback = BASE.replace("https://idp.example.com", "http://127.0.0.1:9000");
        assert!(parse(&loopback).is_ok(), "a loopback development issuer");
        let unknown_category = BASE.replace("\"navigation\"", "\"navigaton\"");
        assert!(
            parse(&unknown_category)
                .expect_err("typo")
                .contains("unknown category")
        );
        let not_canonical =
            BASE.replace("https://mcp.example.com/mcp", "HTTPS://MCP.example.com/mcp");
        assert!(
            parse(&not_canonical)
                .expect_err("case")
                .contains("canonical")
        );
        let fragment = BASE.replace("/mcp\"", "/mcp#x\"");
        assert!(parse(&fragment).is_err());
        let no_scopes =
            "resource = \"https://mcp.example.com/mcp\"\nissuer = \"https://idp.example.com\"\n";
        assert!(parse(no_scopes).is_err());
    }

    #[test]
    fn scopes_grant_tools_by_name_category_or_all() {
        let text = format!("{BASE}[[scope]]\nname = \"devtools:all\"\ntools = [\"*\"]\n");
        let config = parse(&text).expect("valid");
        let read = config.policy_for(&["devtools:read".into()]);
        assert!(read.allows("list_pages", "debugging"));
        assert!(read.allows("navigate_page", "navigation"));
        assert!(!read.allows("evaluate_script", "debugging"));
        let none = config.policy_for(&["unknown".into()]);
        assert!(!none.allows("list_pages", "navigation"));
        let all = config.policy_for(&["devtools:all".into()]);
        assert!(all.allows("evaluate_script", "debugging"));
        assert_eq!(
            config.scopes_granting("evaluate_script", "debugging"),
            vec!["devtools:all"]
        );
        assert_eq!(
            config.scopes_granting("list_pages", "navigation"),
            vec!["devtools:read", "devtools:all"]
        );
    }
}
