//! The capability policy: a TOML file saying, per plugin (by tool name, optionally pinned by
//! content hash), which host capabilities it may use, where it may navigate, which categories it
//! may claim and what it may consume per call. Built-in tools get everything; plugins from
//! `--plugin-dir` without an entry get the `[default]` rule (read-only page access).
//!
//! ```toml
//! [default]
//! capabilities = ["pages.read"]
//!
//! [plugins.page_title]
//! sha256 = "9f86d081..."          # refuse any other content
//! capabilities = ["pages.read", "script"]
//! navigate = ["http://127.0.0.1:*/*"]
//! categories = ["debugging"]
//! timeout_secs = 30
//! fuel = 5_000_000_000
//! memory_mib = 128
//!
//! [signing]
//! trusted_keys = ["base64 ed25519 public key"]
//! require_signed = false
//! ```

use super::capability::{Capability, Grants};
use super::limits::{Limits, MAX_MEMORY_BYTES};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("Cannot read the policy file {file}: {source}")]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("The policy file {file} is invalid: {reason}")]
    Invalid { file: PathBuf, reason: String },
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    default: Option<RuleFile>,
    #[serde(default)]
    plugins: BTreeMap<String, RuleFile>,
    signing: Option<SigningFile>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    sha256: Option<String>,
    capabilities: Option<Vec<String>>,
    navigate: Option<Vec<String>>,
    categories: Option<Vec<String>>,
    timeout_secs: Option<f64>,
    fuel: Option<u64>,
    memory_mib: Option<u64>,
    output_mib: Option<u64>,
    output_lines: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SigningFile {
    #[serde(default)]
    trusted_keys: Vec<String>,
    #[serde(default)]
    require_signed: bool,
}

/// One plugin's rule, checked.
#[derive(Debug, Clone, Default)]
pub struct Rule {
    /// Lowercase hex sha256 the component must have.
    pub sha256: Option<String>,
    pub capabilities: BTreeSet<Capability>,
    pub navigate: Option<Vec<String>>,
    /// Category names (as in `--categoryX`) it may claim; `None`: any.
    pub categories: Option<Vec<String>>,
    limits: LimitOverrides,
}

#[derive(Debug, Clone, Default)]
struct LimitOverrides {
    wall_clock: Option<Duration>,
    fuel: Option<u64>,
    memory_bytes: Option<usize>,
    output_bytes: Option<usize>,
    output_lines: Option<usize>,
}

/// The whole policy.
#[derive(Debug, Clone)]
pub struct Policy {
    default: Rule,
    plugins: BTreeMap<String, Rule>,
    /// Base64 ed25519 public keys whose signatures are accepted.
    pub trusted_keys: Vec<String>,
    pub require_signed: bool,
    /// The server-wide limits (flags) that rules override.
    pub base_limits: Limits,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            default: Rule {
                capabilities: [Capability::PagesRead].into_iter().collect(),
                ..Rule::default()
            },
            plugins: BTreeMap::new(),
            trusted_keys: Vec::new(),
            require_signed: false,
            base_limits: Limits::default(),
        }
    }
}

/// Where a component was loaded from: the built-in folder, or a community folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Builtin,
    Community,
}

/// What a loaded plugin is allowed, resolved once at load time.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub grants: Grants,
    pub limits: Limits,
    pub categories: Option<Vec<String>>,
}

impl Policy {
    /// No file: built-in tools get everything, others read-only page access.
    pub fn with_base_limits(base_limits: Limits) -> Policy {
        Policy {
            base_limits,
            ..Policy::default()
        }
    }

    pub fn load(file: &Path, base_limits: Limits) -> Result<Policy, PolicyError> {
        let text = std::fs::read_to_string(file).map_err(|source| PolicyError::Read {
            file: file.to_path_buf(),
            source,
        })?;
        Policy::parse(&text, base_limits).map_err(|reason| PolicyError::Invalid {
            file: file.to_path_buf(),
            reason,
        })
    }

