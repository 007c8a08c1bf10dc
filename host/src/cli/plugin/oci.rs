//! Plugins as OCI artifacts, in the layout the WebAssembly registry tools use (the CNCF Wasm
//! OCI artifact: a `application/vnd.wasm.config.v0+json` config and one `application/wasm`
//! layer), plus our detached ed25519 signature as a second layer. What a hostile registry
//! must not get past: sizes bounded before reading, every hop held to [`may_connect`],
//! credentials only for the registry's own origin, a deadline per artifact, digests checked on
//! every blob, and nothing but the expected media types. Reading (`plugin install`, and the
//! digest `plugin publish` prints) is our own HTTP (`transport`); pushing is `oci-client`'s,
//! given a token that `transport` obtained under the same rules.

pub mod manifest;
#[cfg(test)]
mod tests;
mod transport;

use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::errors::OciErrorCode;
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use oci_client::{Client, Reference};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::time::Duration;
use transport::Registry;

/// The config of a Wasm OCI artifact.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component layer.
pub const WASM_MEDIA_TYPE: &str = "application/wasm";
/// The layer media type of older wasm-to-oci artifacts, still accepted when installing.
const LEGACY_WASM_MEDIA_TYPE: &str = "application/vnd.wasm.content.layer.v1+wasm";
/// Our `.sig` file (TOML: signer's key and signature of the component's bytes).
pub const SIGNATURE_MEDIA_TYPE: &str = "application/vnd.devtools-mcp.signature.v1+toml";
/// The largest component installed: the server refuses larger plugins anyway.
const MAX_COMPONENT_BYTES: u64 = 64 << 20;
const MAX_SIGNATURE_BYTES: u64 = 4 << 10;
/// A manifest or an index: a plugin's is under 1 KiB; 4 MiB is what registries accept.
const MAX_MANIFEST_BYTES: u64 = 4 << 20;
/// A registry that stops answering does not hang the command (no byte for this long).
const TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// One artifact, all requests included: a registry that answers a byte at a time (within
/// `TIMEOUT`) cannot hold `plugin install` for ever. 64 MiB at 5 Mbit/s takes about 110 s.
const FETCH_DEADLINE: Duration = Duration::from_secs(120);
/// Publishing uploads the component: more time for slower uplinks.
const PUBLISH_DEADLINE: Duration = Duration::from_secs(300);
const USER_AGENT: &str = concat!("devtools-mcp/", env!("CARGO_PKG_VERSION"));

/// Credentials come from the environment (never from the command line, where `ps` shows them).
const USERNAME_VAR: &str = "DEVTOOLS_MCP_REGISTRY_USERNAME";
const PASSWORD_VAR: &str = "DEVTOOLS_MCP_REGISTRY_PASSWORD";

#[derive(Debug, thiserror::Error)]
pub enum OciError {
    #[error(
        "\"{0}\" is not a plugin reference: write oci://HOST[:PORT]/NAME:TAG (or NAME@sha256:DIGEST), e.g. oci://ghcr.io/acme/page_title:1.0.0"
    )]
    Reference(String),
    #[error(
        "Cannot reach the registry {registry}: {reason}. Is it running, and is the address right?"
    )]
    Unreachable { registry: String, reason: String },
    #[error(
        "{reference} is not in the registry: no such name or tag (check them with the publisher)"
    )]
    NotFound { reference: String },
    #[error("The registry refused {reference}: {reason}")]
    Registry { reference: String, reason: String },
    #[error("{reference} is not a devtools-mcp plugin: {reason}")]
    NotAPlugin { reference: String, reason: String },
    #[error(
        "{reference}: the {what} the registry sent does not match its digest {expected} (got {actual}): the artifact was altered; nothing was installed"
    )]
    Tampered {
        reference: String,
        what: &'static str,
        expected: String,
        actual: String,
    },
    #[error(
        "{reference}: the {what} is over {limit}, more than a plugin's may be; refused before reading it, nothing was installed. Check that the reference names a devtools-mcp plugin (its component is at most 64 MiB: the server loads no larger)"
    )]
    TooLarge {
        reference: String,
        what: String,
        limit: String,
    },
    #[error(
        "{reference}: {hop} {url}, refused before connecting: plain HTTP is allowed only to this machine (localhost, 127.0.0.1, ::1), HTTPS everywhere else. Nothing was fetched from it and no credentials were sent; ask the registry's operator for HTTPS"
    )]
    UnsafeHop {
        reference: String,
        hop: &'static str,
        url: String,
    },
    #[error(
        "{reference}: {doing} took more than {seconds} s, the limit for one artifact (a registry that answers slowly cannot hold the command); stopped. Try again later, or check the registry and any proxy on the way"
    )]
    Deadline {
        reference: String,
        doing: &'static str,
        seconds: u64,
    },
}

