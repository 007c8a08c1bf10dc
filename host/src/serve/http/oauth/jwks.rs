//! The issuer's signing keys: its JWKS, fetched (after discovering `jwks_uri` from the
//! issuer's metadata when the tenants file does not name it), cached by `kid`, and fetched
//! again when a token names a key the cache does not have (the issuer rotated its keys), at
//! most once per `min_refresh`, so tokens with made-up key ids cannot make us hammer the
//! issuer. A failed fetch keeps the keys already known.

use crate::serve::tenants::oauth::OAuthConfig;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, KeyOperations, PublicKeyUse};
use serde::Deserialize;
use std::time::{Duration, Instant};
use url::Url;

/// How long fetched keys are used before they are fetched again.
const MAX_AGE: Duration = Duration::from_secs(15 * 60);
/// The least time between two fetches.
const MIN_REFRESH: Duration = Duration::from_secs(30);
/// Bounds on the issuer's answers: a JWKS or metadata document is a few KiB.
const MAX_DOCUMENT_BYTES: usize = 512 * 1024;
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyError {
    #[error("the token names signing key {0:?}, which the issuer does not publish")]
    UnknownKey(String),
    #[error("the token names no key id and the issuer publishes more than one key")]
    Ambiguous,
    #[error("the issuer's keys cannot be fetched: {0}")]
    Unavailable(String),
}

/// Signing keys of one issuer, and when they were fetched.
struct Fetched {
    /// The issuer and configured `jwks_uri` these keys are for; a reloaded tenants file that
    /// names another issuer starts afresh.
    source: (String, Option<Url>),
    keys: Vec<Jwk>,
    fetched: Option<Instant>,
    attempted: Option<Instant>,
    /// Why the last fetch failed, for the error of a token no known key verifies.
    failure: Option<String>,
}

pub struct KeyCache {
    client: reqwest::Client,
    /// The keys, behind a lock held only to read or replace them, never across a fetch: a
    /// token whose key is known is verified whatever fetch is under way.
    state: std::sync::Mutex<Option<Fetched>>,
    /// Held while fetching (single flight): concurrent requests that need new keys share one
    /// fetch, and only they wait for it.
    fetching: tokio::sync::Mutex<()>,
    min_refresh: Duration,
    max_age: Duration,
}

/// What the cached keys say about a token's key.
enum Lookup {
    /// Known and fresh: use it.
    Fresh(Jwk),
    /// Known but older than `max_age`: refresh if no one is, else keep serving it.
    Stale(Jwk),
    /// Not known, and a fetch is allowed now.
    Fetch,
    /// Not known, and the last fetch is too recent to try again.
    Missing,
}

impl KeyCache {
    pub fn new() -> KeyCache {
        KeyCache::with_intervals(MIN_REFRESH, MAX_AGE)
    }

