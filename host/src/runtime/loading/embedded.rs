//! The built-in tools, embedded in the binary by `server/build.rs`: each tool's module bytes
//! and, for a native build, its code compiled ahead of time by the runtime's own engine settings
//! (`compile_settings`). An installed binary needs no `plugins/` folder beside it, and its first
//! start compiles nothing. The binary hands its table to [`install`] before anything loads a
//! tool; a program that installs none (the library's tests, the fuzz targets) has no built-in
//! tools embedded, and loads them from a `plugins/` folder if at all.
//!
//! Precompiled code is as trusted as the binary that carries it (it is part of it), but it is
//! used only when this process's engine has the fingerprint the build recorded (same wasmtime,
//! same settings, same CPU features). Otherwise (say, the binary was copied to a machine with
//! other CPU features) the embedded wasm is compiled like any plugin's, through the cache.

mod packed;

pub use packed::{Dictionaries, Packed};

use crate::runtime::calling::compile_settings;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use wasmtime::Engine;
use wasmtime::component::Component;

/// One built-in tool as the build embedded it.
pub struct EmbeddedTool {
    /// `<crate>.wasm` (see [`EmbeddedTool::file_name`]), NUL-padded, held by value: the table
    /// lives apart from the packed tools, so reading it at start touches none of their pages.
    name: [u8; 64],
    name_len: usize,
    /// Lowercase hex sha256 of the module (see [`EmbeddedTool::sha256`]), computed by the
    /// build: hashing 63 modules at every start would cost more than the rest of describing
    /// them.
    sha256_hex: [u8; 64],
    /// The module the wasm build produced (what `sha256`, pins and `--builtinPlugins` see).
    wasm: Packed,
    /// `Engine::precompile_component` output for the module, from the build's engine.
    precompiled: Option<Packed>,
}

/// What a binary embeds: its built-in tools, the dictionaries they were packed against, and
/// the fingerprint of the engine that compiled their code (empty when none did, as in a cross
/// build).
pub struct Builtins {
    engine_fingerprint: &'static str,
    dictionaries: Dictionaries,
    tools: &'static [EmbeddedTool],
}

impl Builtins {
    pub const fn new(
        engine_fingerprint: &'static str,
        dictionaries: Dictionaries,
        tools: &'static [EmbeddedTool],
    ) -> Builtins {
        Builtins {
            engine_fingerprint,
            dictionaries,
            tools,
        }
    }

    /// The fingerprint of the engine that compiled the tools' code (empty: none did).
    pub fn engine_fingerprint(&self) -> &'static str {
        self.engine_fingerprint
    }

    pub fn tools(&self) -> &'static [EmbeddedTool] {
        self.tools
    }
}

/// No tools: what a program that installed none sees.
static NONE: Builtins = Builtins::new(
    "",
    Dictionaries::new(Packed::stored(&[]), Packed::stored(&[])),
    &[],
);

static INSTALLED: OnceLock<&'static Builtins> = OnceLock::new();

/// Makes `builtins` this process's embedded tools. Called once, by the binary, before any tool
/// is loaded; `false` (and no change) when a table was installed already.
pub fn install(builtins: &'static Builtins) -> bool {
    INSTALLED.set(builtins).is_ok()
}

fn installed() -> &'static Builtins {
    INSTALLED.get().copied().unwrap_or(&NONE)
}

/// The folder name embedded tools are reported under, e.g. `<built-in>/click.wasm`.
pub const SOURCE_DIR: &str = "<built-in>";

impl EmbeddedTool {
    /// One tool of the table `server/build.rs` generates.
    ///
    /// # Safety
    ///
    /// `precompiled`, when given, must unpack to `Engine::precompile_component` output for
    /// exactly the module `wasm` unpacks to, made with `compile_settings`: [`precompiled`]
    /// hands it to `Component::deserialize`, which trusts it as native code once the
    /// fingerprints match. The build script's bytes, compiled into the same binary, are such
    /// output.
    #[allow(unsafe_code)]
    pub const unsafe fn new(
        name: [u8; 64],
        name_len: usize,
        sha256_hex: [u8; 64],
        wasm: Packed,
        precompiled: Option<Packed>,
    ) -> EmbeddedTool {
        EmbeddedTool {
            name,
            name_len,
            sha256_hex,
            wasm,
            precompiled,
        }
    }

    /// A tool with made-up bytes and no code, for the library's own tests (it embeds none).
    #[cfg(test)]
    pub(crate) fn stand_in(file_name: &str) -> EmbeddedTool {
        use sha2::{Digest, Sha256};
        let module: &'static [u8] = Vec::leak(format!("\0asm {file_name}").into_bytes());
        let mut name = [0; 64];
        name[..file_name.len()].copy_from_slice(file_name.as_bytes());
        let mut sha256_hex = [0; 64];
        sha256_hex.copy_from_slice(hex::encode(Sha256::digest(module)).as_bytes());
        EmbeddedTool {
            name,
            name_len: file_name.len(),
            sha256_hex,
            wasm: Packed::stored(module),
            precompiled: None,
        }
    }

    /// `<crate>.wasm`, as in the `plugins/` folder the build also writes.
    pub fn file_name(&self) -> &str {
        std::str::from_utf8(&self.name[..self.name_len.min(self.name.len())]).unwrap_or_default()
    }

