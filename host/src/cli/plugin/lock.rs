//! The lock file `plugin install` keeps next to the policy: which artifact (manifest digest)
//! and which bytes (component sha256) each installed plugin is, so `plugin install` puts back
//! exactly what was reviewed, whatever the tag points at today (`--update` follows the tag).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    #[serde(default, rename = "plugin")]
    pub plugins: Vec<Locked>,
}

/// One installed plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locked {
    /// The file in the plugin folder.
    pub file: String,
    /// The reference it was installed from, as written (`oci://HOST/NAME:TAG`).
    pub source: String,
    /// The manifest digest the reference resolved to.
    pub digest: String,
    /// The component's sha256 (hex), as `plugin check` prints it and the policy pins it.
    pub sha256: String,
    /// The base64 public key that signed it, when signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
}

const HEADER: &str = "# Written by `devtools-mcp plugin install`: the artifacts installed, by digest.\n# `devtools-mcp plugin install` installs exactly these again; `--update` follows the tags.\n\n";

/// Where the lock file goes: next to the policy when there is one, else in the plugin folder.
pub fn default_path(policy: Option<&Path>, plugin_dir: &Path) -> PathBuf {
    match policy {
        Some(policy) => policy.with_extension("lock"),
        None => plugin_dir.join("plugins.lock"),
    }
}

impl LockFile {
    /// The lock file at `path`; an absent file is an empty lock.
    pub fn read(path: &Path) -> Result<LockFile, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text)
                .map_err(|error| format!("The lock file {} is invalid: {error}", path.display())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(LockFile::default()),
            Err(error) => Err(format!(
                "Cannot read the lock file {}: {error}",
                path.display()
            )),
        }
    }

    pub fn find(&self, source: &str) -> Option<&Locked> {
        self.plugins.iter().find(|locked| locked.source == source)
    }

    /// The entry of the plugin installed as `file`.
    pub fn file(&self, file: &str) -> Option<&Locked> {
        self.plugins.iter().find(|locked| locked.file == file)
    }

    /// Records `entry`, replacing the entry for the same file.
    pub fn record(&mut self, entry: Locked) {
        self.plugins.retain(|locked| locked.file != entry.file);
        self.plugins.push(entry);
        self.plugins.sort_by(|a, b| a.file.cmp(&b.file));
    }

    /// Writes the lock atomically (a temporary file renamed over it).
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let body = toml::to_string(self).map_err(|error| error.to_string())?;
        super::atomic::write_atomically(path, format!("{HEADER}{body}").as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_round_trips_and_replaces_by_file() {
        let folder = tempfile::tempdir().expect("dir");
        let path = folder.path().join("policy.lock");
        assert!(LockFile::read(&path).expect("absent").plugins.is_empty());
        let mut lock = LockFile::default();
        let entry = |digest: &str| Locked {
            file: "page_title.wasm".into(),
            source: "oci://127.0.0.1:5000/tools/page_title:1".into(),
            digest: digest.into(),
            sha256: "ab".into(),
            signed_by: None,
        };
        lock.record(entry("sha256:1"));
        lock.record(entry("sha256:2"));
        lock.write(&path).expect("write");
        let read = LockFile::read(&path).expect("read");
        assert_eq!(read.plugins, vec![entry("sha256:2")]);
        std::fs::write(&path, "[[plugin]]\nfile = 1\n").expect("break");
        let error = LockFile::read(&path).expect_err("invalid");
        assert!(error.contains("is invalid"), "{error}");
        assert_eq!(
            default_path(Some(Path::new("/etc/d/policy.toml")), Path::new("/p")),
            Path::new("/etc/d/policy.lock")
        );
    }
}
