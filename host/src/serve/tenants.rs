//! The tenants file: who may call the HTTP server (a bearer token, stored as its SHA-256), and
//! what each tenant gets (its tool policy, quotas, sandbox root and browser). Parsing is strict:
//! an unknown key, a duplicate name or token, or a malformed hash is an error naming the fix.

pub mod checks;
pub mod lease;
mod limits;
pub mod oauth;
pub mod public_url;
pub mod registry;

use crate::net::EgressPolicy;
use crate::policy::limits::Limits;
use crate::policy::tenant_tools::ToolPolicy;
use crate::policy::tenant_urls::UrlPolicy;
use oauth::{OAuthConfig, OAuthSection};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Pages a tenant may have open when its entry does not say.
const DEFAULT_MAX_PAGES: usize = 20;
/// Concurrent MCP sessions a tenant may hold when its entry does not say.
const DEFAULT_MAX_SESSIONS: usize = 8;
/// Wall-clock budget of one call when the entry does not say; a stuck page must not hold the
/// tenant's lock forever.
const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, thiserror::Error)]
pub enum TenantsError {
    #[error("cannot read the tenants file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("the tenants file {path} is not valid: {reason}")]
    Parse { path: String, reason: String },
    #[error(
        "tenant {name:?} in {path}: token_sha256 must be 64 hex digits (make one with `devtools-mcp tenant hash-token < token.txt`)"
    )]
    BadHash { path: String, name: String },
    #[error(
        "tenant {name:?} in {path}: flag `{flag}` cannot differ per tenant; tenant flags are the ones that enable tools (categoryX, experimentalX, memoryDebugging, sessionStore)"
    )]
    Flag {
        path: String,
        name: String,
        flag: String,
    },
    #[error("tenant {name:?} appears twice in {path}; tenant names must be unique")]
    DuplicateName { path: String, name: String },
    #[error("tenants {first:?} and {second:?} in {path} have the same token; give each its own")]
    DuplicateToken {
        path: String,
        first: String,
        second: String,
    },
    #[error("tenant {name:?} in {path}: name must be 1-64 characters of a-z, 0-9, '-' or '_'")]
    BadName { path: String, name: String },
    #[error("tenant {name:?} in {path}: {reason}")]
    Egress {
        path: String,
        name: String,
        reason: String,
    },
    #[error(
        "tenant {name:?} in {path} has no token_sha256; give it one, or add an [oauth] section so it can use access tokens"
    )]
    NoCredential { path: String, name: String },
    #[error("the tenants file {path}: {reason}")]
    OAuth { path: String, reason: String },
    #[error("the tenants file {path}: {reason}")]
    Quota { path: String, reason: String },
    #[error("tenant {name:?} in {path}: {reason}")]
    UnknownName {
        path: String,
        name: String,
        reason: String,
    },
    #[error(
        "tenant {name:?} in {path}: flag `{flag}` = true would turn on tools the server's flags leave off, and a tenant's flags can only narrow the server's. Start the server with --{flag}=true (and set {flag} = false for the tenants that must not have those tools), or remove it from this tenant's flags"
    )]
    WideningFlag {
        path: String,
        name: String,
        flag: String,
    },
    #[error("the tenants file {path}: {reason}")]
    PublicUrl { path: String, reason: String },
    #[error("the tenants file {path}: {reason}")]
    CodeFolder { path: String, reason: String },
    #[error("tenant {name:?} in {path}: sandbox_root {root} cannot be created: {reason}")]
    Root {
        path: String,
        name: String,
        root: String,
        reason: String,
    },
}

/// How a tenant gets its browser.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BrowserMode {
    /// A browser context of the server's one Chromium (cookies, storage and cache apart).
    #[default]
    Shared,
    /// A Chromium of its own, launched (or connected) with the server's browser flags.
    Dedicated,
}

