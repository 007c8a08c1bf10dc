//! Plugins as OCI artifacts, in the layout the WebAssembly registry tools use (the CNCF Wasm
//! OCI artifact: a `application/vnd.wasm.config.v0+json` config and one `application/wasm`
//! layer), plus our detached ed25519 signature as a second layer. The registry protocol is
//! `oci-client`'s; this module adds what a hostile registry must not get past: bounded sizes,
//! digests checked on every blob, and nothing but the expected media types.

use futures::TryStreamExt as _;
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::errors::OciErrorCode;
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::time::Duration;

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
/// A registry that stops answering does not hang the command.
const TIMEOUT: Duration = Duration::from_secs(30);

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

    /// Whether the registry's host, parsed as a URL's host, is this machine.
    fn is_loopback(&self) -> bool {
        match url::Url::parse(&format!("http://{}/", self.reference.registry()))
            .ok()
            .and_then(|url| url.host().map(|host| host.to_owned()))
        {
            Some(url::Host::Ipv4(address)) => address.is_loopback(),
            Some(url::Host::Ipv6(address)) => address.is_loopback(),
            Some(url::Host::Domain(name)) => name == "localhost",
            None => false,
        }
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
        connect_timeout: Some(Duration::from_secs(10)),
        user_agent: concat!("devtools-mcp/", env!("CARGO_PKG_VERSION")),
        platform_resolver: None,
        ..ClientConfig::default()
    })
}

fn auth() -> RegistryAuth {
    match (std::env::var(USERNAME_VAR), std::env::var(PASSWORD_VAR)) {
        (Ok(user), Ok(password)) => RegistryAuth::Basic(user, password),
        _ => RegistryAuth::Anonymous,
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
    let client = client(plugin);
    client
        .push(&plugin.reference, &layers, config, &auth(), Some(manifest))
        .await
        .map_err(|error| failure(plugin, error))?;
    let (_, digest) = client
        .pull_image_manifest(&plugin.reference, &auth())
        .await
        .map_err(|error| failure(plugin, error))?;
    Ok(digest)
}

/// The manifest digest `plugin`'s tag points at now (what [`fetch`] would install).
pub async fn resolve(plugin: &PluginRef) -> Result<String, OciError> {
    let (_, digest) = client(plugin)
        .pull_image_manifest(&plugin.reference, &auth())
        .await
        .map_err(|error| failure(plugin, error))?;
    Ok(digest)
}

/// Fetches the artifact, checking every byte against the digests that name it: the manifest
/// against a pinned digest, the blobs against the manifest. Sizes are bounded before reading.
pub async fn fetch(plugin: &PluginRef) -> Result<Artifact, OciError> {
    let client = client(plugin);
    let (manifest, digest) = client
        .pull_image_manifest(&plugin.reference, &auth())
        .await
        .map_err(|error| failure(plugin, error))?;
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
    let not_a_plugin = |reason: String| OciError::NotAPlugin {
        reference: plugin.display(),
        reason,
    };
    if manifest.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(not_a_plugin(format!(
            "its config is {}, not a WebAssembly artifact's ({CONFIG_MEDIA_TYPE})",
            manifest.config.media_type
        )));
    }
    let mut component = None;
    let mut signature = None;
    for layer in &manifest.layers {
        match layer.media_type.as_str() {
            WASM_MEDIA_TYPE | LEGACY_WASM_MEDIA_TYPE if component.is_none() => {
                component = Some(blob(&client, plugin, layer, MAX_COMPONENT_BYTES).await?);
            }
            SIGNATURE_MEDIA_TYPE if signature.is_none() => {
                let bytes = blob(&client, plugin, layer, MAX_SIGNATURE_BYTES).await?;
                let text = String::from_utf8(bytes)
                    .map_err(|_| not_a_plugin("its signature layer is not text".into()))?;
                signature = Some(text);
            }
            other => {
                return Err(not_a_plugin(format!(
                    "it has a layer of type {other}; a plugin has one {WASM_MEDIA_TYPE} layer and at most one signature"
                )));
            }
        }
    }
    let component =
        component.ok_or_else(|| not_a_plugin(format!("it has no {WASM_MEDIA_TYPE} layer")))?;
    Ok(Artifact {
        digest,
        component,
        signature,
    })
}

/// One blob, at most `limit` bytes, whose sha256 must be the descriptor's digest.
async fn blob(
    client: &Client,
    plugin: &PluginRef,
    layer: &OciDescriptor,
    limit: u64,
) -> Result<Vec<u8>, OciError> {
    let too_big = || OciError::NotAPlugin {
        reference: plugin.display(),
        reason: format!(
            "its {} layer is larger than {limit} bytes",
            layer.media_type
        ),
    };
    if layer.size < 0 || layer.size as u64 > limit {
        return Err(too_big());
    }
    let mut stream = client
        .pull_blob_stream(&plugin.reference, layer)
        .await
        .map_err(|error| failure(plugin, error))?;
    let mut bytes = Vec::with_capacity(layer.size as usize);
    loop {
        let chunk = match stream.try_next().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            // A digest mismatch found by the client while streaming is tampering too.
            Err(error) if error.to_string().contains("digest") => {
                return Err(OciError::Tampered {
                    reference: plugin.display(),
                    what: "layer",
                    expected: layer.digest.clone(),
                    actual: error.to_string(),
                });
            }
            Err(error) => {
                return Err(OciError::Registry {
                    reference: plugin.display(),
                    reason: format!("reading layer {}: {error}", layer.digest),
                });
            }
        };
        if bytes.len() as u64 + chunk.len() as u64 > limit {
            return Err(too_big());
        }
        bytes.extend_from_slice(&chunk);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_need_the_scheme_and_a_registry() {
        let parse = |text: &str| PluginRef::parse(text).expect(text);
        let plugin = parse("oci://127.0.0.1:5000/tools/page_title:1.0.0");
        assert_eq!(plugin.name(), "page_title");
        assert_eq!(plugin.reference.tag(), Some("1.0.0"));
        assert!(plugin.is_loopback());
        assert!(!parse("oci://ghcr.io/acme/x:1").is_loopback());
        assert!(!parse("oci://127.0.0.1.nip.io/x:1").is_loopback());
        assert!(parse("oci://localhost:5000/x:1").is_loopback());
        // An implicit Docker Hub, a missing scheme or a bad name is refused with the syntax.
        for bad in [
            "oci://acme/page_title:1",
            "ghcr.io/acme/x:1",
            "oci://ghcr.io",
            "oci://ghcr.io/UPPER:1",
            "oci://127.0.0.1.nip.io.evil/x:1 y",
        ] {
            let error = PluginRef::parse(bad).err().expect(bad).to_string();
            assert!(error.contains("oci://HOST[:PORT]/NAME:TAG"), "{error}");
        }
        let pinned = plugin.pinned(&format!("sha256:{}", "a".repeat(64)));
        assert!(
            pinned.display().contains("@sha256:aaaa"),
            "{}",
            pinned.display()
        );
        assert_eq!(pinned.name(), "page_title");
    }
}
