//! On-disk cache of compiled tool code, so that a second start compiles nothing.
//!
//! Compiled code is native code: `Component::deserialize` trusts its bytes completely, so an
//! entry someone else wrote would run with the grants of whichever tool it claims to be. Every
//! entry is therefore authenticated: an HMAC-SHA256, under a per-install key kept outside the
//! cache folder, over the engine's compatibility hash, the wasmtime version, the hash of the
//! component bytes and the compiled artifact. An entry is read into memory, verified, and only
//! then deserialized (never mapped from the file, which could change underneath). A planted,
//! swapped or corrupted entry fails the check, is logged and recompiled: it never runs.
//!
//! The folder itself must be private (owned by the server's user, no group or other write) and
//! must not overlap anything a plugin or tenant can write to (see `placement`).

pub use crate::policy::code_folders::key_dir;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

pub(super) type HmacSha256 = Hmac<Sha256>;

/// The wasmtime version compiled code is bound to (pinned in host/Cargo.toml; a unit test
/// keeps the two equal). The engine's compatibility hash covers it too; naming it in the MAC
/// makes the binding explicit.
pub const WASMTIME_VERSION: &str = "48.0.8";
/// Entries start with this, then the 32-byte MAC, then the artifact.
const MAGIC: &[u8; 8] = b"dtmcpc01";
/// Larger entries are not read (compiled tools are a few MiB).
const MAX_ENTRY_BYTES: u64 = 512 << 20;
const KEY_FILE: &str = "cache.key";
const KEY_BYTES: usize = 32;

/// Why the cache folder or its key cannot be used. Start-up stops on these: a cache that is
/// not private is a way to run native code as the server.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error(
        "The compiled-code cache {dir} is unusable: {reason}. Choose a private folder with --cacheDir (owned by this user, not writable by others, not a symlink)."
    )]
    Unusable { dir: PathBuf, reason: String },
}

/// Compiled code authenticated under a per-install key.
pub struct CompiledCache {
    /// `None`: no folder (compile every time); the key still authenticates in-memory bytes.
    dir: Option<PathBuf>,
    key: [u8; KEY_BYTES],
    /// sha256 of the engine's compatibility hash (configuration, target, wasmtime version).
    engine_digest: [u8; 32],
}

impl CompiledCache {
    /// A cache that never touches the disk: compiled code lives in memory only. For `plugin
    /// check` (which must write nothing) and tests.
    pub fn in_memory(engine: &Engine) -> CompiledCache {
        let mut key = [0u8; KEY_BYTES];
        // A random key: nothing outside this process can produce a valid MAC.
        let _filled = getrandom::fill(&mut key);
        CompiledCache {
            dir: None,
            key,
            engine_digest: engine_digest(engine),
        }
    }

    /// Opens (creating if needed) the private folder `dir` and the key beside it (in
    /// [`key_dir`]); both are checked: owned by this user, no group or other write, not
    /// symlinks.
    pub fn open(engine: &Engine, dir: &Path) -> Result<CompiledCache, CacheError> {
        let unusable = |dir: &Path, reason: String| CacheError::Unusable {
            dir: dir.to_path_buf(),
            reason,
        };
        ensure_private_dir(dir).map_err(|reason| unusable(dir, reason))?;
        let keys = key_dir(dir);
        ensure_private_dir(&keys).map_err(|reason| {
            unusable(dir, format!("its key folder {}: {reason}", keys.display()))
        })?;
        let key = load_or_create_key(&keys.join(KEY_FILE))
            .map_err(|reason| unusable(dir, format!("its key {}: {reason}", keys.display())))?;
        Ok(CompiledCache {
            dir: Some(dir.to_path_buf()),
            key,
            engine_digest: engine_digest(engine),
        })
    }

    /// The MAC binding `artifact` to the component bytes (by hash) and this engine.
    fn mac(&self, component_sha256: &[u8; 32]) -> HmacSha256 {
        // A 32-byte key is always a valid HMAC key.
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
        mac.update(b"devtools-mcp compiled component v1\0");
        mac.update(&self.engine_digest);
        mac.update(WASMTIME_VERSION.as_bytes());
        mac.update(b"\0");
        mac.update(component_sha256);
        mac
    }

    /// Seals `artifact` (compiled from bytes hashing to `component_sha256`) into an entry.
    pub fn seal(&self, component_sha256: &[u8; 32], artifact: &[u8]) -> Vec<u8> {
        seal_with(MAGIC, self.mac(component_sha256), artifact)
    }

