//! The registry's HTTP for what we read (manifests, blobs, tokens), done here and not by
//! `oci-client`, whose reqwest client follows any redirect, reads a body whole whatever its
//! size and sends the operator's credentials to whatever token realm a registry names.
//! Here: every URL connected to passes [`may_connect`] before the connection (the redirects
//! are followed by hand); the registry's credentials and tokens go only to its own origin
//! (scheme, host, port), never across a redirect to another; a token realm gets the
//! credentials only on the registry's origin or over HTTPS; every body is refused by its
//! Content-Length above its cap and cut by a running count at the cap.

use super::{
    CONNECT_TIMEOUT, MAX_MANIFEST_BYTES, OciError, PluginRef, TIMEOUT, USER_AGENT, clip,
    may_connect, sha256_digest, size_text,
};
use oci_client::RegistryOperation;
use oci_client::secrets::RegistryAuth;
use oci_client::token_cache::RegistryTokenType;
use reqwest::header::{ACCEPT, LOCATION, WWW_AUTHENTICATE};
use reqwest::{RequestBuilder, Response, StatusCode};
use url::{Origin, Url};

/// Redirects followed per request: a registry sends a blob to its storage once.
const MAX_HOPS: usize = 5;
/// A token service's answer: a JSON object with a token of a few KiB.
const MAX_TOKEN_BYTES: u64 = 64 << 10;
/// The part of an error answer quoted in the message.
const MAX_ERROR_BYTES: u64 = 4 << 10;
/// What we read as a manifest: an image manifest, or an index (refused afterwards, by name).
const MANIFEST_TYPES: &str = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json";
const CREDENTIALS_HINT: &str = "if it needs credentials, set DEVTOOLS_MCP_REGISTRY_USERNAME and DEVTOOLS_MCP_REGISTRY_PASSWORD";

#[derive(Clone)]
enum Authorization {
    Basic(String, String),
    Bearer(String),
}

impl Authorization {
    fn apply(&self, request: RequestBuilder) -> RequestBuilder {
        match self {
            Authorization::Basic(user, password) => request.basic_auth(user, Some(password)),
            Authorization::Bearer(token) => request.bearer_auth(token),
        }
    }
}

/// One registry, as one plugin reference names it.
pub struct Registry {
    client: reqwest::Client,
    plugin: PluginRef,
    base: Url,
    credentials: Option<(String, String)>,
    /// What the registry's challenge was answered with, for its own origin only.
    authorization: Option<Authorization>,
}

impl Registry {
    pub fn new(
        plugin: &PluginRef,
        credentials: Option<(String, String)>,
    ) -> Result<Registry, OciError> {
        let base = plugin.base_url()?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(TIMEOUT)
            .user_agent(USER_AGENT)
            .build()
            .map_err(|error| OciError::Unreachable {
                registry: plugin.reference.registry().to_string(),
                reason: error.to_string(),
            })?;
        Ok(Registry {
            client,
            plugin: plugin.clone(),
            base,
            credentials,
            authorization: None,
        })
    }

    /// The manifest the reference names (by digest, else by tag) and its sha256 digest.
    pub async fn manifest(&mut self) -> Result<(Vec<u8>, String), OciError> {
        let reference = &self.plugin.reference;
        let name = reference.digest().or(reference.tag()).unwrap_or("latest");
        let path = format!("v2/{}/manifests/{name}", reference.repository());
        let bytes = self
            .get(&path, MANIFEST_TYPES, MAX_MANIFEST_BYTES, "manifest")
            .await?;
        let digest = sha256_digest(&bytes);
        Ok((bytes, digest))
    }

    /// A blob's bytes, at most `limit` (the caller checks them against the digest).
    pub async fn blob(
        &mut self,
        digest: &str,
        limit: u64,
        what: &str,
    ) -> Result<Vec<u8>, OciError> {
        let path = format!("v2/{}/blobs/{digest}", self.plugin.reference.repository());
        self.get(&path, "*/*", limit, what).await
    }

