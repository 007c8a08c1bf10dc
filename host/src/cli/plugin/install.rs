//! `plugin publish` and `plugin install`: plugins through an OCI registry. Installing checks
//! everything in memory before a byte reaches the plugin folder: the artifact's digests (the
//! lock's, unless `--update` follows the tag), the signature against the policy's trusted keys, and that the
//! component loads as a tool. Grants still come from the policy alone: the artifact cannot ask.

use super::atomic::write_atomically;
use super::check::{self, Refusal, Signed};
use super::lock::{self, LockFile, Locked};
use super::oci::{self, PluginRef};
use crate::policy::plugins::Policy;
use crate::policy::signature::{self, Verdict};
use sha2::{Digest as _, Sha256};
use std::path::Path;

/// What `plugin install` was asked.
pub struct Install<'a> {
    /// `oci://...`; `None`: every plugin of the lock file.
    pub reference: Option<&'a str>,
    pub plugin_dir: &'a Path,
    pub policy: Option<&'a Path>,
    pub lock: Option<&'a Path>,
    /// Refuse a reference the lock file does not pin.
    pub locked: bool,
    /// Follow the tag instead of installing what the lock file pins.
    pub update: bool,
    /// Accept an unsigned artifact, or one signed by a key the policy does not list.
    pub allow_untrusted: bool,
}