    /// Verifies a sealed entry and deserializes it; `Err` says why it was refused. Safe on any
    /// input: nothing reaches `Component::deserialize` unless this key sealed it.
    pub fn open_sealed(
        &self,
        engine: &Engine,
        component_sha256: &[u8; 32],
        entry: &[u8],
    ) -> Result<Component, String> {
        let artifact = unseal_with(MAGIC, self.mac(component_sha256), entry).map_err(|reason| {
            reason.unwrap_or(
                "its MAC does not verify (written by someone else, for other bytes or another engine, or corrupted)",
            )
        })?;
        // SAFETY: the MAC proves these bytes are the unmodified output of
        // `Engine::precompile_component` by an engine with this compatibility hash, sealed
        // by this install with a key only this user can read; they are in memory (no mmap),
        // so they cannot change after the check.
        #[allow(unsafe_code)]
        let component = unsafe { Component::deserialize(engine, artifact) };
        component.map_err(|error| format!("{error:#}"))
    }

    /// A MAC for a record other than compiled code (see `remembered`), bound to `context`
    /// under a domain of its own: a record can never pass as compiled code, nor the reverse.
    pub(super) fn record_mac(&self, context: &[u8]) -> HmacSha256 {
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
        mac.update(b"devtools-mcp record v1\0");
        mac.update(&self.engine_digest);
        mac.update(&(context.len() as u64).to_le_bytes());
        mac.update(context);
        mac
    }

    /// The cache folder, if this cache has one.
    pub(super) fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Whether compiled code for these bytes is on disk (not yet verified): loading them
    /// then takes milliseconds, not the seconds a JavaScript or Python engine's compile takes.
    pub fn has_entry(&self, bytes: &[u8]) -> bool {
        let component_sha256: [u8; 32] = Sha256::digest(bytes).into();
        self.entry(&component_sha256)
            .is_some_and(|path| path.is_file())
    }

    fn entry(&self, component_sha256: &[u8; 32]) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        let name = hex::encode(component_sha256);
        let engine = hex::encode(&self.engine_digest[..8]);
        Some(dir.join(format!("{name}-{engine}.cwasm")))
    }

    /// The compiled component for these bytes: from the cache when its entry verifies, or
    /// compiled by `compile` (which gets the bytes and returns the component encoding), then
    /// stored sealed.
    pub fn load_or_compile(
        &self,
        engine: &Engine,
        bytes: &[u8],
        compile: impl FnOnce(&[u8]) -> wasmtime::Result<Vec<u8>>,
    ) -> wasmtime::Result<(Component, bool)> {
        self.load_or_compile_with(engine, bytes, compile, |component| {
            engine.precompile_component(component)
        })
    }

    /// [`CompiledCache::load_or_compile`] with the compile to native code done by
    /// `precompile`, which must produce code `engine` accepts (the loader's compiler engine:
    /// the same settings, with the per-file function cache of `functions`).
    pub fn load_or_compile_with(
        &self,
        engine: &Engine,
        bytes: &[u8],
        compile: impl FnOnce(&[u8]) -> wasmtime::Result<Vec<u8>>,
        precompile: impl FnOnce(&[u8]) -> wasmtime::Result<Vec<u8>>,
    ) -> wasmtime::Result<(Component, bool)> {
        let component_sha256: [u8; 32] = Sha256::digest(bytes).into();
        let entry = self.entry(&component_sha256);
        if let Some(path) = &entry {
            match read_entry(path) {
                Ok(Some(sealed)) => match self.open_sealed(engine, &component_sha256, &sealed) {
                    Ok(component) => {
                        super::prune::touch(path);
                        return Ok((component, true));
                    }
                    Err(reason) => tracing::warn!(
                        path = %path.display(),
                        %reason,
                        "refusing a compiled-code cache entry; recompiling"
                    ),
                },
                Ok(None) => {}
                Err(error) => tracing::warn!(
                    path = %path.display(),
                    %error,
                    "cannot read a compiled-code cache entry; recompiling"
                ),
            }
        }
        let component_bytes = compile(bytes)?;
        let compiled = precompile(&component_bytes)?;
        if let Some(path) = &entry {
            store_atomically(path, &self.seal(&component_sha256, &compiled));
        }
        if let Some(dir) = &self.dir {
            super::prune::prune(dir, super::prune::MAX_FOLDER_BYTES);
        }
        // SAFETY: these bytes were produced just above by this engine's settings and never
        // left memory.
        #[allow(unsafe_code)]
        let component = unsafe { Component::deserialize(engine, &compiled)? };
        Ok((component, false))
    }
}

/// `magic | tag | body`, the tag being `mac` over `body`: the layout of compiled-code entries
/// and of records (`remembered`), each under a magic and a MAC domain of its own.
pub(super) fn seal_with(magic: &[u8; 8], mut mac: HmacSha256, body: &[u8]) -> Vec<u8> {
    mac.update(body);
    let tag = mac.finalize().into_bytes();
    let mut entry = Vec::with_capacity(magic.len() + tag.len() + body.len());
    entry.extend_from_slice(magic);
    entry.extend_from_slice(&tag);
    entry.extend_from_slice(body);
    entry
}

