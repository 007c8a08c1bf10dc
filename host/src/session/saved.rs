//! Where named sessions live (beyond 1.11.0, `--sessionStore DIR`): one file per name, sealed
//! with AES-256-GCM under a key the operator holds (`--sessionKeyFile` or
//! `DEVTOOLS_MCP_SESSION_KEY`). The associated data names the owner (stdio's one user, or a
//! tenant of `serve`) and the session's name, so a file copied to another name or into another
//! tenant's folder, edited, or sealed with another key is refused, never half read.
//!
//! The cipher is `aws-lc-rs`'s `aead`, the same API as `ring::aead` (aws-lc-rs is ring's API
//! over AWS-LC): it is the crypto the server's TLS and JWT checks already build, so sealing adds
//! no crate and no C compile to the build.

use crate::browser::features::sessions::StorageState;
use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The environment variable holding the key when `--sessionKeyFile` is not given.
pub const KEY_VARIABLE: &str = "DEVTOOLS_MCP_SESSION_KEY";
/// The first bytes of every session file: the format, so a future one can be told apart.
const MAGIC: &[u8; 8] = b"DTMCPS1\n";
const SUFFIX: &str = ".session";
/// The longest name, in characters.
const MAX_NAME: usize = 64;
/// A session file is never larger (cookies and local storage of a few dozen sites fit).
const MAX_FILE_BYTES: u64 = 16 << 20;
/// The rule a name follows, as errors say it.
pub const NAME_RULE: &str =
    "1 to 64 characters of A-Z, a-z, 0-9, `_`, `-` and `.`, starting with a letter or a digit";

#[derive(Debug, thiserror::Error)]
pub enum SavedError {
    #[error("{0:?} is not a session name: use {NAME_RULE}.")]
    Name(String),
    #[error("No session is saved under the name {0:?}. Call list_sessions for the saved names.")]
    NotFound(String),
    #[error(
        "The saved session {name:?} was refused: its file was changed, copied from another session name or tenant, or sealed with another key, so nothing of it was used. Save the session again, or start the server with the key it was saved with."
    )]
    Refused { name: String },
    #[error(
        "Cannot {action} {path}: {source}. Check that the --sessionStore folder exists and this user can write it."
    )]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("The saved session {name:?} is larger than {} MiB; it was not read.", MAX_FILE_BYTES >> 20)]
    TooLarge { name: String },
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "--sessionStore needs the key that seals the sessions: give --sessionKeyFile FILE or set {KEY_VARIABLE}, holding 64 hexadecimal digits (make one with `openssl rand -hex 32 > FILE; chmod 600 FILE`)."
    )]
    Missing,
    #[error("Cannot read the session key file {path}: {source}.")]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "The session key file {path} can be read by other users (mode {mode:o}): run `chmod 600 {path}` (the key opens every saved login)."
    )]
    Exposed { path: PathBuf, mode: u32 },
    #[error(
        "The session key ({origin}) is not 64 hexadecimal digits (32 bytes); make one with `openssl rand -hex 32`."
    )]
    Format { origin: String },
}

/// The operator's key.
pub struct SessionKey(LessSafeKey);

impl SessionKey {
    /// The key from `--sessionKeyFile`, else from [`KEY_VARIABLE`].
    pub fn load(file: Option<&Path>) -> Result<SessionKey, KeyError> {
        match file {
            Some(path) => SessionKey::from_file(path),
            None => match std::env::var(KEY_VARIABLE) {
                Ok(text) => SessionKey::parse(&text, KEY_VARIABLE),
                Err(_) => Err(KeyError::Missing),
            },
        }
    }

    fn from_file(path: &Path) -> Result<SessionKey, KeyError> {
        use std::os::unix::fs::MetadataExt;
        let unreadable = |source| KeyError::Unreadable {
            path: path.to_path_buf(),
            source,
        };
        let mode = std::fs::metadata(path).map_err(unreadable)?.mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(KeyError::Exposed {
                path: path.to_path_buf(),
                mode,
            });
        }
        let text = std::fs::read_to_string(path).map_err(unreadable)?;
        SessionKey::parse(&text, &path.display().to_string())
    }

    fn parse(text: &str, origin: &str) -> Result<SessionKey, KeyError> {
        let format = || KeyError::Format {
            origin: origin.to_string(),
        };
        let bytes = hex::decode(text.trim()).map_err(|_| format())?;
        let key = UnboundKey::new(&AES_256_GCM, &bytes).map_err(|_| format())?;
        Ok(SessionKey(LessSafeKey::new(key)))
    }
}

/// Whose sessions a folder holds: what the associated data binds each file to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// The one user of a stdio server.
    Local,
    /// A tenant of `serve`, by its name in the tenants file.
    Tenant(String),
}