    pub fn with_intervals(min_refresh: Duration, max_age: Duration) -> KeyCache {
        // No redirects (a JWKS is fetched from where the operator or the issuer's metadata
        // says), no proxy from the environment, bounded time.
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(FETCH_TIMEOUT)
            .user_agent(concat!("devtools-mcp/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        KeyCache {
            client,
            state: std::sync::Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
            min_refresh,
            max_age,
        }
    }

    /// The issuer's key for a token's `kid` (or its only key, for a token without one).
    pub async fn key(&self, config: &OAuthConfig, kid: Option<&str>) -> Result<Jwk, KeyError> {
        let unknown = || KeyError::UnknownKey(kid.unwrap_or("").into());
        match self.lookup(config, kid)? {
            Lookup::Fresh(key) => return Ok(key),
            Lookup::Missing => return Err(unknown()),
            // A key the refreshed set no longer holds was rotated out: it is refused. A failed
            // refresh keeps the stale key serving, and so does a refresh someone else runs.
            Lookup::Stale(key) => match self.fetching.try_lock() {
                Ok(_flight) => {
                    return match self.refresh(config).await {
                        true => self.pick_known(config, kid)?.ok_or_else(unknown),
                        false => Ok(key),
                    };
                }
                Err(_) => return Ok(key),
            },
            Lookup::Fetch => {}
        }
        let _flight = self.fetching.lock().await;
        // The fetch we waited for may have brought the key, or used this interval's attempt.
        match self.lookup(config, kid)? {
            Lookup::Fresh(key) | Lookup::Stale(key) => Ok(key),
            Lookup::Missing => self.missing(kid),
            Lookup::Fetch => {
                self.refresh(config).await;
                match self.pick_known(config, kid)? {
                    Some(key) => Ok(key),
                    None => self.missing(kid),
                }
            }
        }
    }

    /// No key for `kid`: unknown to an issuer whose keys we have, unavailable otherwise.
    fn missing(&self, kid: Option<&str>) -> Result<Jwk, KeyError> {
        let state = self
            .state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        match state.as_ref() {
            Some(fetched) if !fetched.keys.is_empty() => {
                Err(KeyError::UnknownKey(kid.unwrap_or("").into()))
            }
            Some(Fetched {
                failure: Some(reason),
                ..
            }) => Err(KeyError::Unavailable(reason.clone())),
            _ => Err(KeyError::Unavailable("no keys fetched yet".into())),
        }
    }

    fn lookup(&self, config: &OAuthConfig, kid: Option<&str>) -> Result<Lookup, KeyError> {
        let source = (config.issuer.clone(), config.jwks_uri.clone());
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let fetched = match state.as_mut() {
            Some(fetched) if fetched.source == source => fetched,
            _ => state.insert(Fetched {
                source,
                keys: Vec::new(),
                fetched: None,
                attempted: None,
                failure: None,
            }),
        };
        let fresh = fetched
            .fetched
            .is_some_and(|at| at.elapsed() < self.max_age);
        let may_fetch = fetched
            .attempted
            .is_none_or(|at| at.elapsed() >= self.min_refresh);
        Ok(match (pick(&fetched.keys, kid)?, fresh, may_fetch) {
            (Some(key), true, _) => Lookup::Fresh(key),
            (Some(key), false, true) => Lookup::Stale(key),
            (Some(key), false, false) => Lookup::Fresh(key),
            (None, _, true) => Lookup::Fetch,
            (None, _, false) => Lookup::Missing,
        })
    }

    fn pick_known(&self, config: &OAuthConfig, kid: Option<&str>) -> Result<Option<Jwk>, KeyError> {
        let source = (config.issuer.clone(), config.jwks_uri.clone());
        let state = self
            .state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        match state.as_ref() {
            Some(fetched) if fetched.source == source => pick(&fetched.keys, kid),
            _ => Ok(None),
        }
    }

    /// Fetches the keys (the caller holds the flight) and stores them; a failed fetch keeps
    /// the keys already known. The state lock is taken only around the reads and writes.
    /// Whether the fetch succeeded.
    async fn refresh(&self, config: &OAuthConfig) -> bool {
        let source = (config.issuer.clone(), config.jwks_uri.clone());
        let set = |change: &dyn Fn(&mut Fetched)| {
            let mut state = self
                .state
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            if let Some(fetched) = state.as_mut().filter(|fetched| fetched.source == source) {
                change(fetched);
            }
        };
        set(&|fetched| fetched.attempted = Some(Instant::now()));
        match self.fetch(config).await {
            Ok(keys) => {
                tracing::info!(issuer = %config.issuer, keys = keys.len(), "fetched the issuer's signing keys");
                set(&|fetched| {
                    fetched.keys = keys.clone();
                    fetched.fetched = Some(Instant::now());
                    fetched.failure = None;
                });
                true
            }
            Err(reason) => {
                tracing::warn!(issuer = %config.issuer, %reason, "cannot fetch the issuer's signing keys");
                set(&|fetched| fetched.failure = Some(reason.clone()));
                false
            }
        }
    }

    async fn fetch(&self, config: &OAuthConfig) -> Result<Vec<Jwk>, String> {
        let jwks_uri = match &config.jwks_uri {
            Some(uri) => uri.clone(),
            None => self.discover(config).await?,
        };
        let document: JwksDocument = self.get_json(&jwks_uri).await?;
        // Keys of kinds we cannot use (encryption keys, unknown types) are skipped, not fatal.
        let keys: Vec<Jwk> = document
            .keys
            .into_iter()
            .filter_map(|value| serde_json::from_value::<Jwk>(value).ok())
            .filter(usable_for_signatures)
            .collect();
        if keys.is_empty() {
            return Err(format!("{jwks_uri} holds no usable signing key"));
        }
        Ok(keys)
    }

    /// `jwks_uri` from the issuer's metadata: OpenID Connect discovery, then RFC 8414. The
    /// metadata must name the configured issuer exactly (RFC 8414 §3.3).
    async fn discover(&self, config: &OAuthConfig) -> Result<Url, String> {
        let mut failures = Vec::new();
        for url in metadata_urls(&config.issuer)? {
            match self.get_json::<IssuerMetadata>(&url).await {
                Ok(metadata) if metadata.issuer != config.issuer => {
                    return Err(format!(
                        "{url} names issuer {:?}, not {:?}",
                        metadata.issuer, config.issuer
                    ));
                }
                Ok(metadata) => {
                    let jwks_uri = Url::parse(&metadata.jwks_uri)
                        .map_err(|error| format!("{url}: jwks_uri: {error}"))?;
                    let issuer = Url::parse(&config.issuer).map_err(|error| error.to_string())?;
                    // Plain http only where the issuer itself is plain http (a loopback one).
                    if jwks_uri.scheme() != "https" && jwks_uri.scheme() != issuer.scheme() {
                        return Err(format!("{url}: jwks_uri {jwks_uri} is not https"));
                    }
                    return Ok(jwks_uri);
                }
                Err(reason) => failures.push(reason),
            }
        }
        Err(failures.join("; "))
    }

    async fn get_json<T: for<'de> Deserialize<'de>>(&self, url: &Url) -> Result<T, String> {
        let mut response = self
            .client
            .get(url.clone())
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|error| format!("{url}: {error}"))?;
        if !response.status().is_success() {
            return Err(format!("{url} answered {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| format!("{url}: {error}"))?
        {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!(
                    "{url} answered more than {MAX_DOCUMENT_BYTES} bytes"
                ));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|error| format!("{url}: {error}"))
    }
}

impl Default for KeyCache {
    fn default() -> Self {
        KeyCache::new()
    }
}

#[derive(Deserialize)]
struct JwksDocument {
    keys: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct IssuerMetadata {
    issuer: String,
    jwks_uri: String,
}

/// Where an issuer's metadata lives: `{issuer}/.well-known/openid-configuration` (OpenID
/// Connect Discovery) and `{origin}/.well-known/oauth-authorization-server{path}` (RFC 8414).
fn metadata_urls(issuer: &str) -> Result<Vec<Url>, String> {
    let url = Url::parse(issuer).map_err(|error| format!("issuer {issuer:?}: {error}"))?;
    let path = url.path().trim_end_matches('/');
    let origin = url.origin().ascii_serialization();
    [
        format!("{origin}{path}/.well-known/openid-configuration"),
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
    ]
    .iter()
    .map(|text| Url::parse(text).map_err(|error| format!("{text}: {error}")))
    .collect()
}

/// A public key meant for verifying signatures: not a shared secret, not an encryption key.
fn usable_for_signatures(key: &Jwk) -> bool {
    let asymmetric = !matches!(key.algorithm, AlgorithmParameters::OctetKey(_));
    let for_signing = key
        .common
        .public_key_use
        .as_ref()
        .is_none_or(|usage| *usage == PublicKeyUse::Signature);
    let may_verify = key
        .common
        .key_operations
        .as_ref()
        .is_none_or(|operations| operations.contains(&KeyOperations::Verify));
    asymmetric && for_signing && may_verify
}

/// The key a token names: by `kid`, or the only key when it names none. `Ok(None)` when the
/// key is not (yet) known.
fn pick(keys: &[Jwk], kid: Option<&str>) -> Result<Option<Jwk>, KeyError> {
    match kid {
        Some(kid) => Ok(keys
            .iter()
            .find(|key| key.common.key_id.as_deref() == Some(kid))
            .cloned()),
        None => match keys {
            [] => Ok(None),
            [only] => Ok(Some(only.clone())),
            _ => Err(KeyError::Ambiguous),
        },
    }
}

/// For tests: how many keys of each kid the cache holds.
#[cfg(test)]
impl KeyCache {
    pub async fn known_kids(&self) -> std::collections::HashMap<String, usize> {
        let state = self
            .state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let mut kids = std::collections::HashMap::new();
        for key in state.iter().flat_map(|fetched| fetched.keys.iter()) {
            *kids
                .entry(key.common.key_id.clone().unwrap_or_default())
                .or_insert(0) += 1;
        }
        kids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_follow_oidc_discovery_and_rfc_8414() {
        let urls = metadata_urls("https://idp.example.com/tenants/a").expect("urls");
        assert_eq!(
            urls[0].as_str(),
            "https://idp.example.com/tenants/a/.well-known/openid-configuration"
        );
        assert_eq!(
            urls[1].as_str(),
            "https://idp.example.com/.well-known/oauth-authorization-server/tenants/a"
        );
        let root = metadata_urls("https://idp.example.com").expect("urls");
        assert_eq!(
            root[1].as_str(),
            "https://idp.example.com/.well-known/oauth-authorization-server"
        );
    }

    #[test]
    fn shared_secrets_and_encryption_keys_are_never_used() {
        let parse = |value: serde_json::Value| serde_json::from_value::<Jwk>(value).expect("jwk");
        let secret = parse(serde_json::json!({ "kty": "oct", "k": "c2VjcmV0", "kid": "s" }));
        let encryption = parse(serde_json::json!({
            "kty": "EC", "crv": "P-256", "use": "enc", "kid": "e",
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
        }));
        let signing = parse(serde_json::json!({
            "kty": "EC", "crv": "P-256", "use": "sig", "kid": "k",
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
        }));
        assert!(!usable_for_signatures(&secret));
        assert!(!usable_for_signatures(&encryption));
        assert!(usable_for_signatures(&signing));
        let keys = vec![signing.clone(), signing];
        assert_eq!(pick(&keys, None), Err(KeyError::Ambiguous));
        assert!(pick(&keys, Some("other")).expect("no error").is_none());
    }
}