    pub fn parse(text: &str, base_limits: Limits) -> Result<Policy, String> {
        let parsed: PolicyFile = toml::from_str(text).map_err(|error| error.to_string())?;
        let mut policy = Policy {
            base_limits,
            ..Policy::default()
        };
        if let Some(default) = parsed.default {
            if default.sha256.is_some() {
                return Err("[default] cannot pin a sha256; pin plugins by name".into());
            }
            policy.default = rule(&default, "[default]")?;
        }
        for (name, entry) in &parsed.plugins {
            policy
                .plugins
                .insert(name.clone(), rule(entry, &format!("[plugins.{name}]"))?);
        }
        if let Some(signing) = parsed.signing {
            for key in &signing.trusted_keys {
                crate::policy::signature::parse_public_key(key)
                    .map_err(|error| format!("[signing] trusted_keys: {error}"))?;
            }
            policy.trusted_keys = signing.trusted_keys;
            policy.require_signed = signing.require_signed;
        }
        Ok(policy)
    }

    /// The `[default]` rule (of plugins without a section of their own).
    pub fn default_rule(&self) -> &Rule {
        &self.default
    }

    /// Each `[plugins.NAME]` section: the tool it names and its rule.
    pub fn rules(&self) -> impl Iterator<Item = (&str, &Rule)> {
        self.plugins
            .iter()
            .map(|(name, rule)| (name.as_str(), rule))
    }

    /// Grants and limits for a loaded tool. A pinned hash that does not match is an error.
    pub fn resolve(&self, tool: &str, origin: Origin, sha256: &str) -> Result<Resolved, String> {
        let explicit = self.plugins.get(tool);
        if origin == Origin::Builtin && explicit.is_none() {
            return Ok(Resolved {
                grants: Grants::all(tool),
                limits: self.base_limits,
                categories: None,
            });
        }
        let rule = explicit.unwrap_or(&self.default);
        if let Some(pinned) = &rule.sha256
            && pinned != sha256
        {
            return Err(format!(
                "its sha256 is {sha256}, but the policy pins [plugins.{tool}] to {pinned}; the file was changed or replaced"
            ));
        }
        let grants = Grants::new(tool, rule.capabilities.clone(), rule.navigate.as_deref())
            .map_err(|error| format!("its navigate pattern {error} is invalid"))?;
        Ok(Resolved {
            grants,
            limits: rule.limits.apply(self.base_limits),
            categories: rule.categories.clone(),
        })
    }
}

fn rule(entry: &RuleFile, section: &str) -> Result<Rule, String> {
    let mut capabilities = BTreeSet::new();
    for name in entry.capabilities.iter().flatten() {
        let capability = Capability::from_name(name).ok_or_else(|| {
            format!(
                "{section}: unknown capability \"{name}\"; the capabilities are {}",
                Capability::all_names()
            )
        })?;
        capabilities.insert(capability);
    }
    if entry.capabilities.is_none() {
        capabilities.insert(Capability::PagesRead);
    }
    if let Some(patterns) = &entry.navigate {
        for pattern in patterns {
            super::plugin_urls::UrlRule::parse(pattern)
                .map_err(|error| format!("{section}: bad navigate pattern {error}"))?;
        }
    }
    let sha256 = match &entry.sha256 {
        Some(hash) => {
            let hash = hash.trim().to_ascii_lowercase();
            if hash.len() != 64 || !hash.bytes().all(|byte| byte.is_ascii_hexdigit()) {
                return Err(format!(
                    "{section}: sha256 must be 64 hexadecimal digits (see `devtools-mcp plugin check`)"
                ));
            }
            Some(hash)
        }
        None => None,
    };
    let wall_clock = match entry.timeout_secs {
        Some(seconds) => Some(
            super::limits::wall_clock_from_secs(seconds)
                .map_err(|error| format!("{section}: timeout_secs {error}"))?,
        ),
        None => None,
    };
    if entry.fuel == Some(0) {
        return Err(format!("{section}: fuel must be at least 1"));
    }
    if let Some(lines) = entry.output_lines
        && !(1..=super::limits::MAX_OUTPUT_LINES).contains(&lines)
    {
        return Err(format!(
            "{section}: output_lines must be between 1 and {}",
            super::limits::MAX_OUTPUT_LINES
        ));
    }
    let mib = |value: Option<u64>, key: &str| -> Result<Option<usize>, String> {
        match value {
            Some(0) => Err(format!("{section}: {key} must be at least 1")),
            Some(mib) => usize::try_from(mib)
                .ok()
                .and_then(|mib| mib.checked_mul(1 << 20))
                .filter(|bytes| *bytes <= MAX_MEMORY_BYTES)
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "{section}: {key} is too large (it is at most {})",
                        MAX_MEMORY_BYTES >> 20
                    )
                }),
            None => Ok(None),
        }
    };
    Ok(Rule {
        sha256,
        capabilities,
        navigate: entry.navigate.clone(),
        categories: entry.categories.clone(),
        limits: LimitOverrides {
            wall_clock,
            fuel: entry.fuel,
            memory_bytes: mib(entry.memory_mib, "memory_mib")?,
            output_bytes: mib(entry.output_mib, "output_mib")?,
            output_lines: entry.output_lines,
        },
    })
}

