//! Detached ed25519 signatures beside components: `tool.wasm.sig` holds the signer's public key
//! and the signature of the component's bytes.
//!
//! ```toml
//! # devtools-mcp plugin signature
//! key = "base64 ed25519 public key"
//! signature = "base64 signature of the .wasm file"
//! ```

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The signature file of a component.
pub fn signature_path(component: &Path) -> PathBuf {
    let mut name = component.as_os_str().to_owned();
    name.push(".sig");
    PathBuf::from(name)
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureFile {
    key: String,
    signature: String,
}

/// What the signature check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No `.sig` file.
    Unsigned,
    /// Signed by a trusted key.
    Trusted { key: String },
    /// A valid signature by a key the policy does not list.
    UnknownKey { key: String },
    /// A `.sig` file that does not verify: the component or the signature was altered.
    Invalid { reason: String },
}

pub fn parse_public_key(text: &str) -> Result<VerifyingKey, String> {
    let bytes = STANDARD
        .decode(text.trim())
        .map_err(|error| format!("\"{text}\" is not base64: {error}"))?;
    let bytes: [u8; 32] = bytes
        .try_into()
        .map_err(|_| format!("\"{text}\" is not a 32-byte ed25519 public key"))?;
    VerifyingKey::from_bytes(&bytes).map_err(|error| format!("\"{text}\": {error}"))
}

/// Checks the signature beside `component` (whose bytes are `bytes`) against trusted keys.
pub fn verify(component: &Path, bytes: &[u8], trusted_keys: &[String]) -> Verdict {
    let path = signature_path(component);
    match std::fs::read_to_string(&path) {
        Ok(text) => verify_text(&text, &path.display().to_string(), bytes, trusted_keys),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Verdict::Unsigned,
        Err(error) => Verdict::Invalid {
            reason: format!("cannot read {}: {error}", path.display()),
        },
    }
}

/// Checks a signature file's text (named `origin` in messages) against `bytes` and the trusted
/// keys: what `plugin install` does in memory, before anything is written.
pub fn verify_text(text: &str, origin: &str, bytes: &[u8], trusted_keys: &[String]) -> Verdict {
    let invalid = |reason: String| Verdict::Invalid { reason };
    let file: SignatureFile = match toml::from_str(text) {
        Ok(file) => file,
        Err(error) => return invalid(format!("{origin} is malformed: {error}")),
    };
    let key = match parse_public_key(&file.key) {
        Ok(key) => key,
        Err(error) => return invalid(format!("{origin}: {error}")),
    };
    let signature = match STANDARD
        .decode(file.signature.trim())
        .ok()
        .and_then(|bytes| Signature::from_slice(&bytes).ok())
    {
        Some(signature) => signature,
        None => return invalid(format!("{origin}: the signature is not valid")),
    };
    if key.verify(bytes, &signature).is_err() {
        return invalid(format!(
            "the signature in {origin} does not match the component: the file was altered after signing"
        ));
    }
    let key_text = STANDARD.encode(key.as_bytes());
    let trusted = trusted_keys
        .iter()
        .filter_map(|trusted| parse_public_key(trusted).ok())
        .any(|trusted| trusted == key);
    if trusted {
        Verdict::Trusted { key: key_text }
    } else {
        Verdict::UnknownKey { key: key_text }
    }
}

/// A new signing key: the private key file's text and the public key, both base64.
pub fn generate_key() -> Result<(String, String), String> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|error| format!("no randomness available: {error}"))?;
    let key = SigningKey::from_bytes(&seed);
    Ok((
        STANDARD.encode(key.to_bytes()),
        STANDARD.encode(key.verifying_key().as_bytes()),
    ))
}

/// Signs `bytes` with the base64 private key `private_key`; returns the `.sig` file's text.
pub fn sign(bytes: &[u8], private_key: &str) -> Result<String, String> {
    sign_as(bytes, private_key, "plugin")
}

/// `sign`, with `what` in the file's heading (`# devtools-mcp {what} signature`): the format is
/// the same for a component and a release file.
pub fn sign_as(bytes: &[u8], private_key: &str, what: &str) -> Result<String, String> {
    let seed: [u8; 32] = STANDARD
        .decode(private_key.trim())
        .ok()
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or("the key file does not hold a base64 32-byte ed25519 private key")?;
    let key = SigningKey::from_bytes(&seed);
    let file = SignatureFile {
        key: STANDARD.encode(key.verifying_key().as_bytes()),
        signature: STANDARD.encode(key.sign(bytes).to_bytes()),
    };
    let body = toml::to_string(&file).map_err(|error| error.to_string())?;
    Ok(format!("# devtools-mcp {what} signature\n{body}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_verify_and_detect_tampering_and_unknown_keys() {
        let directory = tempfile::tempdir().expect("dir");
        let component = directory.path().join("tool.wasm");
        let bytes = b"\0asm component bytes".to_vec();
        std::fs::write(&component, &bytes).expect("write");
        assert_eq!(verify(&component, &bytes, &[]), Verdict::Unsigned);

        let (private_key, public_key) = generate_key().expect("key");
        let signature = sign(&bytes, &private_key).expect("sign");
        std::fs::write(signature_path(&component), signature).expect("write sig");
        assert_eq!(
            verify(&component, &bytes, std::slice::from_ref(&public_key)),
            Verdict::Trusted {
                key: public_key.clone()
            }
        );
        assert_eq!(
            verify(&component, &bytes, &[]),
            Verdict::UnknownKey { key: public_key }
        );
        let mut tampered = bytes.clone();
        tampered[5] ^= 1;
        assert!(matches!(
            verify(&component, &tampered, &[]),
            Verdict::Invalid { .. }
        ));
    }
}