/// One `[[tenant]]` entry as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct TenantEntry {
    name: String,
    /// Absent for a tenant that signs in with OAuth access tokens only.
    #[serde(default)]
    token_sha256: Option<String>,
    #[serde(default)]
    revoked: bool,
    sandbox_root: PathBuf,
    #[serde(default)]
    tools: Option<Vec<String>>,
    #[serde(default)]
    categories: Option<Vec<String>>,
    #[serde(default)]
    deny_tools: Vec<String>,
    #[serde(default)]
    max_pages: Option<usize>,
    #[serde(default)]
    max_sessions: Option<usize>,
    #[serde(default)]
    call_timeout_secs: Option<u64>,
    #[serde(default)]
    plugin_memory_mib: Option<usize>,
    #[serde(default)]
    plugin_fuel: Option<u64>,
    #[serde(default)]
    browser: BrowserMode,
    /// Gating flags over the server's for this tenant, e.g. `{ categoryNetwork = false }`.
    #[serde(default)]
    flags: BTreeMap<String, bool>,
    /// Address ranges and host names this tenant's browser may reach although they are not
    /// public (loopback, private, link-local...): `["10.1.0.0/16", "wiki.corp.example"]`.
    #[serde(default)]
    egress_allow: Vec<String>,
    /// Address ranges and host names this tenant's browser may never reach.
    #[serde(default)]
    egress_deny: Vec<String>,
    /// `false`: only `egress_allow` is reachable, not the public internet.
    #[serde(default)]
    egress_public: Option<bool>,
    /// Whether the tenant may run script of its own (`javascript:`/`data:` URLs, a
    /// navigation's `initScript`); default: whether it may call `evaluate_script`.
    #[serde(default)]
    script: Option<bool>,
    /// Calls of this tenant running at once (over all its sessions); more are refused.
    #[serde(default)]
    max_concurrent_calls: Option<usize>,
    /// Requests per minute (sessions and stateless requests together).
    #[serde(default)]
    requests_per_minute: Option<u32>,
    /// An MCP session without requests for this long is closed, freeing its max_sessions slot.
    #[serde(default)]
    session_idle_secs: Option<u64>,
    /// What the tenant's pages and workers may hold together (their heaps; the renderer
    /// processes serving them this plus 128 MiB): past it the largest is closed.
    #[serde(default)]
    renderer_memory_mib: Option<u64>,
    /// Memory this tenant's loaded heap snapshots may hold; by default an equal share of
    /// what the server's cap leaves after the tenants that set it.
    #[serde(default)]
    heap_snapshot_mib: Option<usize>,
    /// No answer's text exceeds this many tokens (`--maxOutputTokens` for this tenant; the
    /// lower of the two when the server sets one too).
    #[serde(default)]
    max_output_tokens: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TenantsFile {
    /// SHA-256 of the bearer token `/metrics` asks for; without it `/metrics` is off.
    #[serde(default)]
    metrics_token_sha256: Option<String>,
    #[serde(default, rename = "tenant")]
    tenants: Vec<TenantEntry>,
    /// OAuth 2.1 resource server settings (`http::oauth`).
    #[serde(default)]
    oauth: Option<OAuthSection>,
    /// The address people's browsers reach this server at, for live views' URLs.
    #[serde(default)]
    public_url: Option<String>,
}

/// The limits a tenant's calls run under.
#[derive(Debug, Clone)]
pub struct Quotas {
    pub max_pages: usize,
    pub max_sessions: usize,
    /// A whole call's budget, the wait for the tenant's lock included.
    pub call_timeout: Duration,
    /// Caps on each plugin's own memory and CPU limits; `None` leaves the plugin's.
    pub plugin_memory_bytes: Option<usize>,
    pub plugin_fuel: Option<u64>,
    pub max_concurrent_calls: usize,
    pub requests_per_minute: u32,
    pub session_idle: Duration,
    /// What a page of this tenant (its frames and workers) may hold before it is closed.
    pub renderer_memory_bytes: u64,
    /// Memory this tenant's loaded heap snapshots may hold: its own share of the server's
    /// cap, so no tenant can refuse or evict another's.
    pub heap_snapshot_bytes: usize,
    /// The tenant's output budget in tokens (`max_output_tokens`).
    pub output_tokens: Option<u32>,
}

impl Quotas {
    /// The cap the pipeline puts over every plugin's own limits for this tenant (the tighter
    /// of the two wins, limit by limit); what the tenant does not cap stays the plugin's.
    pub fn plugin_cap(&self) -> Limits {
        Limits {
            wall_clock: self.call_timeout,
            fuel: self.plugin_fuel.unwrap_or(u64::MAX),
            memory_bytes: self.plugin_memory_bytes.unwrap_or(usize::MAX),
            output_bytes: usize::MAX,
            output_lines: usize::MAX,
        }
    }
}

/// One tenant, validated.
#[derive(Debug, Clone)]
pub struct Tenant {
    pub name: String,
    token_hash: Option<[u8; 32]>,
    pub revoked: bool,
    pub sandbox_root: PathBuf,
    pub policy: ToolPolicy,
    pub quotas: Quotas,
    pub browser: BrowserMode,
    /// Flags deciding which tools are enabled, over the server's (`categoryX`,
    /// `experimentalX`, `memoryDebugging`).
    pub flags: serde_json::Map<String, serde_json::Value>,
    /// Where its browser context may connect (enforced by its egress proxy).
    pub egress: EgressPolicy,
    /// Which URLs it may ask the browser to open.
    pub urls: UrlPolicy,
    /// What its entry said (and the heap share it got), as a digest: a reload that changes it
    /// closes the tenant's runtime at once, calls in flight included, so the new settings apply
    /// to every call from the reload on.
    pub revision: u64,
}