/// The body of an entry [`seal_with`] made under this magic and MAC. `Err(Some(reason))` for
/// an entry of another kind or a truncated one, `Err(None)` when the MAC does not verify.
pub(super) fn unseal_with<'a>(
    magic: &[u8; 8],
    mut mac: HmacSha256,
    entry: &'a [u8],
) -> Result<&'a [u8], Option<&'static str>> {
    let rest = entry
        .strip_prefix(magic.as_slice())
        .ok_or(Some("not an entry of this kind from this server"))?;
    if rest.len() < 32 {
        return Err(Some("truncated"));
    }
    let (tag, body) = rest.split_at(32);
    mac.update(body);
    mac.verify_slice(tag).map_err(|_| None)?;
    Ok(body)
}

/// sha256 over the engine's compatibility hash, fed through `Hash`.
fn engine_digest(engine: &Engine) -> [u8; 32] {
    struct ShaHasher(Sha256);
    impl std::hash::Hasher for ShaHasher {
        fn finish(&self) -> u64 {
            0
        }
        fn write(&mut self, bytes: &[u8]) {
            self.0.update(bytes);
        }
    }
    let mut hasher = ShaHasher(Sha256::new());
    std::hash::Hash::hash(&engine.precompile_compatibility_hash(), &mut hasher);
    hasher.0.finalize().into()
}

/// Creates `dir` (mode 0700) if missing; checks an existing one: a real folder (not a symlink),
/// owned by this user. Group or other write permission is removed (entries are authenticated,
/// so what others may have written is refused anyway).
fn ensure_private_dir(dir: &Path) -> Result<(), String> {
    match fs::symlink_metadata(dir) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|error| format!("cannot create it: {error}"))?,
        Err(error) => return Err(error.to_string()),
        Ok(_) => {}
    }
    // Opened without following a final symlink: the checks below are on the folder itself.
    let handle = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(dir)
        .map_err(|error| match error.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) => {
                "it is a symlink or not a folder".to_string()
            }
            _ => error.to_string(),
        })?;
    let metadata = handle.metadata().map_err(|error| error.to_string())?;
    let euid = effective_uid();
    if metadata.uid() != euid {
        return Err(format!(
            "it is owned by uid {}, not by this server's uid {euid}",
            metadata.uid()
        ));
    }
    let mode = metadata.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        tracing::warn!(dir = %dir.display(), mode = format!("{mode:o}"), "compiled-code cache folder was writable by others; made private (0700)");
        handle
            .set_permissions(fs::Permissions::from_mode(0o700))
            .map_err(|error| {
                format!("it is writable by others and cannot be made private: {error}")
            })?;
    }
    Ok(())
}

/// The effective uid, read std-only: `/proc/self` belongs to it.
fn effective_uid() -> u32 {
    fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX)
}

/// Reads the key, or creates it atomically (two servers starting together agree on one key).
fn load_or_create_key(path: &Path) -> Result<[u8; KEY_BYTES], String> {
    if let Some(key) = read_key(path)? {
        return Ok(key);
    }
    let mut key = [0u8; KEY_BYTES];
    getrandom::fill(&mut key).map_err(|error| format!("no randomness: {error}"))?;
    let dir = path.parent().ok_or("no parent folder")?;
    let mut staged = tempfile::Builder::new()
        .prefix(".key-")
        .tempfile_in(dir)
        .map_err(|error| error.to_string())?;
    staged
        .as_file()
        .set_permissions(fs::Permissions::from_mode(0o600))
        .map_err(|error| error.to_string())?;
    staged.write_all(&key).map_err(|error| error.to_string())?;
    // `persist_noclobber` links the file in place and fails if another server won the race.
    match staged.persist_noclobber(path) {
        Ok(_) => Ok(key),
        Err(_) => read_key(path)?.ok_or_else(|| "it vanished while being created".to_string()),
    }
}

fn read_key(path: &Path) -> Result<Option<[u8; KEY_BYTES]>, String> {
    let mut file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error.to_string()),
    };
    let metadata = file.metadata().map_err(|error| error.to_string())?;
    if !metadata.is_file() || metadata.uid() != effective_uid() || metadata.mode() & 0o077 != 0 {
        return Err("the key file must be a regular file owned by this user with mode 0600".into());
    }
    let mut key = [0u8; KEY_BYTES];
    file.read_exact(&mut key)
        .map_err(|error| format!("unreadable: {error}"))?;
    Ok(Some(key))
}

