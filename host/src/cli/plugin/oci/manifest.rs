//! What a registry's manifest must be to be a plugin's, checked before any blob is fetched:
//! one image manifest (not an index), the Wasm config type, one component layer and at most
//! one signature layer, each named by a well-formed sha256 digest (it goes into the blob's
//! URL) with a size that is not negative. Public for the fuzz target `oci_manifest`: these
//! bytes are the registry's.

use super::{
    CONFIG_MEDIA_TYPE, LEGACY_WASM_MEDIA_TYPE, SIGNATURE_MEDIA_TYPE, WASM_MEDIA_TYPE, clip,
};
use oci_client::manifest::{OciDescriptor, OciManifest};

/// The layers of a plugin's manifest, checked.
#[derive(Debug)]
pub struct PluginManifest {
    pub component: OciDescriptor,
    pub signature: Option<OciDescriptor>,
}

/// Reads a manifest's bytes; the error says why it is not a plugin's (clipped: no registry
/// text of unbounded length reaches a message).
pub fn read(bytes: &[u8]) -> Result<PluginManifest, String> {
    let manifest = match serde_json::from_slice::<OciManifest>(bytes) {
        Ok(OciManifest::Image(manifest)) => manifest,
        Ok(OciManifest::ImageIndex(index)) => {
            return Err(format!(
                "it is an image index ({} manifests), not one artifact: a plugin is a single manifest, as `devtools-mcp plugin publish` pushes it",
                index.manifests.len()
            ));
        }
        Err(_) => {
            return Err(
                "its manifest is neither an OCI image manifest nor an index (JSON with config and layers)"
                    .into(),
            );
        }
    };
    if manifest.schema_version != 2 {
        return Err(format!(
            "its manifest's schemaVersion is {}, not 2",
            manifest.schema_version
        ));
    }
    if manifest.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(format!(
            "its config is {}, not a WebAssembly artifact's ({CONFIG_MEDIA_TYPE})",
            clip(&manifest.config.media_type)
        ));
    }
    let mut component = None;
    let mut signature = None;
    for layer in manifest.layers {
        check_descriptor(&layer)?;
        match layer.media_type.as_str() {
            WASM_MEDIA_TYPE | LEGACY_WASM_MEDIA_TYPE if component.is_none() => {
                component = Some(layer)
            }
            SIGNATURE_MEDIA_TYPE if signature.is_none() => signature = Some(layer),
            other => {
                return Err(format!(
                    "it has a layer of type {}; a plugin has one {WASM_MEDIA_TYPE} layer and at most one signature",
                    clip(other)
                ));
            }
        }
    }
    let component = component.ok_or_else(|| format!("it has no {WASM_MEDIA_TYPE} layer"))?;
    Ok(PluginManifest {
        component,
        signature,
    })
}

/// A digest is `sha256:` and 64 lowercase hex digits, nothing else: it becomes a URL's path.
fn check_descriptor(layer: &OciDescriptor) -> Result<(), String> {
    let well_formed = layer.digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    });
    if !well_formed {
        return Err(format!(
            "a layer's digest \"{}\" is not sha256: and 64 hex digits",
            clip(&layer.digest)
        ));
    }
    if layer.size < 0 {
        return Err(format!("a layer's size is negative ({})", layer.size));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(media_type: &str, digest: &str, size: i64) -> serde_json::Value {
        serde_json::json!({ "mediaType": media_type, "digest": digest, "size": size })
    }

    fn manifest(config_type: &str, layers: Vec<serde_json::Value>) -> Vec<u8> {
        let digest = format!("sha256:{}", "0".repeat(64));
        serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": layer(config_type, &digest, 2),
            "layers": layers,
        }))
        .expect("json")
    }

    #[test]
    fn only_a_plugins_manifest_is_read_and_registry_text_is_clipped() {
        let good = format!("sha256:{}", "a1".repeat(32));
        let read_ok = read(&manifest(
            CONFIG_MEDIA_TYPE,
            vec![
                layer(WASM_MEDIA_TYPE, &good, 10),
                layer(SIGNATURE_MEDIA_TYPE, &good, 1),
            ],
        ))
        .expect("a plugin");
        assert_eq!(read_ok.component.digest, good);
        assert!(read_ok.signature.is_some());
        let refused = |bytes: Vec<u8>, says: &str| {
            let error = read(&bytes).expect_err(says);
            assert!(error.contains(says), "{error}");
            assert!(error.len() < 400, "{error}");
        };
        let index = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [layer("application/vnd.oci.image.manifest.v1+json", &good, 5)],
        });
        refused(serde_json::to_vec(&index).expect("json"), "image index");
        refused(b"{\"config\": 1}".to_vec(), "neither an OCI image manifest");
        refused(
            manifest(&"x".repeat(1 << 20), vec![layer(WASM_MEDIA_TYPE, &good, 1)]),
            "not a WebAssembly artifact's",
        );
        refused(
            manifest(CONFIG_MEDIA_TYPE, vec![]),
            "no application/wasm layer",
        );
        for digest in [
            "sha256:../../../v2/other/blobs/x".to_string(),
            format!("sha256:{}", "A".repeat(64)),
            format!("sha512:{}", "a".repeat(128)),
            format!("sha256:{}?x=1", "a".repeat(64)),
        ] {
            refused(
                manifest(CONFIG_MEDIA_TYPE, vec![layer(WASM_MEDIA_TYPE, &digest, 1)]),
                "is not sha256: and 64 hex digits",
            );
        }
        refused(
            manifest(CONFIG_MEDIA_TYPE, vec![layer(WASM_MEDIA_TYPE, &good, -1)]),
            "negative",
        );
        refused(
            manifest(
                CONFIG_MEDIA_TYPE,
                vec![
                    layer(WASM_MEDIA_TYPE, &good, 1),
                    layer(WASM_MEDIA_TYPE, &good, 1),
                ],
            ),
            "one application/wasm layer",
        );
    }
}
