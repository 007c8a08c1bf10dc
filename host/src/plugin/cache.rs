//! On-disk cache of compiled tool code, keyed by the component's content hash and the engine,
//! so that a second start compiles nothing.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

pub struct CompiledCache {
    dir: Option<PathBuf>,
    engine_key: String,
}

impl CompiledCache {
    /// A cache in `dir`; `None` disables caching (every start compiles).
    pub fn new(engine: &Engine, dir: Option<PathBuf>) -> CompiledCache {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let engine_key = format!("{:016x}", hasher.finish());
        let dir = dir.and_then(|dir| match create_private_dir(&dir) {
            Ok(()) => Some(dir),
            Err(error) => {
                tracing::warn!(dir = %dir.display(), %error, "compiled-code cache disabled");
                None
            }
        });
        CompiledCache { dir, engine_key }
    }

    fn entry(&self, bytes: &[u8]) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        let digest = hex::encode(Sha256::digest(bytes));
        Some(dir.join(format!("{digest}-{}.cwasm", self.engine_key)))
    }

    /// The compiled component for these bytes: from the cache, or compiled by `compile` (which
    /// gets the bytes and returns the component encoding) and then stored.
    pub fn load_or_compile(
        &self,
        engine: &Engine,
        bytes: &[u8],
        compile: impl FnOnce(&[u8]) -> wasmtime::Result<Vec<u8>>,
    ) -> wasmtime::Result<(Component, bool)> {
        let entry = self.entry(bytes);
        if let Some(path) = &entry
            && path.is_file()
        {
            // SAFETY: the file was written by `Engine::precompile_component` of an engine with the
            // same compatibility hash (it is in the file name), into a directory only this user
            // can write (created with mode 0700).
            #[allow(unsafe_code)]
            let cached = unsafe { Component::deserialize_file(engine, path) };
            match cached {
                Ok(component) => return Ok((component, true)),
                Err(error) => {
                    tracing::warn!(path = %path.display(), %error, "ignoring a bad cache entry")
                }
            }
        }
        let component_bytes = compile(bytes)?;
        let compiled = engine.precompile_component(&component_bytes)?;
        if let Some(path) = &entry {
            store_atomically(path, &compiled);
        }
        // SAFETY: these bytes were produced just above by this engine.
        #[allow(unsafe_code)]
        let component = unsafe { Component::deserialize(engine, &compiled)? };
        Ok((component, false))
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Write to a temp file and rename, so a concurrent start never reads half an artifact.
fn store_atomically(path: &Path, bytes: &[u8]) {
    let Some(dir) = path.parent() else { return };
    let result = tempfile::NamedTempFile::new_in(dir).and_then(|mut file| {
        std::io::Write::write_all(&mut file, bytes)?;
        file.persist(path).map_err(|error| error.error)?;
        Ok(())
    });
    if let Err(error) = result {
        tracing::warn!(path = %path.display(), %error, "could not store compiled code");
    }
}
