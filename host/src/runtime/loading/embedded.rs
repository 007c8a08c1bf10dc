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

use crate::runtime::calling::compile_settings;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use wasmtime::Engine;
use wasmtime::component::Component;

/// One built-in tool as the build embedded it.
pub struct EmbeddedTool {
    /// `<crate>.wasm` (see [`EmbeddedTool::file_name`]), NUL-padded, held by value: the table
    /// lives apart from the modules, so reading it at start touches none of their pages.
    name: [u8; 64],
    name_len: usize,
    /// Lowercase hex sha256 of `wasm` (see [`EmbeddedTool::sha256`]), computed by the build:
    /// hashing 63 modules at every start would cost more than the rest of describing them.
    sha256_hex: [u8; 64],
    /// The module the wasm build produced (what `sha256`, pins and `--builtinPlugins` see).
    pub wasm: &'static [u8],
    /// `Engine::precompile_component` output for `wasm`, from the build's engine.
    precompiled: Option<&'static [u8]>,
}

/// What a binary embeds: its built-in tools and the fingerprint of the engine that compiled
/// their code (empty when none did, as in a cross build).
pub struct Builtins {
    engine_fingerprint: &'static str,
    tools: &'static [EmbeddedTool],
}

impl Builtins {
    pub const fn new(engine_fingerprint: &'static str, tools: &'static [EmbeddedTool]) -> Builtins {
        Builtins {
            engine_fingerprint,
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
static NONE: Builtins = Builtins::new("", &[]);

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
    /// `precompiled`, when given, must be `Engine::precompile_component` output for exactly
    /// `wasm`, made with `compile_settings`: [`precompiled`] hands it to
    /// `Component::deserialize`, which trusts it as native code once the fingerprints match.
    /// The build script's bytes, compiled into the same binary, are such output. It must also
    /// lie in the binary's read-only data (`include_bytes!`): its pages are dropped once it is
    /// deserialised (`release_pages`), which is harmless for a file mapping and would zero
    /// memory of the heap.
    #[allow(unsafe_code)]
    pub const unsafe fn new(
        name: [u8; 64],
        name_len: usize,
        sha256_hex: [u8; 64],
        wasm: &'static [u8],
        precompiled: Option<&'static [u8]>,
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
        let wasm: &'static [u8] = Vec::leak(format!("\0asm {file_name}").into_bytes());
        let mut name = [0; 64];
        name[..file_name.len()].copy_from_slice(file_name.as_bytes());
        let mut sha256_hex = [0; 64];
        sha256_hex.copy_from_slice(hex::encode(Sha256::digest(wasm)).as_bytes());
        EmbeddedTool {
            name,
            name_len: file_name.len(),
            sha256_hex,
            wasm,
            precompiled: None,
        }
    }

    /// `<crate>.wasm`, as in the `plugins/` folder the build also writes.
    pub fn file_name(&self) -> &str {
        std::str::from_utf8(&self.name[..self.name_len.min(self.name.len())]).unwrap_or_default()
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

/// The embedded tool whose module is exactly `wasm`: the very bytes of the binary (the usual
/// case, found without reading them), or an equal copy.
fn embedded_as(wasm: &[u8]) -> Option<&'static EmbeddedTool> {
    let same_bytes = |tool: &&EmbeddedTool| std::ptr::eq(tool.wasm, wasm);
    tools().iter().find(same_bytes).or_else(|| {
        tools()
            .iter()
            .find(|tool| tool.wasm.len() == wasm.len() && tool.wasm == wasm)
    })
}

/// The sha256 the build recorded, when `wasm` is an embedded tool's module.
pub fn sha256_of(wasm: &[u8]) -> Option<&'static str> {
    embedded_as(wasm).map(EmbeddedTool::sha256)
}

/// The embedded precompiled code for exactly these module bytes, if the binary carries it and
/// `engine` can run it; `None` means "compile the bytes" (the loader's usual path).
pub fn precompiled(engine: &Engine, wasm: &[u8]) -> Option<Component> {
    let tool = embedded_as(wasm)?;
    let code = tool.precompiled?;
    if !engine_matches_build(engine) {
        return None;
    }
    // SAFETY: `code` came in through `EmbeddedTool::new`, whose contract makes it
    // `Engine::precompile_component` output for exactly these module bytes (compared in full
    // above), with the settings of `compile_settings` (the binary's build script wrote it, and
    // it is part of the binary), and this engine's compatibility fingerprint equals the one
    // the build recorded. wasmtime checks version and settings once more and refuses
    // (with an error, not undefined behaviour) code from an incompatible engine.
    #[allow(unsafe_code)]
    let component = unsafe { Component::deserialize(engine, code) };
    // wasmtime copied the code into memory of its own: the binary's pages that held it are
    // not needed any more (a first start reads every tool's to describe them).
    release_pages(code);
    match component {
        Ok(component) => Some(component),
        Err(error) => {
            tracing::warn!(tool = tool.file_name(), %error, "embedded code refused; compiling the tool");
            None
        }
    }
}

/// Drops the pages of `bytes`, part of the binary's read-only data, from this process's
/// memory: they are clean copies of the file, read again from it if ever touched. Without
/// this, reading the 64 tools' code once (a first start describes them all) would leave
/// about 40 MB of the binary counted in the server's resident memory for its whole life.
#[allow(unsafe_code)]
fn release_pages(bytes: &'static [u8]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = (bytes.as_ptr() as usize).next_multiple_of(PAGE);
        let end = (bytes.as_ptr() as usize + bytes.len()) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range lies inside `bytes`, a `'static` slice of the binary's
            // read-only data (a private, never-written file mapping): MADV_DONTNEED only drops
            // page-table entries, and the next read faults the same bytes in from the file.
            // Nothing is freed or unmapped, so every reference to the slice stays valid.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
            }
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