impl Owner {
    fn folder(&self) -> PathBuf {
        match self {
            Owner::Local => PathBuf::from("local"),
            // Tenant names are lowercase letters, digits, `-` and `_` (the tenants file's rule).
            Owner::Tenant(name) => Path::new("tenants").join(name),
        }
    }

    fn label(&self) -> String {
        match self {
            Owner::Local => "local".into(),
            Owner::Tenant(name) => format!("tenant:{name}"),
        }
    }
}

/// What a session file holds, sealed.
#[derive(Serialize, Deserialize)]
pub struct Saved {
    /// Seconds since the Unix epoch.
    pub saved_at: u64,
    pub state: StorageState,
}

/// The folder of sessions and the key that seals them.
pub struct SessionStore {
    dir: PathBuf,
    key: SessionKey,
}

impl SessionStore {
    /// The store in `dir` (created, private to this user, if missing).
    pub fn open(dir: PathBuf, key: SessionKey) -> Result<SessionStore, SavedError> {
        create_private_folder(&dir).map_err(|source| SavedError::Io {
            action: "create",
            path: dir.clone(),
            source,
        })?;
        Ok(SessionStore { dir, key })
    }

    /// The sessions of `owner`.
    pub fn of(self: &Arc<SessionStore>, owner: Owner) -> OwnedSessions {
        OwnedSessions {
            store: self.clone(),
            owner,
        }
    }
}

/// One owner's sessions: all a session of the server can reach.
#[derive(Clone)]
pub struct OwnedSessions {
    store: Arc<SessionStore>,
    owner: Owner,
}

/// `name` if it follows [`NAME_RULE`].
pub fn check_name(name: &str) -> Result<&str, SavedError> {
    let valid = !name.is_empty()
        && name.chars().count() <= MAX_NAME
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    match valid {
        true => Ok(name),
        false => Err(SavedError::Name(name.chars().take(80).collect())),
    }
}

impl OwnedSessions {
    fn folder(&self) -> PathBuf {
        self.store.dir.join(self.owner.folder())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.folder().join(format!("{name}{SUFFIX}"))
    }

    fn aad(&self, name: &str) -> Vec<u8> {
        format!(
            "devtools-mcp named session\nowner={}\nname={name}",
            self.owner.label()
        )
        .into_bytes()
    }

    /// Seals `saved` under `name` (replacing the file, atomically).
    pub fn write(&self, name: &str, saved: &Saved) -> Result<(), SavedError> {
        let name = check_name(name)?;
        let folder = self.folder();
        let io = |action, path: &Path| {
            let path = path.to_path_buf();
            move |source| SavedError::Io {
                action,
                path,
                source,
            }
        };
        create_private_folder(&folder).map_err(io("create", &folder))?;
        let mut sealed = serde_json::to_vec(saved).unwrap_or_default();
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|error| SavedError::Io {
            action: "draw a nonce for",
            path: self.path(name),
            source: std::io::Error::other(error.to_string()),
        })?;
        self.store
            .key
            .0
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(self.aad(name)),
                &mut sealed,
            )
            .map_err(|_| SavedError::Refused { name: name.into() })?;
        let mut bytes = Vec::with_capacity(MAGIC.len() + NONCE_LEN + sealed.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&nonce);
        bytes.extend_from_slice(&sealed);
        let mut file = tempfile::NamedTempFile::new_in(&folder).map_err(io("write", &folder))?;
        std::io::Write::write_all(&mut file, &bytes).map_err(io("write", file.path()))?;
        let path = self.path(name);
        file.persist(&path)
            .map_err(|error| io("write", &path)(error.error))?;
        Ok(())
    }

    /// Opens what was saved under `name`: refused whole if anything about it is not as sealed.
    pub fn read(&self, name: &str) -> Result<Saved, SavedError> {
        let name = check_name(name)?;
        let path = self.path(name);
        let size = match std::fs::metadata(&path) {
            Ok(metadata) => metadata.len(),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(SavedError::NotFound(name.into()));
            }
            Err(source) => {
                return Err(SavedError::Io {
                    action: "read",
                    path,
                    source,
                });
            }
        };
        if size > MAX_FILE_BYTES {
            return Err(SavedError::TooLarge { name: name.into() });
        }
        let bytes = std::fs::read(&path).map_err(|source| SavedError::Io {
            action: "read",
            path: path.clone(),
            source,
        })?;
        let refused = || SavedError::Refused { name: name.into() };
        let rest = bytes.strip_prefix(MAGIC.as_slice()).ok_or_else(refused)?;
        if rest.len() < NONCE_LEN {
            return Err(refused());
        }
        let (nonce, sealed) = rest.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| refused())?;
        let mut sealed = sealed.to_vec();
        let opened = self
            .store
            .key
            .0
            .open_in_place(nonce, Aad::from(self.aad(name)), &mut sealed)
            .map_err(|_| refused())?;
        serde_json::from_slice(opened).map_err(|_| refused())
    }

    /// The saved names, sorted (files that are not sessions are left out).
    pub fn names(&self) -> Result<Vec<String>, SavedError> {
        let folder = self.folder();
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(SavedError::Io {
                    action: "list",
                    path: folder,
                    source,
                });
            }
        };
        let mut names: Vec<String> = entries
            .filter_map(|entry| {
                let file = entry.ok()?.file_name().into_string().ok()?;
                let name = file.strip_suffix(SUFFIX)?;
                check_name(name).ok().map(String::from)
            })
            .collect();
        names.sort();
        Ok(names)
    }

    /// Deletes what was saved under `name`.
    pub fn delete(&self, name: &str) -> Result<(), SavedError> {
        let name = check_name(name)?;
        let path = self.path(name);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                Err(SavedError::NotFound(name.into()))
            }
            Err(source) => Err(SavedError::Io {
                action: "delete",
                path,
                source,
            }),
        }
    }
}

