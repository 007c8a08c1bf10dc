//! The built-in tools as build.rs embedded them: their modules and code compiled ahead of time.

// Each entry is an `unsafe` constructor: its code is trusted as native code (see
// `EmbeddedTool::new`), which the build script's output, part of this binary, is.
#![allow(unsafe_code)]

use devtools_mcp::runtime::embedded::{Builtins, Dictionaries, EmbeddedTool, Packed};

include!(concat!(env!("OUT_DIR"), "/embedded_tools.rs"));

/// The engine settings the build script compiled with, to build an engine that differs.
#[cfg(test)]
#[path = "../../host/src/runtime/calling/compile_settings.rs"]
#[allow(dead_code)]
mod compile_settings;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::{BUILTINS, compile_settings};
    use devtools_mcp::runtime::Runtime;
    use devtools_mcp::runtime::embedded::{self, is_embedded, precompiled, sha256_of, tools};
    use std::path::Path;

    fn installed() {
        // The first test to run installs them; the others find them installed.
        embedded::install(&BUILTINS);
        assert!(std::ptr::eq(tools(), BUILTINS.tools()));
    }

    #[test]
    fn every_built_in_tool_is_embedded_with_code_the_runtime_engine_accepts() {
        installed();
        let runtime = Runtime::new().expect("runtime");
        assert!(tools().len() > 20, "{} tools embedded", tools().len());
        assert_eq!(
            compile_settings::engine_fingerprint(runtime.engine()),
            BUILTINS.engine_fingerprint(),
            "the runtime's engine and the build script's differ: share the setting in compile_settings.rs"
        );
        assert!(embedded::runs_on(runtime.engine()));
        for tool in tools() {
            assert!(
                precompiled(runtime.engine(), &tool.wasm().expect("unpacks")).is_some(),
                "{} has no usable precompiled code",
                tool.file_name()
            );
        }
    }

    #[test]
    fn other_bytes_get_no_embedded_code() {
        installed();
        let runtime = Runtime::new().expect("runtime");
        let mut altered = tools()[0].wasm().expect("unpacks").to_vec();
        altered.push(0);
        assert!(precompiled(runtime.engine(), &altered).is_none());
        assert!(precompiled(runtime.engine(), b"\0asm").is_none());
    }

    #[test]
    fn an_engine_configured_otherwise_gets_no_embedded_code() {
        installed();
        // As on a machine whose engine differs from the build's: the loader compiles instead.
        let mut config = wasmtime::Config::new();
        compile_settings::apply(&mut config, compile_settings::Cpu::of_this_machine());
        config.consume_fuel(false);
        let other = wasmtime::Engine::new(&config).expect("engine");
        assert_ne!(
            compile_settings::engine_fingerprint(&other),
            BUILTINS.engine_fingerprint()
        );
        assert!(precompiled(&other, &tools()[0].wasm().expect("unpacks")).is_none());
        assert!(!embedded::runs_on(&other));
    }

    /// On a CPU below the level the build compiled for (x86-64-v2), wasmtime could not run the
    /// embedded code: such an engine gets none, and the tools are compiled there instead.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn an_engine_for_an_older_cpu_gets_no_embedded_code() {
        installed();
        let mut config = wasmtime::Config::new();
        compile_settings::apply(&mut config, compile_settings::Cpu::X86_64);
        let older = wasmtime::Engine::new(&config).expect("engine");
        assert!(precompiled(&older, &tools()[0].wasm().expect("unpacks")).is_none());
        assert!(!embedded::runs_on(&older));
        // The build's level is this machine's, so its code runs here.
        assert_eq!(
            compile_settings::Cpu::of_this_machine(),
            compile_settings::Cpu::X86_64V2
        );
    }

    #[test]
    fn the_recorded_hashes_are_the_modules_hashes() {
        use sha2::{Digest, Sha256};
        installed();
        for tool in tools() {
            let module = tool.wasm().expect("unpacks");
            assert_eq!(tool.sha256(), hex::encode(Sha256::digest(&module)));
            assert!(tool.file_name().ends_with(".wasm"), "{}", tool.file_name());
            assert_eq!(sha256_of(&module), Some(tool.sha256()));
            // A copy of the bytes (at another address) is the same tool.
            let copy: Vec<u8> = module.to_vec();
            drop(module);
            assert_eq!(sha256_of(&copy), Some(tool.sha256()));
        }
        assert_eq!(sha256_of(b"\0asm"), None);
    }

    #[test]
    fn embedded_sources_are_recognised() {
        installed();
        assert!(is_embedded(&tools()[0].source()));
        assert!(!is_embedded(Path::new("/plugins/click.wasm")));
    }
}