pub async fn publish(file: &Path, reference: &str, key: Option<&Path>) -> Result<(), String> {
    let plugin = PluginRef::parse(reference).map_err(|error| error.to_string())?;
    let bytes =
        std::fs::read(file).map_err(|error| format!("Cannot read {}: {error}", file.display()))?;
    if !wasmparser::Parser::is_component(&bytes) && !wasmparser::Parser::is_core_wasm(&bytes) {
        return Err(format!(
            "{} is not a WebAssembly file (build it with `devtools-mcp plugin build`).",
            file.display()
        ));
    }
    let signature = match key {
        Some(key_file) => {
            let key = std::fs::read_to_string(key_file)
                .map_err(|error| format!("Cannot read the key {}: {error}", key_file.display()))?;
            Some(
                signature::sign(&bytes, &key)
                    .map_err(|error| format!("{}: {error}", key_file.display()))?,
            )
        }
        None => match std::fs::read_to_string(signature::signature_path(file)) {
            Ok(text) => Some(text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(error) => {
                return Err(format!(
                    "Cannot read the signature of {}: {error}",
                    file.display()
                ));
            }
        },
    };
    if let Some(text) = &signature
        && let Verdict::Invalid { reason } =
            signature::verify_text(text, "the signature", &bytes, &[])
    {
        return Err(format!("Not publishing {}: {reason}.", file.display()));
    }
    let report =
        check::report_on(file, &bytes, Signed::Text(signature.as_deref()), None, "{}").await?;
    let signed = signature.is_some();
    let digest = oci::publish(&plugin, bytes, signature, &report.tool, &report.imports)
        .await
        .map_err(|error| error.to_string())?;
    println!(
        "Published {} as {} ({digest}).",
        file.display(),
        plugin.display()
    );
    if !signed {
        println!(
            "It is not signed: operators who require signatures will refuse it (sign with `devtools-mcp plugin sign` or --key)."
        );
    }
    Ok(())
}

pub async fn install(request: Install<'_>) -> Result<(), String> {
    let policy = match request.policy {
        Some(path) => Policy::load(path, Default::default()).map_err(|error| error.to_string())?,
        None => Policy::default(),
    };
    let lock_path = request
        .lock
        .map(Path::to_path_buf)
        .unwrap_or_else(|| lock::default_path(request.policy, request.plugin_dir));
    let mut lock = LockFile::read(&lock_path)?;
    let wanted: Vec<PluginRef> = match request.reference {
        Some(reference) => {
            let plugin = PluginRef::parse(reference).map_err(|error| error.to_string())?;
            if request.locked && lock.find(&plugin.display()).is_none() {
                return Err(format!(
                    "{} is not in the lock file {}: install it once without --locked.",
                    plugin.display(),
                    lock_path.display()
                ));
            }
            vec![plugin]
        }
        None if lock.plugins.is_empty() => {
            return Err(format!(
                "Nothing to install: give a reference (oci://HOST/NAME:TAG), or a lock file with plugins ({} has none).",
                lock_path.display()
            ));
        }
        None => lock
            .plugins
            .iter()
            .map(|locked| {
                PluginRef::parse(&locked.source)
                    .map_err(|error| format!("{}: {error}", lock_path.display()))
            })
            .collect::<Result<_, _>>()?,
    };
    std::fs::create_dir_all(request.plugin_dir)
        .map_err(|error| format!("Cannot create {}: {error}", request.plugin_dir.display()))?;
    for plugin in wanted {
        // As cargo's lock: what the lock pins for this reference is installed, whatever the
        // tag points at now, until --update says to follow the tag.
        let pin = match request.update {
            true => None,
            false => lock.find(&plugin.display()).cloned(),
        };
        let previous = lock.file(&format!("{}.wasm", plugin.name())).cloned();
        let installed = install_one(&plugin, pin.as_ref(), &policy, &request).await?;
        match &pin {
            Some(locked) => note_moved_tag(&plugin, locked, &lock_path).await,
            None => {
                if let Some(old) = previous {
                    println!("{}", changed(&old, &installed));
                }
            }
        }
        lock.record(installed);
        lock.write(&lock_path)?;
    }
    println!("Recorded in {}.", lock_path.display());
    Ok(())
}

/// After installing what the lock pins: whether the tag now points elsewhere, and how to
/// follow it. Only a note: the pinned install already succeeded.
async fn note_moved_tag(plugin: &PluginRef, locked: &Locked, lock_path: &Path) {
    if plugin.reference.digest().is_some() {
        return;
    }
    match oci::resolve(plugin).await {
        Ok(digest) if digest != locked.digest => println!(
            "Note: the tag {} now points at {digest}; installed {}, the digest {} pins. To install the new one and record it: `devtools-mcp plugin install {} --update`.",
            plugin.display(),
            locked.digest,
            lock_path.display(),
            plugin.display()
        ),
        Ok(_) => {}
        Err(error) => println!(
            "Note: installed {}, the digest {} pins; where the tag points now is unknown: {error}.",
            locked.digest,
            lock_path.display()
        ),
    }
}

/// What an install changed in the lock for one plugin file, said for the operator.
fn changed(old: &Locked, new: &Locked) -> String {
    if old == new {
        return format!("{} is unchanged ({}).", new.source, new.digest);
    }
    let source = match old.source == new.source {
        true => new.source.clone(),
        false => format!("{} (was {})", new.source, old.source),
    };
    let signer = |signed_by: &Option<String>| match signed_by {
        Some(key) => format!("signed by {key}"),
        None => "unsigned".to_string(),
    };
    let signed = match old.signed_by == new.signed_by {
        true => String::new(),
        false => format!(
            "; now {} (was {})",
            signer(&new.signed_by),
            signer(&old.signed_by)
        ),
    };
    format!(
        "Updated {}: {source}: {} -> {} (component sha256 {} -> {}){signed}.",
        new.file, old.digest, new.digest, old.sha256, new.sha256
    )
}

async fn install_one(
    plugin: &PluginRef,
    pin: Option<&Locked>,
    policy: &Policy,
    request: &Install<'_>,
) -> Result<Locked, String> {
    let source = match pin {
        Some(locked) => plugin.pinned(&locked.digest),
        None => plugin.clone(),
    };
    let artifact = oci::fetch(&source)
        .await
        .map_err(|error| error.to_string())?;
    let sha256 = hex::encode(Sha256::digest(&artifact.component));
    if let Some(locked) = pin
        && locked.sha256 != sha256
    {
        return Err(format!(
            "{}: the component's sha256 is {sha256}, the lock file pins {}: refused, nothing was installed.",
            source.display(),
            locked.sha256
        ));
    }
    let refuse = |reason: String| {
        format!(
            "Not installing {}: {reason}. Nothing was written.",
            plugin.display()
        )
    };
    let verdict = match &artifact.signature {
        None => Verdict::Unsigned,
        Some(text) => signature::verify_text(
            text,
            "the artifact's signature",
            &artifact.component,
            &policy.trusted_keys,
        ),
    };
    let policy_line = "[signing] trusted_keys in the policy";
    let signed_by = match verdict {
        Verdict::Trusted { key } => Some(key),
        Verdict::Invalid { reason } => return Err(refuse(reason)),
        Verdict::Unsigned if policy.require_signed => {
            return Err(refuse(
                "it is not signed and the policy requires signatures".into(),
            ));
        }
        Verdict::UnknownKey { key } if policy.require_signed => {
            return Err(refuse(format!(
                "it is signed by {key}, a key the policy does not trust (add it to {policy_line} if you trust its publisher)"
            )));
        }
        Verdict::Unsigned if !request.allow_untrusted => {
            return Err(refuse(
                "it is not signed; pass --allow-untrusted to install it anyway".into(),
            ));
        }
        Verdict::UnknownKey { key } if !request.allow_untrusted => {
            return Err(refuse(format!(
                "it is signed by {key}, a key the policy does not trust (add it to {policy_line} if you trust its publisher, or pass --allow-untrusted)"
            )));
        }
        Verdict::Unsigned | Verdict::UnknownKey { .. } => None,
    };
    let file_name = format!("{}.wasm", plugin.name());
    let target = request.plugin_dir.join(&file_name);
    let report = check::report_on(
        &target,
        &artifact.component,
        Signed::Text(artifact.signature.as_deref()),
        request.policy,
        "{}",
    )
    .await
    .map_err(refuse)?;
    if let Err(Refusal::Policy(reason)) = &report.verdict {
        return Err(refuse(format!("the policy refuses it: {reason}")));
    }
    // The signature first: a server watching the folder reloads on the component's change and
    // then finds the signature that goes with it.
    let signature_file = signature::signature_path(&target);
    match &artifact.signature {
        Some(text) => write_atomically(&signature_file, text.as_bytes())?,
        None => match std::fs::remove_file(&signature_file) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!(
                    "Cannot remove {}: {error}",
                    signature_file.display()
                ));
            }
            _ => {}
        },
    }
    write_atomically(&target, &artifact.component)?;
    println!(
        "Installed {} ({}) as {}.\n",
        plugin.display(),
        artifact.digest,
        target.display()
    );
    print!("{}", report.text);
    Ok(Locked {
        file: file_name,
        source: plugin.display(),
        digest: artifact.digest,
        sha256,
        signed_by,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(digest: &str, sha256: &str, signed_by: Option<&str>) -> Locked {
        Locked {
            file: "page_title.wasm".into(),
            source: "oci://127.0.0.1:5000/tools/page_title:1".into(),
            digest: digest.into(),
            sha256: sha256.into(),
            signed_by: signed_by.map(String::from),
        }
    }

    #[test]
    fn an_update_says_what_changed() {
        let old = entry("sha256:1", "aa", Some("KEY"));
        let same = changed(&old, &old);
        assert_eq!(
            same,
            "oci://127.0.0.1:5000/tools/page_title:1 is unchanged (sha256:1)."
        );
        let moved = changed(&old, &entry("sha256:2", "bb", None));
        assert_eq!(
            moved,
            "Updated page_title.wasm: oci://127.0.0.1:5000/tools/page_title:1: sha256:1 -> sha256:2 (component sha256 aa -> bb); now unsigned (was signed by KEY)."
        );
        let mut retagged = entry("sha256:2", "bb", Some("KEY"));
        retagged.source = "oci://127.0.0.1:5000/tools/page_title:2".into();
        let text = changed(&old, &retagged);
        assert!(
            text.contains("page_title:2 (was oci://127.0.0.1:5000/tools/page_title:1)"),
            "{text}"
        );
    }
}
