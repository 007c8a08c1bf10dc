//! The built-in tools, embedded in the binary by `host/build.rs`: each tool's module bytes and,
//! for a native build, its code compiled ahead of time by the runtime's own engine settings
//! (`compile_settings`). An installed binary needs no `plugins/` folder beside it, and its first
//! start compiles nothing.
//!
//! Precompiled code is as trusted as the binary that carries it (it is part of it), but it is
//! used only when this process's engine has the fingerprint the build recorded (same wasmtime,
//! same settings, same CPU features). Otherwise (say, the binary was copied to a machine with
//! other CPU features) the embedded wasm is compiled like any plugin's, through the cache.

use super::compile_settings;
use std::path::{Path, PathBuf};
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

include!(concat!(env!("OUT_DIR"), "/embedded_tools.rs"));

/// The folder name embedded tools are reported under, e.g. `<built-in>/click.wasm`.
pub const SOURCE_DIR: &str = "<built-in>";

impl EmbeddedTool {
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

/// Every embedded built-in tool (none when the build skipped the plugin build).
pub fn tools() -> &'static [EmbeddedTool] {
    TOOLS
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
    TOOLS.iter().find(same_bytes).or_else(|| {
        TOOLS
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
    // SAFETY: `code` is part of this binary: `Engine::precompile_component` output written by
    // the build script for exactly these module bytes (compared in full above), with the
    // settings of `compile_settings`, and this engine's compatibility fingerprint equals the
    // one the build recorded. wasmtime checks version and settings once more and refuses
    // (with an error, not undefined behaviour) code from an incompatible engine.
    #[allow(unsafe_code)]
    let component = unsafe { Component::deserialize(engine, code) };
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
    !TOOLS.is_empty()
        && TOOLS.iter().all(|tool| tool.precompiled.is_some())
        && engine_matches_build(engine)
}

/// Whether `engine` accepts the build's code (a few microseconds: it hashes the settings).
fn engine_matches_build(engine: &Engine) -> bool {
    let matches = !BUILD_ENGINE_FINGERPRINT.is_empty()
        && compile_settings::engine_fingerprint(engine) == BUILD_ENGINE_FINGERPRINT;
    if !matches {
        tracing::debug!("this engine differs from the build's; compiling the built-in tool");
    }
    matches
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::runtime::Runtime;

    #[test]
    fn every_built_in_tool_is_embedded_with_code_the_runtime_engine_accepts() {
        let runtime = Runtime::new().expect("runtime");
        assert!(tools().len() > 20, "{} tools embedded", tools().len());
        assert_eq!(
            compile_settings::engine_fingerprint(runtime.engine()),
            BUILD_ENGINE_FINGERPRINT,
            "the runtime's engine and the build script's differ: share the setting in compile_settings.rs"
        );
        for tool in tools() {
            assert!(
                precompiled(runtime.engine(), tool.wasm).is_some(),
                "{} has no usable precompiled code",
                tool.file_name()
            );
        }
    }

    #[test]
    fn other_bytes_get_no_embedded_code() {
        let runtime = Runtime::new().expect("runtime");
        let mut altered = tools()[0].wasm.to_vec();
        altered.push(0);
        assert!(precompiled(runtime.engine(), &altered).is_none());
        assert!(precompiled(runtime.engine(), b"\0asm").is_none());
    }

    #[test]
    fn an_engine_configured_otherwise_gets_no_embedded_code() {
        // As on a machine whose engine differs from the build's: the loader compiles instead.
        let mut config = wasmtime::Config::new();
        compile_settings::apply(&mut config);
        config.consume_fuel(false);
        let other = Engine::new(&config).expect("engine");
        assert_ne!(
            compile_settings::engine_fingerprint(&other),
            BUILD_ENGINE_FINGERPRINT
        );
        assert!(precompiled(&other, tools()[0].wasm).is_none());
    }

    #[test]
    fn the_recorded_hashes_are_the_modules_hashes() {
        use sha2::{Digest, Sha256};
        for tool in tools() {
            assert_eq!(tool.sha256(), hex::encode(Sha256::digest(tool.wasm)));
            assert!(tool.file_name().ends_with(".wasm"), "{}", tool.file_name());
            assert_eq!(sha256_of(tool.wasm), Some(tool.sha256()));
            // A copy of the bytes (at another address) is the same tool.
            let copy: Vec<u8> = tool.wasm.to_vec();
            assert_eq!(sha256_of(&copy), Some(tool.sha256()));
        }
        assert_eq!(sha256_of(b"\0asm"), None);
    }

    #[test]
    fn embedded_sources_are_recognised() {
        assert!(is_embedded(&tools()[0].source()));
        assert!(!is_embedded(Path::new("/plugins/click.wasm")));
    }
}
