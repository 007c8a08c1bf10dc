//! The plugin catalog: an index of plugins (a JSON file an operator or a community hosts, over
//! HTTPS or as a file) listing each one's description, the capabilities it asks for, and its
//! versions as OCI references pinned by digest; signed with a plugin key (`<index>.sig`),
//! checked against the policy's trusted keys like a component. `plugin search` and `plugin
//! info` read it, `plugin install NAME[@VERSION]` resolves through it (the digest the index
//! names is the one installed, whatever the tag says now), and `plugin index add` writes an
//! entry for a published component.

pub mod add;

use super::oci::{self, PluginRef};
use crate::policy::plugins::Policy;
use crate::policy::signature::{self, Verdict};
use crate::printable::escape;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// The index format this server reads and writes.
pub const SCHEMA: &str = "devtools-mcp-plugin-index/1";
/// An index of some thousands of plugins fits; a bigger answer is refused before reading it.
const MAX_INDEX_BYTES: u64 = 4 << 20;
/// A signature file is a few lines.
const MAX_SIGNATURE_BYTES: u64 = 4 << 10;
/// Fetching the index (and its signature) takes at most this long.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Index {
    pub schema: String,
    pub plugins: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub name: String,
    pub description: String,
    /// The capabilities its code can call for (what `plugin check` lists).
    pub capabilities: Vec<String>,
    pub versions: Vec<Version>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Version {
    pub version: String,
    /// `oci://HOST/NAME:TAG`.
    pub reference: String,
    /// The manifest digest installed for this version (`sha256:...`).
    pub digest: String,
}

/// Where the index is, and how much to trust it.
pub struct Source<'a> {
    /// An `https://` URL (plain `http://` only on this machine) or a file.
    pub index: &'a str,
    pub policy: Option<&'a Path>,
    pub allow_untrusted: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("Cannot read the plugin index {index}: {reason}")]
    Unreadable { index: String, reason: String },
    #[error(
        "The plugin index {index} is refused: {reason}. Nothing was installed; check where the index comes from, or ask its publisher for a correctly signed one."
    )]
    Refused { index: String, reason: String },
    #[error("The plugin index {index} is malformed: {reason}.")]
    Malformed { index: String, reason: String },
    #[error("No plugin named {name:?} in the index {index}. {hint}")]
    UnknownPlugin {
        name: String,
        index: String,
        hint: String,
    },
    #[error("The index has no version {version} of {name}; it lists {listed}.")]
    UnknownVersion {
        name: String,
        version: String,
        listed: String,
    },
}

/// Reads, verifies and checks the index.
pub async fn load(source: &Source<'_>) -> Result<Index, CatalogError> {
    let index = source.index.to_string();
    let unreadable = |reason: String| CatalogError::Unreadable {
        index: index.clone(),
        reason,
    };
    let (bytes, signature) = if source.index.starts_with("https://")
        || source.index.starts_with("http://")
    {
        let url = url::Url::parse(source.index).map_err(|error| unreadable(error.to_string()))?;
        let signature_url = url::Url::parse(&format!("{}.sig", source.index))
            .map_err(|error| unreadable(error.to_string()))?;
        let bytes = fetch(&url, MAX_INDEX_BYTES).await.map_err(unreadable)?;
        let signature = match fetch(&signature_url, MAX_SIGNATURE_BYTES).await {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(_) => None,
        };
        (bytes, signature)
    } else {
        let path = Path::new(source.index);
        let bytes = read_bounded(path, MAX_INDEX_BYTES).map_err(unreadable)?;
        let signature = read_bounded(&signature::signature_path(path), MAX_SIGNATURE_BYTES)
            .ok()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        (bytes, signature)
    };
    let policy = match source.policy {
        Some(path) => {
            Policy::load(path, Default::default()).map_err(|error| CatalogError::Refused {
                index: index.clone(),
                reason: format!("its signature cannot be checked: {error}"),
            })?
        }
        None => Policy::default(),
    };
    let refused = |reason: String| CatalogError::Refused {
        index: index.clone(),
        reason,
    };
    let verdict = match &signature {
        None => Verdict::Unsigned,
        Some(text) => {
            signature::verify_text(text, "the index's signature", &bytes, &policy.trusted_keys)
        }
    };
    let trust_line = "[signing] trusted_keys in the policy (--policy)";
    match verdict {
        Verdict::Trusted { .. } => {}
        Verdict::Invalid { reason } => {
            return Err(refused(reason.replace("the component", "the index")));
        }
        Verdict::Unsigned if policy.require_signed || !source.allow_untrusted => {
            return Err(refused(format!(
                "it is not signed (no {}.sig); sign it with `devtools-mcp plugin sign`, or pass --allow-untrusted to read it anyway",
                source.index
            )));
        }
        Verdict::UnknownKey { key } if policy.require_signed || !source.allow_untrusted => {
            return Err(refused(format!(
                "it is signed by {key}, a key the policy does not trust (add it to {trust_line} if you trust its publisher, or pass --allow-untrusted)"
            )));
        }
        Verdict::Unsigned | Verdict::UnknownKey { .. } => {}
    }
    parse(&bytes).map_err(|reason| CatalogError::Malformed { index, reason })
}