/// Every tenant of one reading of the file.
#[derive(Debug, Default)]
pub struct TenantTable {
    tenants: Vec<Arc<Tenant>>,
    metrics_token: Option<[u8; 32]>,
    oauth: Option<Arc<OAuthConfig>>,
    public_url: Option<String>,
}

impl TenantTable {
    /// Reads the file, checking its own syntax and values. Private: outside this module a
    /// table comes from [`checks::TenantChecks::load`], which also checks it against the
    /// server, so no path can skip those checks.
    fn load(path: &Path) -> Result<TenantTable, TenantsError> {
        let text = std::fs::read_to_string(path).map_err(|error| TenantsError::Read {
            path: path.display().to_string(),
            reason: error.to_string(),
        })?;
        TenantTable::parse(&text, path)
    }

    fn parse(text: &str, path: &Path) -> Result<TenantTable, TenantsError> {
        let shown = path.display().to_string();
        let file: TenantsFile = toml::from_str(text).map_err(|error| TenantsError::Parse {
            path: shown.clone(),
            reason: error.to_string(),
        })?;
        let oauth = match file.oauth {
            Some(section) => Some(Arc::new(section.validate().map_err(|reason| {
                TenantsError::OAuth {
                    path: shown.clone(),
                    reason,
                }
            })?)),
            None => None,
        };
        let public_url = match &file.public_url {
            Some(text) => {
                Some(
                    public_url::parse(text).map_err(|reason| TenantsError::PublicUrl {
                        path: shown.clone(),
                        reason,
                    })?,
                )
            }
            None => None,
        };
        let metrics_token = match &file.metrics_token_sha256 {
            Some(text) => Some(parse_hash(text).ok_or_else(|| TenantsError::BadHash {
                path: shown.clone(),
                name: "metrics_token_sha256".into(),
            })?),
            None => None,
        };
        let mut tenants: Vec<Tenant> = Vec::new();
        let mut explicit_heap: Vec<bool> = Vec::new();
        let mut written: Vec<String> = Vec::new();
        for entry in file.tenants {
            explicit_heap.push(entry.heap_snapshot_mib.is_some());
            // Every field of an entry is a plain value, a Vec or a BTreeMap: its Debug text is
            // the same for the same entry, read after read.
            written.push(format!("{entry:?}"));
            let tenant = validate(entry, &shown)?;
            if tenant.token_hash.is_none() && oauth.is_none() {
                return Err(TenantsError::NoCredential {
                    path: shown,
                    name: tenant.name.clone(),
                });
            }
            if let Some(other) = tenants.iter().find(|other| other.name == tenant.name) {
                return Err(TenantsError::DuplicateName {
                    path: shown,
                    name: other.name.clone(),
                });
            }
            if let Some(other) = tenants
                .iter()
                .find(|other| other.token_hash.is_some() && other.token_hash == tenant.token_hash)
            {
                return Err(TenantsError::DuplicateToken {
                    path: shown,
                    first: other.name.clone(),
                    second: tenant.name.clone(),
                });
            }
            tenants.push(tenant);
        }
        share_heap_budget(
            &mut tenants,
            &explicit_heap,
            crate::memory_analysis::budget_bytes(),
        )
        .map_err(|reason| TenantsError::Quota {
            path: shown.clone(),
            reason,
        })?;
        for (tenant, written) in tenants.iter_mut().zip(&written) {
            tenant.revision = revision(written, &tenant.quotas);
        }
        let tenants: Vec<Arc<Tenant>> = tenants.into_iter().map(Arc::new).collect();
        if let Some(metrics) = &metrics_token
            && let Some(tenant) = tenants
                .iter()
                .find(|tenant| tenant.token_hash == Some(*metrics))
        {
            return Err(TenantsError::DuplicateToken {
                path: shown,
                first: tenant.name.clone(),
                second: "metrics_token_sha256".into(),
            });
        }
        Ok(TenantTable {
            tenants,
            metrics_token,
            oauth,
            public_url,
        })
    }

    /// Whether `token` is the `/metrics` token; `None` when the file sets none.
    pub fn authenticate_metrics(&self, token: &str) -> Option<bool> {
        let expected = self.metrics_token.as_ref()?;
        Some(constant_time_eq(&hash_token(token), expected))
    }