    /// The authentication `oci-client` pushes with: the registry's challenge answered here,
    /// under our rules, so that oci-client never answers one itself: given a Bearer token it
    /// asks no realm, and Basic credentials go into its token cache (where they never expire),
    /// not to its challenge logic, which would send them to any realm the registry names.
    pub async fn push_auth(
        &mut self,
        client: &oci_client::Client,
    ) -> Result<RegistryAuth, OciError> {
        let url = self.url("v2/")?;
        let response = self
            .send(url, "application/json", None, "the registry at")
            .await?;
        if response.status() == StatusCode::UNAUTHORIZED {
            self.authorize(&response, "pull,push").await?;
        }
        match &self.authorization {
            None => Ok(RegistryAuth::Anonymous),
            Some(Authorization::Bearer(token)) => Ok(RegistryAuth::Bearer(token.clone())),
            Some(Authorization::Basic(user, password)) => {
                for operation in [RegistryOperation::Push, RegistryOperation::Pull] {
                    let basic = RegistryTokenType::Basic(user.clone(), password.clone());
                    client
                        .tokens
                        .insert(&self.plugin.reference, operation, basic)
                        .await;
                }
                Ok(RegistryAuth::Anonymous)
            }
        }
    }

    fn url(&self, path: &str) -> Result<Url, OciError> {
        self.base
            .join(path)
            .map_err(|_| OciError::Reference(self.plugin.display()))
    }

    fn registry_authorization(&self) -> Option<(Origin, Authorization)> {
        let authorization = self.authorization.clone()?;
        Some((self.base.origin(), authorization))
    }

    /// A GET on the registry, its 401 challenge answered once, its body read within `limit`.
    async fn get(
        &mut self,
        path: &str,
        accept: &str,
        limit: u64,
        what: &str,
    ) -> Result<Vec<u8>, OciError> {
        let url = self.url(path)?;
        let authorization = self.registry_authorization();
        let mut response = self
            .send(url.clone(), accept, authorization, "the registry at")
            .await?;
        if response.status() == StatusCode::UNAUTHORIZED
            && self.authorization.is_none()
            && response.url().origin() == self.base.origin()
        {
            self.authorize(&response, "pull").await?;
            let authorization = self.registry_authorization();
            response = self
                .send(url, accept, authorization, "the registry at")
                .await?;
        }
        match response.status() {
            StatusCode::OK => self.read(response, limit, what).await,
            StatusCode::NOT_FOUND if what == "manifest" => Err(OciError::NotFound {
                reference: self.plugin.display(),
            }),
            _ => Err(self.refused(response, what).await),
        }
    }

    /// One GET, its redirects followed here: each hop must pass [`may_connect`] before it is
    /// connected to, and `authorization` goes only to requests on its origin.
    async fn send(
        &self,
        mut url: Url,
        accept: &str,
        authorization: Option<(Origin, Authorization)>,
        first: &'static str,
    ) -> Result<Response, OciError> {
        for hop in 0..=MAX_HOPS {
            if !may_connect(&url) {
                return Err(OciError::UnsafeHop {
                    reference: self.plugin.display(),
                    hop: if hop == 0 { first } else { "a redirect to" },
                    url: clip(url.as_str()),
                });
            }
            let mut request = self.client.get(url.clone()).header(ACCEPT, accept);
            if let Some((origin, authorization)) = &authorization
                && url.origin() == *origin
            {
                request = authorization.apply(request);
            }
            let response = request
                .send()
                .await
                .map_err(|error| unreachable(&url, &error))?;
            if !response.status().is_redirection() {
                return Ok(response);
            }
            url = response
                .headers()
                .get(LOCATION)
                .and_then(|location| location.to_str().ok())
                .and_then(|location| url.join(location).ok())
                .ok_or_else(|| {
                    self.error(format!(
                        "it answered {} without a valid Location",
                        response.status()
                    ))
                })?;
        }
        Err(self.error(format!("it redirected more than {MAX_HOPS} times")))
    }

