//! `plugin publish` and `plugin install`: plugins through an OCI registry. Installing checks
//! everything in memory before a byte reaches the plugin folder: the artifact's digests (the
//! lock's, when pinned), the signature against the policy's trusted keys, and that the
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
    /// Install what the lock file pins, not what the tag points at now.
    pub locked: bool,
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
    let wanted: Vec<(PluginRef, Option<Locked>)> = match request.reference {
        Some(reference) => {
            let plugin = PluginRef::parse(reference).map_err(|error| error.to_string())?;
            let pin = match request.locked {
                true => Some(lock.find(&plugin.display()).cloned().ok_or_else(|| {
                    format!(
                        "{} is not in the lock file {}: install it once without --locked.",
                        plugin.display(),
                        lock_path.display()
                    )
                })?),
                false => None,
            };
            vec![(plugin, pin)]
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
                    .map(|plugin| (plugin, Some(locked.clone())))
                    .map_err(|error| format!("{}: {error}", lock_path.display()))
            })
            .collect::<Result<_, _>>()?,
    };
    std::fs::create_dir_all(request.plugin_dir)
        .map_err(|error| format!("Cannot create {}: {error}", request.plugin_dir.display()))?;
    for (plugin, pin) in wanted {
        let installed = install_one(&plugin, pin.as_ref(), &policy, &request).await?;
        lock.record(installed);
        lock.write(&lock_path)?;
    }
    println!("Recorded in {}.", lock_path.display());
    Ok(())
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