/// The one rule for every URL the client connects to: the registry itself, each redirect, a
/// token realm. TLS everywhere; plain HTTP only to this machine, where nobody is in between.
pub(super) fn may_connect(url: &url::Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => crate::net::address::is_loopback_host(url.host()),
        _ => false,
    }
}

/// Text a registry chose, cut to a length an error message can carry.
fn clip(text: &str) -> String {
    const MAX: usize = 160;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_string(),
    }
}

/// `bytes` as a size in an error message.
fn size_text(bytes: u64) -> String {
    match bytes {
        bytes if bytes >= 1 << 20 => format!("{} MiB", bytes >> 20),
        bytes if bytes >= 1 << 10 => format!("{} KiB", bytes >> 10),
        bytes => format!("{bytes} bytes"),
    }
}

/// A parsed `oci://` reference whose registry was written out (no implicit Docker Hub).
#[derive(Clone)]
pub struct PluginRef {
    pub reference: Reference,
}

impl PluginRef {
    pub fn parse(text: &str) -> Result<PluginRef, OciError> {
        let bad = || OciError::Reference(text.to_string());
        let rest = text.strip_prefix("oci://").ok_or_else(bad)?;
        let host = rest.split('/').next().unwrap_or_default();
        let explicit_host = host.contains('.') || host.contains(':') || host == "localhost";
        if !explicit_host || !rest.contains('/') {
            return Err(bad());
        }
        let reference: Reference = rest.parse().map_err(|_| bad())?;
        if reference.registry() != host {
            return Err(bad());
        }
        Ok(PluginRef { reference })
    }

    /// The same artifact pinned to a manifest digest.
    pub fn pinned(&self, digest: &str) -> PluginRef {
        PluginRef {
            reference: Reference::with_digest(
                self.reference.registry().to_string(),
                self.reference.repository().to_string(),
                digest.to_string(),
            ),
        }
    }

    /// The last path segment: the file name the plugin is installed under.
    pub fn name(&self) -> &str {
        let repository = self.reference.repository();
        repository.rsplit('/').next().unwrap_or(repository)
    }

    pub fn display(&self) -> String {
        format!("oci://{}", self.reference.whole())
    }

    /// Whether plain HTTP to the registry passes [`may_connect`] (it is this machine).
    fn is_loopback(&self) -> bool {
        url::Url::parse(&format!("http://{}/", self.reference.registry()))
            .is_ok_and(|url| may_connect(&url))
    }

    /// `http://` for a registry on this machine, `https://` for any other.
    fn base_url(&self) -> Result<url::Url, OciError> {
        let scheme = if self.is_loopback() { "http" } else { "https" };
        url::Url::parse(&format!("{scheme}://{}/", self.reference.registry()))
            .ok()
            .filter(may_connect)
            .ok_or_else(|| OciError::Reference(self.display()))
    }
}

/// What a registry holds under one reference.
pub struct Artifact {
    /// The manifest's digest: what the lock file pins.
    pub digest: String,
    pub component: Vec<u8>,
    /// The `.sig` file's text, when the artifact carries one.
    pub signature: Option<String>,
}

