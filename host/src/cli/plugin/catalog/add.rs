//! `plugin index add`: an index entry for a published component, from the component itself
//! (its name, description and the capabilities its code can call for) and from the registry
//! (the digest its tag points at, checked to hold the same bytes).

use super::{Entry, Index, SCHEMA, Version};
use crate::cli::plugin::atomic::write_atomically;
use crate::cli::plugin::check::{self, Signed};
use crate::cli::plugin::oci::{self, PluginRef};
use sha2::{Digest as _, Sha256};
use std::path::Path;

pub async fn add(index_path: &Path, file: &Path, reference: &str) -> Result<(), String> {
    let bytes =
        std::fs::read(file).map_err(|error| format!("Cannot read {}: {error}", file.display()))?;
    let plugin = PluginRef::parse(reference).map_err(|error| error.to_string())?;
    let tag = plugin.reference.tag().ok_or_else(|| {
        format!(
            "{reference} names no tag: write oci://HOST/NAME:VERSION, the version the index lists"
        )
    })?;
    let version = semver::Version::parse(tag)
        .map_err(|error| format!("The tag {tag:?} is not a version (e.g. 1.0.0): {error}"))?;
    let report = check::report_on(file, &bytes, Signed::Beside, None, "{}").await?;
    let artifact = oci::fetch(&plugin)
        .await
        .map_err(|error| error.to_string())?;
    if Sha256::digest(&artifact.component) != Sha256::digest(&bytes) {
        return Err(format!(
            "{} holds other bytes than {}: publish it first (devtools-mcp plugin publish {} {reference}).",
            plugin.display(),
            file.display(),
            file.display()
        ));
    }
    let mut index = match std::fs::read(index_path) {
        Ok(text) => super::parse(&text).map_err(|reason| {
            format!("The index {} is malformed: {reason}.", index_path.display())
        })?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Index {
            schema: SCHEMA.to_string(),
            plugins: Vec::new(),
        },
        Err(error) => return Err(format!("Cannot read {}: {error}", index_path.display())),
    };
    let listed = Version {
        version: version.to_string(),
        reference: plugin.display(),
        digest: artifact.digest.clone(),
    };
    let position = index
        .plugins
        .iter()
        .position(|entry| entry.name == report.tool);
    let entry = match position {
        Some(position) => &mut index.plugins[position],
        None => {
            index.plugins.push(Entry {
                name: report.tool.clone(),
                description: String::new(),
                capabilities: Vec::new(),
                versions: Vec::new(),
            });
            let last = index.plugins.len() - 1;
            &mut index.plugins[last]
        }
    };
    // The entry describes its newest version: what `plugin search` shows.
    entry.description = report.description.clone();
    entry.capabilities = report.capabilities.clone();
    entry
        .versions
        .retain(|listed| listed.version != version.to_string());
    entry.versions.push(listed);
    let text = serde_json::to_string_pretty(&index).map_err(|error| error.to_string())?;
    super::parse(text.as_bytes())
        .map_err(|reason| format!("The entry would make the index malformed: {reason}."))?;
    write_atomically(index_path, format!("{text}\n").as_bytes())?;
    println!(
        "Added {} {version} ({}) to {}.",
        report.tool,
        artifact.digest,
        index_path.display()
    );
    println!(
        "Sign the index again before publishing it: devtools-mcp plugin sign {} --key KEY",
        index_path.display()
    );
    Ok(())
}