fn create_private_folder(folder: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::features::sessions::StorageState;

    const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    const OTHER_KEY: &str = "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn store(dir: &Path, key: &str) -> Arc<SessionStore> {
        let key = SessionKey::parse(key, "test").expect("key");
        Arc::new(SessionStore::open(dir.to_path_buf(), key).expect("store"))
    }

    fn saved(cookie: &str) -> Saved {
        Saved {
            saved_at: 1,
            state: StorageState {
                cookies: vec![serde_json::json!({ "name": "sid", "value": cookie })],
                origins: Vec::new(),
            },
        }
    }

    fn cookie_of(saved: &Saved) -> String {
        saved.state.cookies[0]["value"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    #[test]
    fn a_saved_session_opens_under_its_own_name_owner_and_key_only() {
        let dir = tempfile::tempdir().expect("dir");
        let alice = store(dir.path(), KEY).of(Owner::Tenant("alice".into()));
        alice.write("work", &saved("s3cret")).expect("write");
        assert_eq!(cookie_of(&alice.read("work").expect("read")), "s3cret");
        assert_eq!(alice.names().expect("names"), ["work"]);
        // Sealed: the value is nowhere in the file.
        let file = dir.path().join("tenants/alice/work.session");
        let bytes = std::fs::read(&file).expect("file");
        assert!(!bytes.windows(6).any(|window| window == b"s3cret"));

        // Copied to another name, or into another tenant's folder: refused.
        std::fs::copy(&file, dir.path().join("tenants/alice/home.session")).expect("copy");
        assert!(matches!(
            alice.read("home"),
            Err(SavedError::Refused { .. })
        ));
        let bob = store(dir.path(), KEY).of(Owner::Tenant("bob".into()));
        std::fs::create_dir_all(dir.path().join("tenants/bob")).expect("dir");
        std::fs::copy(&file, dir.path().join("tenants/bob/work.session")).expect("copy");
        assert!(matches!(bob.read("work"), Err(SavedError::Refused { .. })));
        let local = store(dir.path(), KEY).of(Owner::Local);
        assert!(matches!(local.read("work"), Err(SavedError::NotFound(_))));

        // Another key: refused.
        let other = store(dir.path(), OTHER_KEY).of(Owner::Tenant("alice".into()));
        assert!(matches!(
            other.read("work"),
            Err(SavedError::Refused { .. })
        ));

        // One byte changed anywhere: refused.
        for at in [0, MAGIC.len() + 1, bytes.len() / 2, bytes.len() - 1] {
            let mut tampered = bytes.clone();
            tampered[at] ^= 1;
            std::fs::write(&file, &tampered).expect("tamper");
            assert!(
                matches!(alice.read("work"), Err(SavedError::Refused { .. })),
                "byte {at}"
            );
        }
        alice.delete("work").expect("delete");
        assert!(matches!(alice.read("work"), Err(SavedError::NotFound(_))));
        assert!(matches!(alice.delete("work"), Err(SavedError::NotFound(_))));
    }

    #[test]
    fn names_follow_the_rule_and_errors_say_it() {
        for good in ["work", "a", "Shop-2.eu_x", &"n".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "../x",
            ".hidden",
            "a/b",
            "a b",
            "é",
            "-x",
            &"n".repeat(65),
        ] {
            let error = check_name(bad).expect_err(bad).to_string();
            assert!(error.contains(NAME_RULE), "{error}");
        }
    }

    #[test]
    fn a_key_must_be_32_bytes_of_hex_in_a_private_file() {
        assert!(matches!(
            SessionKey::parse("abcd", "x"),
            Err(KeyError::Format { .. })
        ));
        assert!(SessionKey::parse(&format!(" {KEY}\n"), "x").is_ok());
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("key");
        std::fs::write(&file, KEY).expect("write");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let exposed = SessionKey::load(Some(&file)).err().expect("refused");
        assert!(exposed.to_string().contains("chmod 600"), "{exposed}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        assert!(SessionKey::load(Some(&file)).is_ok());
    }
}