/// The index in `bytes`, every field checked: the format, names, versions, references and
/// digests, so what it says can be shown and installed as it is.
pub fn parse(bytes: &[u8]) -> Result<Index, String> {
    let index: Index = serde_json::from_slice(bytes).map_err(|error| error.to_string())?;
    if index.schema != SCHEMA {
        return Err(format!(
            "its schema is {:?}; this server reads {SCHEMA:?}",
            index.schema
        ));
    }
    for entry in &index.plugins {
        let named = |reason: String| format!("plugin {:?}: {reason}", entry.name);
        if entry.name.is_empty()
            || !entry
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(named("a name is snake_case letters, digits and _".into()));
        }
        if entry.versions.is_empty() {
            return Err(named("it lists no version".into()));
        }
        for version in &entry.versions {
            semver::Version::parse(&version.version)
                .map_err(|error| named(format!("version {:?}: {error}", version.version)))?;
            PluginRef::parse(&version.reference).map_err(|error| named(error.to_string()))?;
            let hex = version.digest.strip_prefix("sha256:").unwrap_or_default();
            if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(named(format!(
                    "digest {:?} is not sha256:<64 hex digits>",
                    version.digest
                )));
            }
        }
    }
    Ok(index)
}

/// Entries whose name, description or capabilities hold every word (case-insensitive).
pub fn search<'a>(index: &'a Index, words: &[String]) -> Vec<&'a Entry> {
    let words: Vec<String> = words.iter().map(|word| word.to_lowercase()).collect();
    index
        .plugins
        .iter()
        .filter(|entry| {
            let text = format!(
                "{} {} {}",
                entry.name,
                entry.description,
                entry.capabilities.join(" ")
            )
            .to_lowercase();
            words.iter().all(|word| text.contains(word.as_str()))
        })
        .collect()
}

/// One line per entry: name, newest version, first line of the description.
pub fn summary(entry: &Entry) -> String {
    let first = entry.description.lines().next().unwrap_or_default();
    format!(
        "{} {}: {}",
        entry.name,
        newest(entry)
            .map(|version| version.version.as_str())
            .unwrap_or("-"),
        escape(first)
    )
}

/// The whole entry, for `plugin info`.
pub fn details(entry: &Entry) -> String {
    let mut lines = vec![
        format!("Plugin {}", escape(&entry.name)),
        format!("  description: {}", escape(&entry.description)),
        format!(
            "  capabilities: {}",
            match entry.capabilities.is_empty() {
                true => "none".to_string(),
                false => escape(&entry.capabilities.join(", ")),
            }
        ),
        "  versions:".to_string(),
    ];
    for version in &entry.versions {
        lines.push(format!(
            "    {} {} ({})",
            escape(&version.version),
            escape(&version.reference),
            version.digest
        ));
    }
    lines.push(format!(
        "Install: devtools-mcp plugin install {}@{} --index INDEX --plugin-dir DIR --policy POLICY",
        entry.name,
        newest(entry)
            .map(|version| version.version.as_str())
            .unwrap_or_default()
    ));
    lines.join("\n")
}