fn client(plugin: &PluginRef) -> Client {
    // Plain HTTP only to a registry on this machine; TLS everywhere else.
    let protocol = match plugin.is_loopback() {
        true => ClientProtocol::HttpsExcept(vec![plugin.reference.registry().to_string()]),
        false => ClientProtocol::Https,
    };
    Client::new(ClientConfig {
        protocol,
        read_timeout: Some(TIMEOUT),
        connect_timeout: Some(CONNECT_TIMEOUT),
        user_agent: USER_AGENT,
        platform_resolver: None,
        ..ClientConfig::default()
    })
}

/// The operator's registry user name and password, when both are set.
fn credentials() -> Option<(String, String)> {
    match (std::env::var(USERNAME_VAR), std::env::var(PASSWORD_VAR)) {
        (Ok(user), Ok(password)) => Some((user, password)),
        _ => None,
    }
}

fn failure(plugin: &PluginRef, error: oci_client::errors::OciDistributionError) -> OciError {
    use std::error::Error as _;
    if let oci_client::errors::OciDistributionError::RequestError(request) = &error
        && (request.is_connect() || request.is_timeout())
    {
        let mut reason = request.to_string();
        let mut source = request.source();
        while let Some(inner) = source {
            reason = inner.to_string();
            source = inner.source();
        }
        return OciError::Unreachable {
            registry: plugin.reference.registry().to_string(),
            reason,
        };
    }
    if let oci_client::errors::OciDistributionError::RegistryError { envelope, .. } = &error
        && envelope.errors.iter().any(|error| {
            matches!(
                error.code,
                OciErrorCode::ManifestUnknown | OciErrorCode::NameUnknown
            )
        })
    {
        return OciError::NotFound {
            reference: plugin.display(),
        };
    }
    if let oci_client::errors::OciDistributionError::ImageManifestNotFoundError(_) = &error {
        return OciError::NotFound {
            reference: plugin.display(),
        };
    }
    OciError::Registry {
        reference: plugin.display(),
        reason: error.to_string(),
    }
}

fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// Pushes a component (and its signature) under `plugin`; returns the manifest's digest.
/// The same bytes give the same digest: nothing time-dependent goes into the artifact.
pub async fn publish(
    plugin: &PluginRef,
    component: Vec<u8>,
    signature: Option<String>,
    tool_name: &str,
    imports: &[String],
) -> Result<String, OciError> {
    let publishing = publish_unbounded(plugin, component, signature, tool_name, imports);
    tokio::time::timeout(PUBLISH_DEADLINE, publishing)
        .await
        .unwrap_or_else(|_| Err(deadline(plugin, "publishing", PUBLISH_DEADLINE)))
}

async fn publish_unbounded(
    plugin: &PluginRef,
    component: Vec<u8>,
    signature: Option<String>,
    tool_name: &str,
    imports: &[String],
) -> Result<String, OciError> {
    let component_digest = sha256_digest(&component);
    let mut layers = vec![ImageLayer::new(
        component,
        WASM_MEDIA_TYPE.to_string(),
        Some(BTreeMap::from([(
            "org.opencontainers.image.title".to_string(),
            format!("{}.wasm", plugin.name()),
        )])),
    )];
    if let Some(signature) = signature {
        layers.push(ImageLayer::new(
            signature.into_bytes(),
            SIGNATURE_MEDIA_TYPE.to_string(),
            None,
        ));
    }
    let config = serde_json::json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [component_digest],
        "component": { "imports": imports, "exports": ["devtools:tool/tool"] },
    });
    let config = Config::new(
        serde_json::to_vec(&config).unwrap_or_default(),
        CONFIG_MEDIA_TYPE.to_string(),
        None,
    );
    let annotations = BTreeMap::from([(
        "org.opencontainers.image.title".to_string(),
        tool_name.to_string(),
    )]);
    let manifest = OciImageManifest::build(&layers, &config, Some(annotations));
    // The registry's challenge is answered by `transport`, under our rules (see push_auth).
    let mut registry = Registry::new(plugin, credentials())?;
    let client = client(plugin);
    let auth = registry.push_auth(&client).await?;
    client
        .push(&plugin.reference, &layers, config, &auth, Some(manifest))
        .await
        .map_err(|error| failure(plugin, error))?;
    let (_, digest) = registry.manifest().await?;
    Ok(digest)
}