    /// The module, unpacked. While the bytes returned live, [`carries`], [`sha256_of`] and
    /// [`precompiled`] know them as this tool by their address, without reading them.
    pub fn wasm(&'static self) -> Result<Arc<[u8]>, String> {
        let module: Arc<[u8]> = self.wasm.unpack(installed().dictionaries.wasm()?)?.into();
        let mut handed_out = HANDED_OUT.lock().unwrap_or_else(PoisonError::into_inner);
        handed_out.retain(|(_, bytes)| bytes.strong_count() > 0);
        handed_out.push((self, Arc::downgrade(&module)));
        Ok(module)
    }

    /// Lowercase hex sha256 of [`EmbeddedTool::wasm`].
    pub fn sha256(&self) -> &str {
        std::str::from_utf8(&self.sha256_hex).unwrap_or_default()
    }

    /// How errors and the tool folders name this tool.
    pub fn source(&self) -> PathBuf {
        Path::new(SOURCE_DIR).join(self.file_name())
    }
}

/// Every embedded built-in tool (none when the build skipped the plugin build, or when the
/// program installed none).
pub fn tools() -> &'static [EmbeddedTool] {
    installed().tools
}

/// Whether a tool's source names an embedded tool.
pub fn is_embedded(source: &Path) -> bool {
    source.parent() == Some(Path::new(SOURCE_DIR))
}

/// Whether `wasm` is exactly the code of a tool embedded in this binary: authentic by
/// construction, so no signature file (looked up beside a path that names no real folder) is
/// read for it.
pub fn carries(wasm: &[u8]) -> bool {
    embedded_as(wasm).is_some()
}

/// The modules [`EmbeddedTool::wasm`] handed out and still alive, by tool: a module is known
/// by its address while it lives (a freed one never matches, so an address reused by other
/// bytes is not taken for it).
static HANDED_OUT: Mutex<Vec<HandedOut>> = Mutex::new(Vec::new());

/// A module handed out: its tool, and the bytes while they live.
type HandedOut = (&'static EmbeddedTool, Weak<[u8]>);

/// The embedded tool whose module is exactly `wasm`: bytes [`EmbeddedTool::wasm`] handed out
/// (the usual case, found without reading them), or an equal copy.
fn embedded_as(wasm: &[u8]) -> Option<&'static EmbeddedTool> {
    let handed_out = HANDED_OUT.lock().unwrap_or_else(PoisonError::into_inner);
    let known = handed_out.iter().find_map(|(tool, bytes)| {
        let bytes = bytes.upgrade()?;
        std::ptr::eq(&*bytes, wasm).then_some(*tool)
    });
    drop(handed_out);
    known.or_else(|| {
        tools().iter().find(|tool| {
            tool.wasm.unpacked_len() == wasm.len()
                && tool
                    .wasm
                    .unpack(installed().dictionaries.wasm().unwrap_or_default())
                    .is_ok_and(|module| module == wasm)
        })
    })
}

/// The sha256 the build recorded, when `wasm` is an embedded tool's module.
pub fn sha256_of(wasm: &[u8]) -> Option<&'static str> {
    embedded_as(wasm).map(EmbeddedTool::sha256)
}

/// The embedded precompiled code for exactly these module bytes, if the binary carries it and
/// `engine` can run it; `None` means "compile the bytes" (the loader's usual path).
pub fn precompiled(engine: &Engine, wasm: &[u8]) -> Option<Component> {
    code_of(engine, embedded_as(wasm)?)
}

/// `tool`'s precompiled code, if the binary carries it and `engine` can run it.
pub fn code_of(engine: &Engine, tool: &EmbeddedTool) -> Option<Component> {
    let packed = tool.precompiled.as_ref()?;
    if !engine_matches_build(engine) {
        return None;
    }
    let code = match installed()
        .dictionaries
        .code()
        .and_then(|dictionary| packed.unpack(dictionary))
    {
        Ok(code) => code,
        Err(error) => {
            tracing::warn!(tool = tool.file_name(), %error, "embedded code unreadable; compiling the tool");
            return None;
        }
    };
    // SAFETY: `code` is what `EmbeddedTool::new`'s `precompiled` unpacks to, which its
    // contract makes `Engine::precompile_component` output for exactly this tool's module,
    // with the settings of `compile_settings` (the binary's build script wrote it, and it is
    // part of the binary; zstd frames carry a checksum of what they unpack to), and this
    // engine's compatibility fingerprint equals the one the build recorded. wasmtime checks
    // version and settings once more and refuses (with an error, not undefined behaviour)
    // code from an incompatible engine.
    #[allow(unsafe_code)]
    let component = unsafe { Component::deserialize(engine, &code) };
    match component {
        Ok(component) => Some(component),
        Err(error) => {
            tracing::warn!(tool = tool.file_name(), %error, "embedded code refused; compiling the tool");
            None
        }
    }
}

/// Whether this binary carries precompiled code for every embedded tool that `engine` runs.
pub fn runs_on(engine: &Engine) -> bool {
    !tools().is_empty()
        && tools().iter().all(|tool| tool.precompiled.is_some())
        && engine_matches_build(engine)
}

/// Whether `engine` accepts the build's code (a few microseconds: it hashes the settings).
fn engine_matches_build(engine: &Engine) -> bool {
    let recorded = installed().engine_fingerprint;
    let matches = !recorded.is_empty() && compile_settings::engine_fingerprint(engine) == recorded;
    if !matches {
        tracing::debug!("this engine differs from the build's; compiling the built-in tool");
    }
    matches
}
