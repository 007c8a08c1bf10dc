//! Compiled functions kept between two compiles of the same plugin file, so that an author's
//! edit recompiles only the functions it changed. A TypeScript or Python tool is a 10-18 MB
//! engine (StarlingMonkey, CPython) around a few lines of the author's code, and an edit
//! changes the engine's data (its pre-initialised heap), not its functions: with Cranelift's
//! incremental cache the compile after an edit takes a fraction of a full one
//! (BENCHMARKS.md, "The edit loop").
//!
//! One pack per plugin file (by its path), holding the functions of its last compile only, so
//! the folder grows with the number of plugin files, not with the number of edits. A pack is
//! native code the server would run, so it is sealed under the compiled-code cache's MAC like
//! every other entry: a planted or altered pack is ignored (and the functions compiled again).

use super::cache::{CompiledCache, read_entry, seal_with, store_atomically, unseal_with};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use wasmtime::CacheStore;

/// Packs start with this, then the 32-byte MAC, then the body.
const MAGIC: &[u8; 8] = b"dtmcpf01";
/// A pack bigger than this is not written (the entry reader refuses more anyway).
const MAX_PACK_BYTES: usize = 256 << 20;

/// The functions of one plugin file's last compile, and those of the compile under way.
#[derive(Debug, Default)]
pub struct FunctionPack {
    /// What the last compile left, read from the pack.
    earlier: HashMap<Vec<u8>, Vec<u8>>,
    /// What this compile took from `earlier` (keys only: the code stays where it is).
    reused: Mutex<HashSet<Vec<u8>>>,
    /// What this compile made. With `reused`, the next pack.
    made: Mutex<HashMap<Vec<u8>, Vec<u8>>>,
}

impl CacheStore for FunctionPack {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let value = self.earlier.get(key)?;
        if let Ok(mut reused) = self.reused.lock() {
            reused.insert(key.to_vec());
        }
        Some(Cow::Borrowed(value))
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        match self.made.lock() {
            Ok(mut made) => {
                made.insert(key.to_vec(), value);
                true
            }
            Err(_) => false,
        }
    }
}

impl FunctionPack {
    /// The pack of `file`'s last compile, or an empty one (no folder, no pack, or one that
    /// does not verify: logged, never used).
    pub fn load(cache: &CompiledCache, file: &Path) -> FunctionPack {
        let Some(path) = pack_path(cache, file) else {
            return FunctionPack::default();
        };
        let sealed = match read_entry(&path) {
            Ok(Some(sealed)) => {
                super::prune::touch(&path);
                sealed
            }
            Ok(None) => return FunctionPack::default(),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot read a compiled-functions pack; compiling every function");
                return FunctionPack::default();
            }
        };
        let earlier = match unseal_with(MAGIC, cache.record_mac(&context(file)), &sealed) {
            Ok(body) => decode(body),
            Err(reason) => Err(reason.unwrap_or("its MAC does not verify")),
        };
        match earlier {
            Ok(earlier) => FunctionPack {
                earlier,
                ..FunctionPack::default()
            },
            Err(reason) => {
                tracing::warn!(path = %path.display(), reason, "refusing a compiled-functions pack; compiling every function");
                FunctionPack::default()
            }
        }
    }

    /// Writes what this compile used as `file`'s pack (the functions of older compiles go).
    pub fn store(&self, cache: &CompiledCache, file: &Path) {
        let Some(path) = pack_path(cache, file) else {
            return;
        };
        let (Ok(reused), Ok(made)) = (self.reused.lock(), self.made.lock()) else {
            return;
        };
        let kept = reused
            .iter()
            .filter_map(|key| Some((key.as_slice(), self.earlier.get(key)?.as_slice())));
        let made = made
            .iter()
            .map(|(key, value)| (key.as_slice(), value.as_slice()));
        let body = encode(kept.chain(made));
        if body.len() > MAX_PACK_BYTES {
            tracing::debug!(path = %path.display(), bytes = body.len(), "compiled-functions pack too large to keep");
            return;
        }
        store_atomically(
            &path,
            &seal_with(MAGIC, cache.record_mac(&context(file)), &body),
        );
    }

    /// How many functions this compile made (for the log).
    pub fn made(&self) -> usize {
        self.made.lock().map(|made| made.len()).unwrap_or(0)
    }

    /// How many functions came from the last compile (for the log and tests).
    pub fn reused(&self) -> usize {
        self.reused.lock().map(|reused| reused.len()).unwrap_or(0)
    }
}