fn deadline(plugin: &PluginRef, doing: &'static str, limit: Duration) -> OciError {
    OciError::Deadline {
        reference: plugin.display(),
        doing,
        seconds: limit.as_secs(),
    }
}

/// The manifest digest `plugin`'s tag points at now (what [`fetch`] would install), read
/// through the same bounded client as [`fetch`].
pub async fn resolve(plugin: &PluginRef) -> Result<String, OciError> {
    let unbounded = async {
        let mut registry = Registry::new(plugin, credentials())?;
        let (_, digest) = registry.manifest().await?;
        Ok(digest)
    };
    tokio::time::timeout(FETCH_DEADLINE, unbounded)
        .await
        .unwrap_or_else(|_| Err(deadline(plugin, "resolving the tag", FETCH_DEADLINE)))
}

/// Fetches the artifact, checking every byte against the digests that name it: the manifest
/// against a pinned digest, the blobs against the manifest. Sizes are bounded before reading.
pub async fn fetch(plugin: &PluginRef) -> Result<Artifact, OciError> {
    fetch_with(plugin, credentials(), FETCH_DEADLINE).await
}

/// [`fetch`] with the credentials and the deadline given (the tests' own).
async fn fetch_with(
    plugin: &PluginRef,
    credentials: Option<(String, String)>,
    limit: Duration,
) -> Result<Artifact, OciError> {
    tokio::time::timeout(limit, fetch_unbounded(plugin, credentials))
        .await
        .unwrap_or_else(|_| Err(deadline(plugin, "fetching the artifact", limit)))
}

async fn fetch_unbounded(
    plugin: &PluginRef,
    credentials: Option<(String, String)>,
) -> Result<Artifact, OciError> {
    let mut registry = Registry::new(plugin, credentials)?;
    let (bytes, digest) = registry.manifest().await?;
    if let Some(pinned) = plugin.reference.digest()
        && pinned != digest
    {
        return Err(OciError::Tampered {
            reference: plugin.display(),
            what: "manifest",
            expected: pinned.to_string(),
            actual: digest,
        });
    }
    let found = manifest::read(&bytes).map_err(|reason| OciError::NotAPlugin {
        reference: plugin.display(),
        reason,
    })?;
    let component = blob(&mut registry, plugin, &found.component, MAX_COMPONENT_BYTES).await?;
    let signature = match &found.signature {
        None => None,
        Some(layer) => {
            let bytes = blob(&mut registry, plugin, layer, MAX_SIGNATURE_BYTES).await?;
            Some(String::from_utf8(bytes).map_err(|_| OciError::NotAPlugin {
                reference: plugin.display(),
                reason: "its signature layer is not text".into(),
            })?)
        }
    };
    Ok(Artifact {
        digest,
        component,
        signature,
    })
}

/// One blob, at most `limit` bytes, whose sha256 must be the descriptor's digest.
async fn blob(
    registry: &mut Registry,
    plugin: &PluginRef,
    layer: &OciDescriptor,
    limit: u64,
) -> Result<Vec<u8>, OciError> {
    let what = format!("{} layer", clip(&layer.media_type));
    if layer.size < 0 || layer.size as u64 > limit {
        return Err(OciError::TooLarge {
            reference: plugin.display(),
            what,
            limit: size_text(limit),
        });
    }
    let bytes = registry.blob(&layer.digest, limit, &what).await?;
    let actual = sha256_digest(&bytes);
    if actual != layer.digest {
        return Err(OciError::Tampered {
            reference: plugin.display(),
            what: "layer",
            expected: layer.digest.clone(),
            actual,
        });
    }
    Ok(bytes)
}