impl LimitOverrides {
    fn apply(&self, base: Limits) -> Limits {
        Limits {
            wall_clock: self.wall_clock.unwrap_or(base.wall_clock),
            fuel: self.fuel.unwrap_or(base.fuel),
            memory_bytes: self.memory_bytes.unwrap_or(base.memory_bytes),
            output_bytes: self.output_bytes.unwrap_or(base.output_bytes),
            output_lines: self.output_lines.unwrap_or(base.output_lines),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    fn parse(text: &str) -> Policy {
        match Policy::parse(text, Limits::default()) {
            Ok(policy) => policy,
            Err(error) => panic!("{error}"),
        }
    }

    #[test]
    fn unlisted_community_plugins_get_read_only_page_access() {
        let policy = Policy::default();
        let resolved = policy.resolve("x", Origin::Community, HASH).expect("rule");
        assert!(resolved.grants.grants(Capability::PagesRead));
        assert!(!resolved.grants.grants(Capability::Script));
        let builtin = policy.resolve("x", Origin::Builtin, HASH).expect("rule");
        assert!(builtin.grants.grants(Capability::Script));
    }

    #[test]
    fn a_rule_grants_capabilities_limits_and_pins_content() {
        let policy = parse(&format!(
            "[plugins.t]\nsha256 = \"{HASH}\"\ncapabilities = [\"script\"]\ntimeout_secs = 2.5\nmemory_mib = 8\n"
        ));
        let resolved = policy.resolve("t", Origin::Community, HASH).expect("rule");
        assert!(resolved.grants.grants(Capability::Script));
        assert!(!resolved.grants.grants(Capability::PagesRead));
        assert_eq!(resolved.limits.wall_clock, Duration::from_millis(2500));
        assert_eq!(resolved.limits.memory_bytes, 8 << 20);
        let other = "0".repeat(64);
        let error = policy
            .resolve("t", Origin::Community, &other)
            .expect_err("pinned");
        assert!(error.contains("pins [plugins.t]"), "{error}");
    }

    #[test]
    fn mistakes_are_named() {
        let unknown = Policy::parse(
            "[plugins.t]\ncapabilities = [\"network\"]\n",
            Limits::default(),
        );
        assert!(
            unknown
                .as_ref()
                .is_err_and(|error| error.contains("unknown capability \"network\"")),
            "{unknown:?}"
        );
        let typo = Policy::parse("[plugins.t]\ncapabilites = []\n", Limits::default());
        assert!(
            typo.as_ref()
                .is_err_and(|error| error.contains("capabilites")),
            "{typo:?}"
        );
        let short = Policy::parse("[plugins.t]\nsha256 = \"abc\"\n", Limits::default());
        assert!(short.is_err());
        // Out-of-range numbers are errors, never a panic or a budget that breaks every call.
        for bad in [
            "timeout_secs = 1e300",
            "timeout_secs = 1e19",
            "timeout_secs = 0",
            "timeout_secs = nan",
            "fuel = 0",
            "output_lines = 0",
            "output_mib = 99999999999999",
        ] {
            let parsed = Policy::parse(&format!("[plugins.t]\n{bad}\n"), Limits::default());
            assert!(parsed.is_err(), "{bad}");
        }
    }
}