/// The entry named `name`, or an error naming the closest ones.
pub fn find<'a>(index: &'a Index, name: &str, source: &str) -> Result<&'a Entry, CatalogError> {
    if let Some(entry) = index.plugins.iter().find(|entry| entry.name == name) {
        return Ok(entry);
    }
    let mut names: Vec<(f64, &str)> = index
        .plugins
        .iter()
        .map(|entry| (strsim::jaro_winkler(name, &entry.name), entry.name.as_str()))
        .collect();
    names.sort_by(|a, b| b.0.total_cmp(&a.0));
    let hint = match names.first() {
        Some((score, closest)) if *score > 0.8 => format!("Did you mean {closest}?"),
        _ if names.is_empty() => "The index lists no plugin.".to_string(),
        _ => format!(
            "It lists {}; `devtools-mcp plugin search WORDS --index ...` finds them by words.",
            names
                .iter()
                .take(10)
                .map(|(_, name)| *name)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Err(CatalogError::UnknownPlugin {
        name: name.to_string(),
        index: source.to_string(),
        hint,
    })
}

/// `NAME[@VERSION]` as the reference to install: the index's reference pinned to its digest.
pub fn resolve(index: &Index, wanted: &str, source: &str) -> Result<String, CatalogError> {
    let (name, version) = match wanted.split_once('@') {
        Some((name, version)) => (name, Some(version)),
        None => (wanted, None),
    };
    let entry = find(index, name, source)?;
    let chosen = match version {
        None => newest(entry),
        Some(version) => entry
            .versions
            .iter()
            .find(|listed| listed.version == version),
    }
    .ok_or_else(|| CatalogError::UnknownVersion {
        name: name.to_string(),
        version: version.unwrap_or_default().to_string(),
        listed: entry
            .versions
            .iter()
            .map(|listed| listed.version.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    })?;
    let plugin = PluginRef::parse(&chosen.reference).map_err(|error| CatalogError::Malformed {
        index: source.to_string(),
        reason: error.to_string(),
    })?;
    Ok(plugin.pinned(&chosen.digest).display())
}

/// The highest version by semver.
fn newest(entry: &Entry) -> Option<&Version> {
    entry
        .versions
        .iter()
        .max_by_key(|version| semver::Version::parse(&version.version).ok())
}

fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|error| error.to_string())?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| error.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!("it is larger than {} MiB", limit >> 20));
    }
    Ok(bytes)
}

/// GETs `url` (HTTPS, or HTTP on this machine; no redirect followed), refusing a body over
/// `limit` bytes.
async fn fetch(url: &url::Url, limit: u64) -> Result<Vec<u8>, String> {
    if !oci::may_connect(url) {
        return Err(format!(
            "{url} is neither HTTPS nor on this machine; serve the index over HTTPS"
        ));
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(FETCH_TIMEOUT)
        .build()
        .map_err(|error| error.to_string())?;
    let mut response = client
        .get(url.clone())
        .send()
        .await
        .map_err(|error| error.to_string())?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    if response
        .content_length()
        .is_some_and(|length| length > limit)
    {
        return Err(format!("{url} is larger than {} MiB", limit >> 20));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|error| error.to_string())? {
        bytes.extend_from_slice(&chunk);
        if bytes.len() as u64 > limit {
            return Err(format!("{url} is larger than {} MiB", limit >> 20));
        }
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_text(digest: &str) -> String {
        serde_json::json!({
            "schema": SCHEMA,
            "plugins": [{
                "name": "page_title",
                "description": "Reads the page's title.\nMore.",
                "capabilities": ["pages.read"],
                "versions": [
                    {"version": "1.0.0", "reference": "oci://127.0.0.1:5000/page_title:1.0.0", "digest": digest},
                    {"version": "1.10.0", "reference": "oci://127.0.0.1:5000/page_title:1.10.0", "digest": digest},
                    {"version": "1.9.0", "reference": "oci://127.0.0.1:5000/page_title:1.9.0", "digest": digest}
                ]
            }]
        })
        .to_string()
    }

    const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn names_resolve_to_the_pinned_digest_and_the_newest_version_by_semver() {
        let index = parse(index_text(DIGEST).as_bytes()).expect("index");
        let newest = resolve(&index, "page_title", "i").expect("newest");
        assert_eq!(newest, format!("oci://127.0.0.1:5000/page_title@{DIGEST}"));
        assert!(
            summary(&index.plugins[0]).starts_with("page_title 1.10.0: Reads the page's title.")
        );
        assert!(
            resolve(&index, "page_title@2.0.0", "i")
                .expect_err("refused")
                .to_string()
                .contains("1.0.0, 1.10.0, 1.9.0")
        );
        assert!(
            resolve(&index, "page_titel", "i")
                .expect_err("refused")
                .to_string()
                .contains("Did you mean page_title?")
        );
        assert_eq!(
            search(&index, &["TITLE".into(), "pages.read".into()]).len(),
            1
        );
        assert!(search(&index, &["screenshot".into()]).is_empty());
    }

    #[test]
    fn a_malformed_index_is_refused_with_what_is_wrong() {
        assert!(
            parse(index_text("sha256:12").as_bytes())
                .expect_err("refused")
                .contains("64 hex")
        );
        let other = index_text(DIGEST).replace(SCHEMA, "other/2");
        assert!(
            parse(other.as_bytes())
                .expect_err("refused")
                .contains("this server reads")
        );
        let bad_ref = index_text(DIGEST).replace("oci://127.0.0.1:5000/", "https://x/");
        assert!(
            parse(bad_ref.as_bytes())
                .expect_err("refused")
                .contains("not a plugin reference")
        );
        let extra = index_text(DIGEST).replace("\"schema\"", "\"extra\":1,\"schema\"");
        assert!(
            parse(extra.as_bytes())
                .expect_err("refused")
                .contains("unknown field")
        );
    }
}