/// The entry's bytes, or `None` if there is none. A symlink, a special file or a huge file is
/// an error (never followed, never blocked on).
pub(super) fn read_entry(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    if metadata.len() > MAX_ENTRY_BYTES {
        return Err(io::Error::other("too large"));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    File::take(file, MAX_ENTRY_BYTES).read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// Write to a temp file and rename, so a concurrent start never reads half an artifact.
pub(super) fn store_atomically(path: &Path, bytes: &[u8]) {
    let Some(dir) = path.parent() else { return };
    let result = tempfile::NamedTempFile::new_in(dir).and_then(|mut file| {
        file.write_all(bytes)?;
        file.persist(path).map_err(|error| error.error)?;
        Ok(())
    });
    if let Err(error) = result {
        tracing::warn!(path = %path.display(), %error, "could not store a cache entry");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// The smallest component: compiles in milliseconds.
    fn empty_component() -> Vec<u8> {
        wat_component()
    }

    fn wat_component() -> Vec<u8> {
        // `(component)` in binary form: magic, component version 0x0d, layer 1.
        vec![0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]
    }

    fn engine() -> Engine {
        Engine::default()
    }

    #[test]
    fn the_pinned_wasmtime_version_is_the_one_named_in_the_mac() {
        let manifest = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"));
        assert!(
            manifest.contains(&format!("wasmtime = {{ version = \"={WASMTIME_VERSION}\"")),
            "update WASMTIME_VERSION with the wasmtime pin"
        );
    }

    #[test]
    fn a_planted_entry_is_refused_and_replaced_by_a_sealed_one() {
        let engine = engine();
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("compiled");
        let cache = CompiledCache::open(&engine, &dir).unwrap();
        let bytes = empty_component();
        let sha: [u8; 32] = Sha256::digest(&bytes).into();
        // An attacker's entry: genuine compiled code, but not sealed with our key.
        let planted = engine.precompile_component(&bytes).unwrap();
        let path = cache.entry(&sha).unwrap();
        fs::write(&path, &planted).unwrap();
        let (_, from_cache) = cache
            .load_or_compile(&engine, &bytes, |bytes| Ok(bytes.to_vec()))
            .unwrap();
        assert!(!from_cache, "an unsealed entry must not be used");
        // Sealed with another key (another install) is refused too.
        let other = CompiledCache::in_memory(&engine);
        fs::write(&path, other.seal(&sha, &planted)).unwrap();
        let (_, from_cache) = cache
            .load_or_compile(&engine, &bytes, |bytes| Ok(bytes.to_vec()))
            .unwrap();
        assert!(
            !from_cache,
            "an entry sealed by another key must not be used"
        );
        // What we stored verifies next time.
        let (_, from_cache) = cache
            .load_or_compile(&engine, &bytes, |_| panic!("must come from the cache"))
            .unwrap();
        assert!(from_cache);
        // One flipped byte in the artifact: refused.
        let mut sealed = fs::read(&path).unwrap();
        let last = sealed.len() - 1;
        sealed[last] ^= 1;
        fs::write(&path, &sealed).unwrap();
        let (_, from_cache) = cache
            .load_or_compile(&engine, &bytes, |bytes| Ok(bytes.to_vec()))
            .unwrap();
        assert!(!from_cache);
        // The key is outside the cache folder, private.
        let key = key_dir(&dir).join(KEY_FILE);
        assert_eq!(fs::metadata(&key).unwrap().mode() & 0o777, 0o600);
        assert!(!key.starts_with(&dir));
    }

    #[test]
    fn an_entry_sealed_for_other_bytes_is_refused() {
        let engine = engine();
        let cache = CompiledCache::in_memory(&engine);
        let artifact = engine.precompile_component(&empty_component()).unwrap();
        let sealed = cache.seal(&[1; 32], &artifact);
        assert!(cache.open_sealed(&engine, &[2; 32], &sealed).is_err());
        assert!(cache.open_sealed(&engine, &[1; 32], &sealed).is_ok());
        assert!(cache.open_sealed(&engine, &[1; 32], &artifact).is_err());
        assert!(cache.open_sealed(&engine, &[1; 32], b"dtmcpc01").is_err());
    }

    #[test]
    fn a_symlinked_or_foreign_writable_cache_folder_is_handled() {
        let engine = engine();
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        fs::create_dir(&real).unwrap();
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let error = CompiledCache::open(&engine, &link)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("symlink"), "{error}");
        assert!(error.contains("--cacheDir"), "{error}");
        let open = root.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        CompiledCache::open(&engine, &open).unwrap();
        assert_eq!(fs::metadata(&open).unwrap().mode() & 0o777, 0o700);
    }

    #[test]
    fn a_fifo_entry_is_not_blocked_on() {
        let root = tempfile::tempdir().unwrap();
        let fifo = root.path().join("entry.cwasm");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !status.is_ok_and(|status| status.success()) {
            return;
        }
        assert!(read_entry(&fifo).is_err());
    }
}
