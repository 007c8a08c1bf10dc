//! `TokenVerifier`: checks a JWT access token (RFC 9068) the way OAuth 2.1 §5.2 and the MCP
//! authorization spec want, with `jsonwebtoken` doing the JOSE work: the `typ` is an access
//! token's, the algorithm one of a fixed list and the one of the key, the signature the
//! issuer's (its JWKS), `iss` the issuer, `aud` this server's resource URI (RFC 8707), and
//! `exp`/`nbf` hold with a small leeway. Keys named in the token (`jku`, `jwk`, `x5u`) are never
//! fetched or trusted.

use super::jwks::{KeyCache, KeyError};
use crate::serve::tenants::oauth::OAuthConfig;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{DecodingKey, Validation, decode, decode_header};
use serde_json::{Map, Value};

/// The longest token considered; a JWT access token is a KiB or two.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// What a verified token says about its holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    /// The value of the configured tenant claim.
    pub tenant: String,
    /// `scope` (space-separated, RFC 9068) or `scp` (a list, some identity providers).
    pub scopes: Vec<String>,
    pub subject: Option<String>,
}

/// Why a token was refused; the text goes to the client as `error_description`, so it names
/// the failed check and never echoes the token.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VerifyError {
    #[error("the token is not a well-formed JWT")]
    Malformed,
    #[error("the token's type {0:?} is not an access token's (at+jwt)")]
    Type(String),
    #[error("the token's algorithm {0} is not accepted")]
    Algorithm(String),
    #[error("the token uses a critical header extension this server does not support")]
    Critical,
    #[error("{0}")]
    Key(#[from] KeyError),
    #[error("the token's signature does not verify with the issuer's key")]
    Signature,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet (nbf)")]
    NotYetValid,
    #[error("the token was issued by another issuer")]
    Issuer,
    #[error("the token's audience is not this server's resource URI")]
    Audience,
    #[error("the token lacks the {0} claim")]
    MissingClaim(String),
    #[error("the token's {0} claim is malformed")]
    ClaimFormat(String),
}

impl VerifyError {
    /// Whether the issuer could not be reached (the server's problem, not the token's).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, VerifyError::Key(KeyError::Unavailable(_)))
    }
}

/// Verifies access tokens against the issuer of the current `[oauth]` section.
#[derive(Default)]
pub struct TokenVerifier {
    keys: KeyCache,
}

impl TokenVerifier {
    pub fn new(keys: KeyCache) -> TokenVerifier {
        TokenVerifier { keys }
    }

    pub async fn verify(
        &self,
        config: &OAuthConfig,
        token: &str,
    ) -> Result<VerifiedToken, VerifyError> {
        if token.len() > MAX_TOKEN_BYTES || token.bytes().filter(|b| *b == b'.').count() != 2 {
            return Err(VerifyError::Malformed);
        }
        let header = decode_header(token).map_err(|_| VerifyError::Malformed)?;
        if header.crit.is_some() {
            return Err(VerifyError::Critical);
        }
        let typ = header.typ.clone().unwrap_or_default();
        if !config
            .token_types
            .iter()
            .any(|accepted| accepted.eq_ignore_ascii_case(&typ))
        {
            return Err(VerifyError::Type(typ));
        }
        if !config.algorithms.contains(&header.alg) {
            return Err(VerifyError::Algorithm(format!("{:?}", header.alg)));
        }
        let jwk = self.keys.key(config, header.kid.as_deref()).await?;
        // A key that says which algorithm it is for is used with that one only.
        if let Some(declared) = jwk.common.key_algorithm
            && jsonwebtoken::Algorithm::try_from(declared).ok() != Some(header.alg)
        {
            return Err(VerifyError::Algorithm(format!("{:?}", header.alg)));
        }
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| VerifyError::Signature)?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&config.issuer]);
        validation.set_audience(&[&config.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = config.leeway.as_secs();
        let data =
            decode::<Map<String, Value>>(token, &key, &validation).map_err(|error| match error
                .kind()
            {
                ErrorKind::InvalidSignature => VerifyError::Signature,
                ErrorKind::ExpiredSignature => VerifyError::Expired,
                ErrorKind::ImmatureSignature => VerifyError::NotYetValid,
                ErrorKind::InvalidIssuer => VerifyError::Issuer,
                ErrorKind::InvalidAudience => VerifyError::Audience,
                ErrorKind::MissingRequiredClaim(claim) => VerifyError::MissingClaim(claim.clone()),
                ErrorKind::InvalidClaimFormat(claim) => VerifyError::ClaimFormat(claim.clone()),
                ErrorKind::InvalidAlgorithm | ErrorKind::MissingAlgorithm => {
                    VerifyError::Algorithm(format!("{:?}", header.alg))
                }
                ErrorKind::InvalidEcdsaKey
                | ErrorKind::InvalidEddsaKey
                | ErrorKind::InvalidRsaKey(_)
                | ErrorKind::InvalidKeyFormat => VerifyError::Signature,
                _ => VerifyError::Malformed,
            })?;
        let claims = data.claims;
        let tenant = match claims.get(&config.tenant_claim) {
            Some(Value::String(tenant)) if !tenant.is_empty() => tenant.clone(),
            Some(_) => return Err(VerifyError::ClaimFormat(config.tenant_claim.clone())),
            None => return Err(VerifyError::MissingClaim(config.tenant_claim.clone())),
        };
        Ok(VerifiedToken {
            tenant,
            scopes: scopes(&claims)?,
            subject: claims
                .get("sub")
                .and_then(Value::as_str)
                .map(str::to_string),
        })
    }
}

