//! `devtools-mcp release sign|verify`: the plugins' ed25519 signatures (`policy::signature`)
//! over any file, so `scripts/package` signs a release's SHA256SUMS and whoever downloads it
//! checks the signature with the binary it ships, no other tool needed.

use crate::config::commands::ReleaseCommand;
use crate::policy::signature::{self, Verdict};
use std::path::{Path, PathBuf};

/// Runs one release subcommand; the error is the whole message for the user.
pub fn run(command: &ReleaseCommand) -> Result<(), String> {
    match command {
        ReleaseCommand::Sign { file, key } => {
            let written = sign(file, key)?;
            println!("Wrote {}.", written.display());
            Ok(())
        }
        ReleaseCommand::Verify {
            file,
            key,
            signature,
        } => {
            let signature = signature
                .clone()
                .unwrap_or_else(|| signature::signature_path(file));
            let key = verify(file, &signature, key)?;
            println!("{} is signed by {key}.", file.display());
            Ok(())
        }
    }
}

/// Signs `file` with the private key in `key_file`; returns the `.sig` file written beside it.
pub fn sign(file: &Path, key_file: &Path) -> Result<PathBuf, String> {
    let bytes = read(file)?;
    let key = std::fs::read_to_string(key_file)
        .map_err(|error| format!("Cannot read the key {}: {error}", key_file.display()))?;
    let signed = signature::sign_as(&bytes, &key, "release")
        .map_err(|error| format!("{}: {error}", key_file.display()))?;
    let path = signature::signature_path(file);
    std::fs::write(&path, signed)
        .map_err(|error| format!("Cannot write {}: {error}", path.display()))?;
    Ok(path)
}

/// Checks that `signature` signs `file` with `key` (base64, or a file holding it); returns the
/// key. Every other outcome is an error that says what is wrong.
pub fn verify(file: &Path, signature: &Path, key: &str) -> Result<String, String> {
    let key = public_key(key)?;
    let bytes = read(file)?;
    let text = std::fs::read_to_string(signature).map_err(|error| {
        format!(
            "Cannot read the signature {}: {error} (give it with --signature)",
            signature.display()
        )
    })?;
    let origin = signature.display().to_string();
    match signature::verify_text(&text, &origin, &bytes, std::slice::from_ref(&key)) {
        Verdict::Trusted { key } => Ok(key),
        Verdict::UnknownKey { key: signer } => Err(format!(
            "{} is signed by {signer}, not by the key given ({key}): do not trust it unless you trust that key.",
            file.display()
        )),
        Verdict::Invalid { reason } => Err(reason.replace(
            "the component",
            &format!("{} (do not use it)", file.display()),
        )),
        Verdict::Unsigned => Err(format!("{} has no signature.", file.display())),
    }
}

/// The public key as given, or read from the file it names; checked before anything else.
fn public_key(given: &str) -> Result<String, String> {
    let path = Path::new(given);
    let text = match path.is_file() {
        true => std::fs::read_to_string(path)
            .map_err(|error| format!("Cannot read the key {}: {error}", path.display()))?,
        false => given.to_string(),
    };
    let text = text.trim().to_string();
    signature::parse_public_key(&text).map_err(|error| {
        format!("--key: {error}; give the public key `plugin keygen` printed, or a file holding it")
    })?;
    Ok(text)
}

fn read(file: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(file).map_err(|error| format!("Cannot read {}: {error}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signed_file_verifies_and_every_alteration_is_refused() {
        let directory = tempfile::tempdir().expect("dir");
        let file = directory.path().join("SHA256SUMS");
        std::fs::write(&file, "abc  devtools-mcp.tar.gz\n").expect("write");
        let (private_key, public_key) = signature::generate_key().expect("key");
        let key_file = directory.path().join("release.key");
        std::fs::write(&key_file, &private_key).expect("write key");
        let written = sign(&file, &key_file).expect("sign");
        assert!(
            std::fs::read_to_string(&written)
                .expect("sig")
                .starts_with("# devtools-mcp release signature\n")
        );

        assert_eq!(verify(&file, &written, &public_key), Ok(public_key.clone()));
        let public_file = directory.path().join("release.pub");
        std::fs::write(&public_file, format!("{public_key}\n")).expect("write pub");
        let from_file = verify(&file, &written, &public_file.to_string_lossy());
        assert_eq!(from_file, Ok(public_key.clone()));

        let (_, other_key) = signature::generate_key().expect("other key");
        let error = verify(&file, &written, &other_key).expect_err("another key");
        assert!(error.contains("not by the key given"), "{error}");

        std::fs::write(&file, "abd  devtools-mcp.tar.gz\n").expect("alter");
        let error = verify(&file, &written, &public_key).expect_err("altered");
        assert!(error.contains("altered after signing"), "{error}");

        let error = verify(&file, &written, "not a key").expect_err("bad key");
        assert!(error.starts_with("--key:"), "{error}");
        let missing = directory.path().join("none.sig");
        let error = verify(&file, &missing, &public_key).expect_err("no signature");
        assert!(error.contains("give it with --signature"), "{error}");
    }
}