/// The file's pack: named by the sha256 of its absolute path, in the cache's folder.
fn pack_path(cache: &CompiledCache, file: &Path) -> Option<PathBuf> {
    let dir = cache.dir()?;
    let name = hex::encode(&Sha256::digest(context(file))[..16]);
    Some(dir.join(format!("functions-{name}.pack")))
}

/// What a pack's MAC binds it to: the plugin file it was made for (a pack copied to another
/// file's name does not verify). The engine and this build are bound by the record MAC itself.
fn context(file: &Path) -> Vec<u8> {
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let mut context = b"compiled functions of \0".to_vec();
    context.extend_from_slice(absolute.as_os_str().as_encoded_bytes());
    context
}

/// `count, (key length, key, value length, value)*`, lengths as little-endian u32.
fn encode<'a>(entries: impl Iterator<Item = (&'a [u8], &'a [u8])>) -> Vec<u8> {
    let mut count: u32 = 0;
    let mut body = vec![0; 4];
    for (key, value) in entries {
        count += 1;
        body.extend_from_slice(&(key.len() as u32).to_le_bytes());
        body.extend_from_slice(key);
        body.extend_from_slice(&(value.len() as u32).to_le_bytes());
        body.extend_from_slice(value);
    }
    body[..4].copy_from_slice(&count.to_le_bytes());
    body
}