    /// Answers a 401's challenge. Bearer: a token from the realm it names (the realm passes
    /// [`may_connect`]; it gets the credentials only on the registry's origin or over HTTPS).
    /// Basic: the credentials, for the registry's origin.
    async fn authorize(&mut self, challenged: &Response, actions: &str) -> Result<(), OciError> {
        let header = challenged
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        let mut basic = false;
        for challenge in http_auth::parser::ChallengeParser::new(header).flatten() {
            let param = |name: &str| {
                challenge
                    .params
                    .iter()
                    .find(|(key, _)| key.eq_ignore_ascii_case(name))
                    .map(|(_, value)| value.to_unescaped())
            };
            if challenge.scheme.eq_ignore_ascii_case("bearer")
                && let Some(realm) = param("realm")
            {
                let token = self.token(&realm, param("service"), actions).await?;
                self.authorization = Some(Authorization::Bearer(token));
                return Ok(());
            }
            basic |= challenge.scheme.eq_ignore_ascii_case("basic");
        }
        match (&self.credentials, basic) {
            (Some((user, password)), true) => {
                self.authorization = Some(Authorization::Basic(user.clone(), password.clone()));
                Ok(())
            }
            _ => Err(self.error(format!(
                "it requires authentication ({}): {CREDENTIALS_HINT}",
                clip(header)
            ))),
        }
    }

    async fn token(
        &self,
        realm: &str,
        service: Option<String>,
        actions: &str,
    ) -> Result<String, OciError> {
        let mut url = Url::parse(realm).map_err(|_| {
            self.error(format!(
                "its token service \"{}\" is not a URL",
                clip(realm)
            ))
        })?;
        url.query_pairs_mut().append_pair(
            "scope",
            &format!(
                "repository:{}:{actions}",
                self.plugin.reference.repository()
            ),
        );
        if let Some(service) = service {
            url.query_pairs_mut().append_pair("service", &service);
        }
        let to_realm = url.origin() == self.base.origin() || url.scheme() == "https";
        let credentials = self
            .credentials
            .as_ref()
            .filter(|_| to_realm)
            .map(|(user, password)| {
                let basic = Authorization::Basic(user.clone(), password.clone());
                (url.origin(), basic)
            });
        let response = self
            .send(url, "application/json", credentials, "the token service at")
            .await?;
        if response.status() != StatusCode::OK {
            return Err(self.refused(response, "token").await);
        }
        let body = self.read(response, MAX_TOKEN_BYTES, "token").await?;
        let token: oci_client::token_cache::RegistryToken = serde_json::from_slice(&body)
            .map_err(|_| self.error("its token service answered no token".into()))?;
        Ok(token.token().to_string())
    }

    /// A body, refused by its Content-Length above `limit`, cut when it grows past `limit`.
    async fn read(
        &self,
        mut response: Response,
        limit: u64,
        what: &str,
    ) -> Result<Vec<u8>, OciError> {
        let too_large = || OciError::TooLarge {
            reference: self.plugin.display(),
            what: what.to_string(),
            limit: size_text(limit),
        };
        let declared = response.content_length().unwrap_or(0);
        if declared > limit {
            return Err(too_large());
        }
        let mut bytes = Vec::with_capacity(declared as usize);
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| self.error(format!("reading the {what}: {}", innermost(&error))))?
        {
            if (bytes.len() + chunk.len()) as u64 > limit {
                return Err(too_large());
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }

    /// The error for an answer that is not the `what` asked for, quoting its start.
    async fn refused(&self, response: Response, what: &str) -> OciError {
        let status = response.status();
        let hint = match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => format!(" ({CREDENTIALS_HINT})"),
            _ => String::new(),
        };
        let body = self
            .read(response, MAX_ERROR_BYTES, "error")
            .await
            .unwrap_or_default();
        self.error(format!(
            "it answered {status} for the {what}{hint}: {}",
            clip(String::from_utf8_lossy(&body).trim())
        ))
    }

    fn error(&self, reason: String) -> OciError {
        OciError::Registry {
            reference: self.plugin.display(),
            reason,
        }
    }
}

fn unreachable(url: &Url, error: &reqwest::Error) -> OciError {
    OciError::Unreachable {
        registry: url.authority().to_string(),
        reason: innermost(error),
    }
}

/// The root cause ("Connection refused"), not reqwest's wrapping.
fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    let mut error = error;
    while let Some(source) = error.source() {
        error = source;
    }
    error.to_string()
}