    /// The `[oauth]` section, when the file has one.
    pub fn oauth(&self) -> Option<Arc<OAuthConfig>> {
        self.oauth.clone()
    }

    /// `public_url`: the origin people's browsers reach this server at, when the file says.
    pub fn public_url(&self) -> Option<String> {
        self.public_url.clone()
    }

    /// The tenant a bearer token belongs to; `None` for an unknown or revoked token. Every
    /// entry is compared (in constant time) so the answer's timing says nothing about which.
    pub fn authenticate(&self, token: &str) -> Option<Arc<Tenant>> {
        let presented = hash_token(token);
        let mut found = None;
        for tenant in &self.tenants {
            let matches = tenant
                .token_hash
                .is_some_and(|hash| constant_time_eq(&presented, &hash));
            if matches && !tenant.revoked {
                found = Some(tenant.clone());
            }
        }
        found
    }

    /// Whether any tenant has an output budget of its own.
    pub fn any_output_budget(&self) -> bool {
        self.tenants
            .iter()
            .any(|tenant| tenant.quotas.output_tokens.is_some())
    }

    pub fn get(&self, name: &str) -> Option<Arc<Tenant>> {
        self.tenants
            .iter()
            .find(|tenant| tenant.name == name)
            .cloned()
    }

    pub fn len(&self) -> usize {
        self.tenants.len()
    }

    /// Each tenant's name and file root (start-up checks that no code folder overlaps one).
    pub fn sandbox_roots(&self) -> Vec<(String, PathBuf)> {
        self.tenants
            .iter()
            .map(|tenant| (tenant.name.clone(), tenant.sandbox_root.clone()))
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.tenants.is_empty()
    }
}

fn validate(entry: TenantEntry, path: &str) -> Result<Tenant, TenantsError> {
    let name_ok = !entry.name.is_empty()
        && entry.name.len() <= 64
        && entry
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !name_ok {
        return Err(TenantsError::BadName {
            path: path.to_string(),
            name: entry.name,
        });
    }
    let token_hash = match &entry.token_sha256 {
        Some(hash) => Some(parse_hash(hash).ok_or_else(|| TenantsError::BadHash {
            path: path.to_string(),
            name: entry.name.clone(),
        })?),
        None => None,
    };
    std::fs::create_dir_all(&entry.sandbox_root).map_err(|error| TenantsError::Root {
        path: path.to_string(),
        name: entry.name.clone(),
        root: entry.sandbox_root.display().to_string(),
        reason: error.to_string(),
    })?;
    let flags = gating_flags(&entry.flags).map_err(|flag| TenantsError::Flag {
        path: path.to_string(),
        name: entry.name.clone(),
        flag,
    })?;
    let egress = limits::egress_policy(
        &entry.name,
        &entry.egress_allow,
        &entry.egress_deny,
        entry.egress_public,
    )
    .map_err(|reason| TenantsError::Egress {
        path: path.to_string(),
        name: entry.name.clone(),
        reason,
    })?;
    let least = crate::response::budget::MIN_TOKENS;
    if let Some(tokens) = entry.max_output_tokens.filter(|tokens| *tokens < least) {
        return Err(TenantsError::Quota {
            path: path.to_string(),
            reason: format!(
                "tenant {:?}: max_output_tokens = {tokens} leaves no room for an answer and the line that points to its rest; give at least {least}",
                entry.name
            ),
        });
    }
    let set = |names: Vec<String>| names.into_iter().collect::<BTreeSet<_>>();
    let policy = ToolPolicy {
        tools: entry.tools.map(set),
        categories: entry.categories.map(set),
        deny_tools: set(entry.deny_tools),
        within: None,
    };
    let urls = UrlPolicy {
        script: entry
            .script
            .unwrap_or_else(|| policy.allows("evaluate_script", "debugging")),
    };
    Ok(Tenant {
        revision: 0,
        name: entry.name,
        token_hash,
        revoked: entry.revoked,
        sandbox_root: entry.sandbox_root,
        flags,
        policy,
        egress,
        urls,
        quotas: Quotas {
            max_pages: entry.max_pages.unwrap_or(DEFAULT_MAX_PAGES).max(1),
            max_sessions: entry.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS).max(1),
            call_timeout: entry
                .call_timeout_secs
                .map(Duration::from_secs)
                .unwrap_or(DEFAULT_CALL_TIMEOUT),
            plugin_memory_bytes: entry.plugin_memory_mib.map(|mib| mib << 20),
            plugin_fuel: entry.plugin_fuel,
            max_concurrent_calls: entry
                .max_concurrent_calls
                .unwrap_or(limits::DEFAULT_MAX_CONCURRENT_CALLS)
                .max(1),
            requests_per_minute: entry
                .requests_per_minute
                .unwrap_or(limits::DEFAULT_REQUESTS_PER_MINUTE)
                .max(1),
            session_idle: entry
                .session_idle_secs
                .map(Duration::from_secs)
                .unwrap_or(limits::DEFAULT_SESSION_IDLE),
            renderer_memory_bytes: entry
                .renderer_memory_mib
                .unwrap_or(limits::DEFAULT_RENDERER_MEMORY_MIB)
                << 20,
            // Set below: a share needs every tenant's entry.
            heap_snapshot_bytes: entry.heap_snapshot_mib.map_or(0, |mib| mib << 20),
            output_tokens: entry.max_output_tokens,
        },
        browser: entry.browser,
    })
}