/// RFC 6749 §3.3: scope tokens are separated by one space (U+0020) and made of printable ASCII
/// but `"` and `\`. Any other separator (a no-break or ideographic space, a tab) is not one,
/// so a token carrying it is malformed rather than read as two scopes.
fn scope_tokens(text: &str, claim: &str) -> Result<Vec<String>, VerifyError> {
    let token_char = |c: char| matches!(c, '\x21' | '\x23'..='\x5b' | '\x5d'..='\x7e');
    text.split(' ')
        .filter(|token| !token.is_empty())
        .map(|token| match token.chars().all(token_char) {
            true => Ok(token.to_string()),
            false => Err(VerifyError::ClaimFormat(claim.into())),
        })
        .collect()
}

fn scopes(claims: &Map<String, Value>) -> Result<Vec<String>, VerifyError> {
    match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(scope)), _) => scope_tokens(scope, "scope"),
        (Some(_), _) => Err(VerifyError::ClaimFormat("scope".into())),
        (None, Some(Value::String(scp))) => scope_tokens(scp, "scp"),
        (None, Some(Value::Array(items))) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| VerifyError::ClaimFormat("scp".into()))
            })
            .collect(),
        (None, Some(_)) => Err(VerifyError::ClaimFormat("scp".into())),
        (None, None) => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::tenants::oauth::OAuthSection;

    #[test]
    fn scopes_split_on_the_space_rfc_6749_defines_and_nothing_else() {
        let claims = |scope: &str| match json!({ "scope": scope }) {
            Value::Object(map) => map,
            _ => unreachable!(),
        };
        assert_eq!(
            scopes(&claims("mcp:tools  mcp:admin")).expect("scopes"),
            ["mcp:tools", "mcp:admin"]
        );
        for spoof in [
            "mcp:tools\u{a0}mcp:admin",
            "mcp:tools\tmcp:admin",
            "mcp:tools\u{3000}x",
        ] {
            assert!(
                matches!(scopes(&claims(spoof)), Err(VerifyError::ClaimFormat(_))),
                "{spoof:?}"
            );
        }
    }
    use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
    use serde_json::json;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Two Ed25519 test keys (PKCS#8 DER, made with `openssl genpkey -algorithm ed25519`) and
    /// their public `x`.
    const KEY_1: &str = "302e020100300506032b6570042204201dc766051220d4bcb0d18fb18a98e6af566040c56ffdebd86bfbae71bd61be8c";
    const X_1: &str = "eDcS_8GjSObVoeTi64CAHzLkAi23gNmUIO0X8NBYnEA";
    const KEY_2: &str = "302e020100300506032b65700422042082a3505538b9a92c1460a576a5b745f7119d508b3816d832c6da8bd6782a0137";
    const X_2: &str = "7WSmhXXAGL6SURvRS-y5GJEgDM3HB4nQtiKGRJP6fW4";
    const RESOURCE: &str = "https://mcp.example.com/mcp";

    fn jwk(kid: &str, x: &str) -> Value {
        json!({ "kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": kid, "x": x })
    }

    /// A JWKS endpoint on 127.0.0.1 whose key set the test swaps; counts its requests.
    struct Jwks {
        url: String,
        keys: Arc<std::sync::Mutex<Value>>,
        hits: Arc<AtomicUsize>,
        /// Milliseconds each answer waits before it is sent (a slow issuer).
        stall: Arc<std::sync::atomic::AtomicU64>,
    }

    async fn jwks(keys: Value) -> Jwks {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/jwks", listener.local_addr().expect("addr"));
        let keys = Arc::new(std::sync::Mutex::new(json!({ "keys": keys })));
        let hits = Arc::new(AtomicUsize::new(0));
        let stall = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (served, counted, stalled) = (keys.clone(), hits.clone(), stall.clone());
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut request = [0u8; 4096];
                let _ = stream.read(&mut request).await;
                counted.fetch_add(1, Ordering::SeqCst);
                let stall = stalled.load(Ordering::SeqCst);
                if stall > 0 {
                    tokio::time::sleep(Duration::from_millis(stall)).await;
                }
                let body = served
                    .lock()
                    .map(|keys| keys.to_string())
                    .unwrap_or_default();
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            }
        });
        Jwks {
            url,
            keys,
            hits,
            stall,
        }
    }

    fn config(jwks_uri: &str, extra: &str) -> OAuthConfig {
        let text = format!(
            "resource = {RESOURCE:?}\nissuer = \"http://127.0.0.1:1\"\njwks_uri = {jwks_uri:?}\nleeway_secs = 5\n{extra}\n[[scope]]\nname = \"s\"\ntools = [\"*\"]\n"
        );
        toml::from_str::<OAuthSection>(&text)
            .expect("toml")
            .validate()
            .expect("valid")
    }

    fn now() -> u64 {
        jsonwebtoken::get_current_timestamp()
    }

    fn claims(change: impl FnOnce(&mut Map<String, Value>)) -> Map<String, Value> {
        let mut claims = json!({
            "iss": "http://127.0.0.1:1", "aud": RESOURCE, "exp": now() + 60,
            "tenant": "alice", "scope": "s other", "sub": "agent"
        })
        .as_object()
        .cloned()
        .expect("object");
        change(&mut claims);
        claims
    }

    fn sign(key: &str, kid: Option<&str>, typ: &str, claims: &Map<String, Value>) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = kid.map(str::to_string);
        header.typ = Some(typ.to_string());
        let key = EncodingKey::from_ed_der(&hex::decode(key).expect("hex"));
        encode(&header, claims, &key).expect("sign")
    }

    fn verifier() -> TokenVerifier {
        TokenVerifier::new(KeyCache::with_intervals(
            Duration::from_millis(200),
            Duration::from_secs(600),
        ))
    }

    #[tokio::test]
    async fn accepts_a_valid_token_and_refuses_each_failed_check() {
        let jwks = jwks(json!([jwk("k1", X_1)])).await;
        let config = config(&jwks.url, "");
        let verifier = verifier();
        let good = sign(KEY_1, Some("k1"), "at+jwt", &claims(|_| {}));
        assert_eq!(
            verifier.verify(&config, &good).await,
            Ok(VerifiedToken {
                tenant: "alice".into(),
                scopes: vec!["s".into(), "other".into()],
                subject: Some("agent".into()),
            })
        );
        let cases: Vec<(String, VerifyError)> = vec![
            (
                sign(KEY_2, Some("k1"), "at+jwt", &claims(|_| {})),
                VerifyError::Signature,
            ),
            (
                sign(
                    KEY_1,
                    Some("k1"),
                    "at+jwt",
                    &claims(|c| {
                        c.insert("aud".into(), json!("https://other.example.com/mcp"));
                    }),
                ),
                VerifyError::Audience,
            ),
            (
                sign(
                    KEY_1,
                    Some("k1"),
                    "at+jwt",
                    &claims(|c| {
                        c.insert("iss".into(), json!("http://127.0.0.1:2"));
                    }),
                ),
                VerifyError::Issuer,
            ),
            (
                sign(
                    KEY_1,
                    Some("k1"),
                    "at+jwt",
                    &claims(|c| {
                        c.insert("exp".into(), json!(now() - 60));
                    }),
                ),
                VerifyError::Expired,
            ),
            (
                sign(
                    KEY_1,
                    Some("k1"),
                    "at+jwt",
                    &claims(|c| {
                        c.insert("nbf".into(), json!(now() + 60));
                    }),
                ),
                VerifyError::NotYetValid,
            ),
            (
                sign(
                    KEY_1,
                    Some("k1"),
                    "at+jwt",
                    &claims(|c| {
                        c.remove("exp");
                    }),
                ),
                VerifyError::MissingClaim("exp".into()),
            ),
            (
                sign(
                    KEY_1,
                    Some("k1"),
                    "at+jwt",
                    &claims(|c| {
                        c.remove("tenant");
                    }),
                ),
                VerifyError::MissingClaim("tenant".into()),
            ),
            (
                sign(KEY_1, Some("k1"), "JWT", &claims(|_| {})),
                VerifyError::Type("JWT".into()),
            ),
            ("not.a.jwt".into(), VerifyError::Malformed),
            ("abc".into(), VerifyError::Malformed),
        ];
        for (token, expected) in cases {
            assert_eq!(verifier.verify(&config, &token).await, Err(expected));
        }
        // Within the leeway, an expired token still passes.
        let just_expired = sign(
            KEY_1,
            Some("k1"),
            "at+jwt",
            &claims(|c| {
                c.insert("exp".into(), json!(now() - 2));
            }),
        );
        assert!(verifier.verify(&config, &just_expired).await.is_ok());
    }

    #[tokio::test]
    async fn an_hmac_token_signed_with_the_public_key_is_refused() {
        let jwks = jwks(json!([jwk("k1", X_1)])).await;
        let config = config(&jwks.url, "");
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("k1".into());
        header.typ = Some("at+jwt".into());
        let forged = encode(
            &header,
            &claims(|_| {}),
            &EncodingKey::from_secret(X_1.as_bytes()).expect("a key"),
        )
        .expect("sign");
        assert_eq!(
            verifier().verify(&config, &forged).await,
            Err(VerifyError::Algorithm("HS256".into()))
        );
    }

    #[tokio::test]
    async fn a_rotated_key_is_fetched_once_and_unknown_kids_are_rate_limited() {
        let jwks = jwks(json!([jwk("k1", X_1)])).await;
        let config = config(&jwks.url, "");
        let verifier = verifier();
        let first = sign(KEY_1, Some("k1"), "at+jwt", &claims(|_| {}));
        assert!(verifier.verify(&config, &first).await.is_ok());
        assert!(verifier.verify(&config, &first).await.is_ok());
        assert_eq!(jwks.hits.load(Ordering::SeqCst), 1, "keys are cached");

        // Made-up key ids: one fetch per refresh interval at most.
        for attempt in 0..5 {
            let unknown = sign(
                KEY_2,
                Some(&format!("made-up-{attempt}")),
                "at+jwt",
                &claims(|_| {}),
            );
            assert!(matches!(
                verifier.verify(&config, &unknown).await,
                Err(VerifyError::Key(KeyError::UnknownKey(_)))
            ));
        }
        assert!(jwks.hits.load(Ordering::SeqCst) <= 2, "rate limited");

        // The issuer rotates to k2: after the interval, a k2 token makes one fetch.
        *jwks.keys.lock().expect("keys") = json!({ "keys": [jwk("k1", X_1), jwk("k2", X_2)] });
        tokio::time::sleep(Duration::from_millis(250)).await;
        let before = jwks.hits.load(Ordering::SeqCst);
        let rotated = sign(KEY_2, Some("k2"), "at+jwt", &claims(|_| {}));
        assert!(verifier.verify(&config, &rotated).await.is_ok());
        assert!(verifier.verify(&config, &first).await.is_ok());
        assert_eq!(jwks.hits.load(Ordering::SeqCst), before + 1);
        assert_eq!(verifier.keys.known_kids().await.len(), 2);
    }

    /// A token naming an unknown `kid` makes the cache fetch the JWKS; while that fetch waits on
    /// a slow issuer, tokens whose key is known are verified at once.
    #[tokio::test]
    async fn a_fetch_for_an_unknown_kid_never_makes_known_keys_wait() {
        let jwks = jwks(json!([jwk("k1", X_1)])).await;
        let config = Arc::new(config(&jwks.url, ""));
        let verifier = Arc::new(verifier());
        let good = sign(KEY_1, Some("k1"), "at+jwt", &claims(|_| {}));
        assert!(verifier.verify(&config, &good).await.is_ok());
        tokio::time::sleep(Duration::from_millis(250)).await;
        jwks.stall.store(3_000, Ordering::SeqCst);
        let unknown = sign(KEY_2, Some("made-up"), "at+jwt", &claims(|_| {}));
        let stalled = tokio::spawn({
            let (verifier, config) = (verifier.clone(), config.clone());
            async move { verifier.verify(&config, &unknown).await }
        });
        while jwks.hits.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let started = std::time::Instant::now();
        assert!(verifier.verify(&config, &good).await.is_ok());
        assert!(
            started.elapsed() < Duration::from_millis(1_000),
            "a valid token waited {:?} for another request's fetch",
            started.elapsed()
        );
        assert!(!stalled.is_finished(), "the issuer is still answering");
        assert!(matches!(
            stalled.await.expect("task"),
            Err(VerifyError::Key(KeyError::UnknownKey(_)))
        ));
    }

    /// A key the issuer stopped publishing is refused once the keys are fetched again; a
    /// stale key serves only while no fresh set says otherwise.
    #[tokio::test]
    async fn a_key_rotated_out_is_refused_after_the_refresh() {
        let jwks = jwks(json!([jwk("k1", X_1)])).await;
        let config = config(&jwks.url, "");
        let verifier = TokenVerifier::new(KeyCache::with_intervals(
            Duration::from_millis(100),
            Duration::from_millis(200),
        ));
        let old = sign(KEY_1, Some("k1"), "at+jwt", &claims(|_| {}));
        assert!(verifier.verify(&config, &old).await.is_ok());
        *jwks.keys.lock().expect("keys") = json!({ "keys": [jwk("k2", X_2)] });
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(matches!(
            verifier.verify(&config, &old).await,
            Err(VerifyError::Key(KeyError::UnknownKey(_)))
        ));
        let new = sign(KEY_2, Some("k2"), "at+jwt", &claims(|_| {}));
        assert!(verifier.verify(&config, &new).await.is_ok());
    }

    #[tokio::test]
    async fn an_unreachable_issuer_is_unavailable_not_a_bad_token() {
        let config = config("http://127.0.0.1:9/jwks", "");
        let token = sign(KEY_1, Some("k1"), "at+jwt", &claims(|_| {}));
        let error = verifier()
            .verify(&config, &token)
            .await
            .expect_err("unreachable");
        assert!(error.is_unavailable(), "{error}");
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        let scope = json!({ "scope": "a b" })
            .as_object()
            .cloned()
            .expect("object");
        assert_eq!(scopes(&scope), Ok(vec!["a".into(), "b".into()]));
        let scp = json!({ "scp": ["a", "b"] })
            .as_object()
            .cloned()
            .expect("object");
        assert_eq!(scopes(&scp), Ok(vec!["a".into(), "b".into()]));
        let bad = json!({ "scp": [1] }).as_object().cloned().expect("object");
        assert!(scopes(&bad).is_err());
    }
}