fn decode(mut body: &[u8]) -> Result<HashMap<Vec<u8>, Vec<u8>>, &'static str> {
    fn take<'a>(body: &mut &'a [u8], len: usize) -> Result<&'a [u8], &'static str> {
        if body.len() < len {
            return Err("truncated");
        }
        let (head, rest) = body.split_at(len);
        *body = rest;
        Ok(head)
    }
    fn length(body: &mut &[u8]) -> Result<usize, &'static str> {
        let bytes = take(body, 4)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize)
    }
    let count = length(&mut body)?;
    let mut entries = HashMap::with_capacity(count.min(body.len() / 8));
    for _ in 0..count {
        let key_len = length(&mut body)?;
        let key = take(&mut body, key_len)?.to_vec();
        let value_len = length(&mut body)?;
        let value = take(&mut body, value_len)?.to_vec();
        entries.insert(key, value);
    }
    if !body.is_empty() {
        return Err("trailing bytes");
    }
    Ok(entries)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A cache in a fresh folder, and a plugin file's path beside it.
    fn cache_and_file() -> (tempfile::TempDir, CompiledCache, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let engine = wasmtime::Engine::default();
        let cache = CompiledCache::open(&engine, &dir.path().join("compiled")).unwrap();
        let file = dir.path().join("tool.wasm");
        (dir, cache, file)
    }

    #[test]
    fn a_pack_keeps_what_the_last_compile_used_and_only_for_its_file() {
        let (dir, cache, file) = cache_and_file();
        let first = FunctionPack::load(&cache, &file);
        assert!(first.get(b"f").is_none());
        assert!(first.insert(b"f", b"code of f".to_vec()));
        assert!(first.insert(b"g", b"code of g".to_vec()));
        first.store(&cache, &file);

        let second = FunctionPack::load(&cache, &file);
        assert_eq!(second.get(b"f").as_deref(), Some(&b"code of f"[..]));
        assert_eq!(second.reused(), 1);
        second.store(&cache, &file);
        // `g` was not used by the second compile: the third does not find it.
        let third = FunctionPack::load(&cache, &file);
        assert!(third.get(b"g").is_none());
        assert!(third.get(b"f").is_some());

        // Another file's pack is another name, and a pack renamed to it does not verify.
        let other = dir.path().join("other.wasm");
        assert!(FunctionPack::load(&cache, &other).get(b"f").is_none());
        std::fs::copy(
            pack_path(&cache, &file).unwrap(),
            pack_path(&cache, &other).unwrap(),
        )
        .unwrap();
        assert!(FunctionPack::load(&cache, &other).get(b"f").is_none());
    }

    #[test]
    fn an_altered_pack_is_never_used() {
        let (_dir, cache, file) = cache_and_file();
        let pack = FunctionPack::load(&cache, &file);
        pack.insert(b"f", b"code of f".to_vec());
        pack.store(&cache, &file);
        let path = pack_path(&cache, &file).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(FunctionPack::load(&cache, &file).get(b"f").is_none());
    }

    /// A component around one core module of `functions` functions and a data segment: what
    /// an engine with a pre-initialised heap looks like, small.
    fn component(functions: u32, data: &[u8], edited: u32) -> Vec<u8> {
        use wasm_encoder::{
            CodeSection, DataSection, ExportKind, ExportSection, Function, FunctionSection,
            Instruction, MemorySection, MemoryType, Module, TypeSection, ValType,
        };
        let mut types = TypeSection::new();
        types.ty().function([ValType::I32], [ValType::I32]);
        let mut declared = FunctionSection::new();
        let mut code = CodeSection::new();
        for index in 0..functions {
            declared.function(0);
            let mut body = Function::new([]);
            // Enough work per function that compiling it is not free.
            for step in 0..40 {
                // Each function its own (identical bodies share one cached entry).
                let constant = (index as i32) * 1000 + i32::from(index == edited);
                body.instruction(&Instruction::LocalGet(0));
                body.instruction(&Instruction::I32Const(constant + step));
                body.instruction(&Instruction::I32Mul);
                body.instruction(&Instruction::LocalSet(0));
            }
            body.instruction(&Instruction::LocalGet(0));
            body.instruction(&Instruction::End);
            code.function(&body);
        }
        let mut memories = MemorySection::new();
        memories.memory(MemoryType {
            minimum: 1,
            maximum: None,
            memory64: false,
            shared: false,
            page_size_log2: None,
        });
        let mut exports = ExportSection::new();
        exports.export("f0", ExportKind::Func, 0);
        let mut segments = DataSection::new();
        segments.active(
            0,
            &wasm_encoder::ConstExpr::i32_const(16),
            data.iter().copied(),
        );
        let mut module = Module::new();
        module
            .section(&types)
            .section(&declared)
            .section(&memories)
            .section(&exports)
            .section(&code)
            .section(&segments);
        let mut component = wasm_encoder::Component::new();
        component.section(&wasm_encoder::ModuleSection(&module));
        component.finish()
    }

    #[test]
    fn an_edit_recompiles_only_what_it_changed_and_the_runtime_runs_the_code() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = crate::runtime::Runtime::new().unwrap();
        let cache = CompiledCache::open(runtime.engine(), &dir.path().join("compiled")).unwrap();
        let file = dir.path().join("tool.wasm");
        let compile = |bytes: &[u8]| {
            let pack = Arc::new(FunctionPack::load(&cache, &file));
            let store: Arc<dyn CacheStore> = pack.clone();
            let compiled = runtime
                .compiler(store)
                .unwrap()
                .precompile_component(bytes)
                .unwrap();
            pack.store(&cache, &file);
            (compiled, pack.reused())
        };
        let (_, reused) = compile(&component(200, b"heap before", u32::MAX));
        assert_eq!(reused, 0, "nothing to reuse on a first compile");
        // The heap and one function changed: most of the other 199 come from the pack. Not
        // all: under parallel compilation, wasmtime 48's keys of some unchanged functions
        // differ from one compile to the next (a compiled-alone run reuses all but the edited
        // one; parallel stays faster on a real engine: BENCHMARKS.md, "The edit loop").
        let (compiled, reused) = compile(&component(200, b"heap after the edit", 3));
        assert!(reused > 0, "no function was reused");
        // Code from the compiler engine is code the runtime's engine takes.
        #[allow(unsafe_code)]
        // SAFETY: compiled just above by an engine with the runtime's settings.
        let loaded =
            unsafe { wasmtime::component::Component::deserialize(runtime.engine(), &compiled) };
        assert!(loaded.is_ok(), "{:?}", loaded.err());
    }

    #[test]
    fn a_malformed_body_is_an_error_not_a_panic() {
        assert!(decode(&[]).is_err());
        assert!(decode(&[1, 0, 0, 0, 9, 0, 0, 0]).is_err());
        assert!(decode(&[0, 0, 0, 0, 1]).is_err());
        assert!(decode(&[0xff, 0xff, 0xff, 0xff]).is_err());
        let mut one = HashMap::new();
        one.insert(b"k".to_vec(), b"v".to_vec());
        let encoded = encode(one.iter().map(|(k, v)| (k.as_slice(), v.as_slice())));
        assert_eq!(decode(&encoded).unwrap(), one);
    }
}