/// Gives every tenant without `heap_snapshot_mib` an equal share of what the server's heap
/// snapshot cap leaves after those with it, so the budgets add up to at most the cap: one
/// tenant's snapshots can then never refuse another tenant's load.
/// The digest of a tenant's entry as written and the quotas it got (a heap share depends on
/// the other entries).
fn revision(written: &str, quotas: &Quotas) -> u64 {
    use std::hash::{Hash, Hasher};
    // Keyed the same in every process run: only compared within one.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    written.hash(&mut hasher);
    format!("{quotas:?}").hash(&mut hasher);
    hasher.finish()
}

fn share_heap_budget(tenants: &mut [Tenant], explicit: &[bool], cap: usize) -> Result<(), String> {
    let claimed: usize = tenants
        .iter()
        .zip(explicit)
        .filter(|(_, explicit)| **explicit)
        .map(|(tenant, _)| tenant.quotas.heap_snapshot_bytes)
        .fold(0, usize::saturating_add);
    if claimed > cap {
        return Err(format!(
            "the tenants' heap_snapshot_mib add up to {} MiB, more than the server's heap snapshot budget of {} MiB ({}); lower them or raise the budget",
            claimed >> 20,
            cap >> 20,
            crate::memory_analysis::MEMORY_ENV
        ));
    }
    let unset = explicit.iter().filter(|explicit| !**explicit).count();
    let share = (cap - claimed) / unset.max(1);
    for (tenant, explicit) in tenants.iter_mut().zip(explicit) {
        if !explicit {
            tenant.quotas.heap_snapshot_bytes = share;
        }
    }
    Ok(())
}

/// The stored form of a token: SHA-256 of its UTF-8 bytes (surrounding whitespace removed, so
/// a trailing newline from `echo` does not matter), as 64 lowercase hex digits.
pub fn token_hash_hex(token: &str) -> String {
    hex::encode(hash_token(token))
}

fn hash_token(token: &str) -> [u8; 32] {
    Sha256::digest(token.trim().as_bytes()).into()
}

/// Only the flags that enable or disable tools may differ per tenant; the rest (browser,
/// output formats) are the server's.
fn gating_flags(
    flags: &BTreeMap<String, bool>,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let mut gating = serde_json::Map::new();
    for (name, value) in flags {
        let known = name.starts_with("category")
            || name.starts_with("experimental")
            || name == "memoryDebugging"
            // `false` takes the named-session tools away (the server's value is its folder).
            || name == "sessionStore";
        if !known {
            return Err(name.clone());
        }
        gating.insert(name.clone(), serde_json::Value::Bool(*value));
    }
    Ok(gating)
}

fn parse_hash(text: &str) -> Option<[u8; 32]> {
    let bytes = hex::decode(text.trim()).ok()?;
    bytes.try_into().ok()
}

fn constant_time_eq(left: &[u8; 32], right: &[u8; 32]) -> bool {
    left.iter()
        .zip(right)
        .fold(0u8, |difference, (a, b)| difference | (a ^ b))
        == 0
}

#[cfg(test)]
mod flag_tests {
    use super::*;

    #[test]
    fn only_tool_gating_flags_may_differ_per_tenant() {
        let flags: BTreeMap<String, bool> = [
            ("categoryNetwork".to_string(), false),
            ("memoryDebugging".to_string(), true),
        ]
        .into_iter()
        .collect();
        let gating = gating_flags(&flags).expect("gating flags");
        assert_eq!(
            gating.get("categoryNetwork"),
            Some(&serde_json::Value::Bool(false))
        );
        let browser: BTreeMap<String, bool> =
            [("headless".to_string(), false)].into_iter().collect();
        assert_eq!(gating_flags(&browser), Err("headless".to_string()));
    }
}

#[cfg(test)]
mod tests;
