//! Fuzzes component loading: whatever bytes sit in a plugin folder (truncated, mutated or
//! made up) go through the loader as at start-up (componentize, compile, link, evaluate the
//! definition under limits, validate it) and through the compiled-code cache's check of a
//! sealed entry. Every outcome must be an error naming the file, never a panic (the loader
//! turns a parser panic into an error; that error is a finding here), a hang or an entry that
//! deserializes without a valid MAC.
//!
//! Core modules are made components as the server does it, by wit-component in a child
//! process of the server's binary (`DEVTOOLS_MCP_BIN`, set by `scripts/fuzz`): wit-component
//! overflows its stack on some hostile modules, which costs that child, never the server.
//!
//! Seeds: `scripts/fuzz` copies the built test fixtures (`test-plugins/*.wasm`) into the
//! scratch corpus, so the fuzzer starts from real components and mutates them.

#![no_main]

use devtools_mcp::policy::plugins::Policy;
use devtools_mcp::runtime::{CompiledCache, Componentizer, Loader, Runtime};
use std::path::Path;
use std::sync::{Arc, OnceLock};

struct Harness {
    tokio: tokio::runtime::Runtime,
    loader: Loader,
    cache: CompiledCache,
    runtime: Runtime,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|error| panic!("tokio: {error}"));
        let runtime = Runtime::new().unwrap_or_else(|error| panic!("wasmtime: {error}"));
        let mut policy = Policy::default();
        // Small budgets keep each input fast; the limits themselves are what is exercised.
        policy.base_limits.fuel = 20_000_000;
        policy.base_limits.wall_clock = std::time::Duration::from_secs(2);
        policy.base_limits.memory_bytes = 32 << 20;
        let loader = Loader::new(
            runtime.clone(),
            CompiledCache::in_memory(runtime.engine()),
            Arc::new(policy),
        )
        // What the server does: wit-component in a child process of the server's binary
        // (it can overflow its stack on a hostile module, which no harness survives).
        .with_componentizer(Componentizer::Isolated {
            exe: std::env::var_os("DEVTOOLS_MCP_BIN")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| {
                    panic!(
                        "DEVTOOLS_MCP_BIN must name the devtools-mcp binary (scripts/fuzz sets it)"
                    )
                }),
        });
        let cache = CompiledCache::in_memory(runtime.engine());
        Harness {
            tokio,
            loader,
            cache,
            runtime,
        }
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let harness = harness();
    let file = Path::new("fuzzed.wasm");
    let inspected = harness
        .tokio
        .block_on(harness.loader.inspect(file, data, "{}"));
    if let Err(error) = inspected {
        let message = error.to_string();
        assert!(
            message.contains("fuzzed.wasm"),
            "a load error must name the file: {message}"
        );
        assert!(
            !message.contains("the parser gave up"),
            "a parser or the compiler panicked: {message}"
        );
    }
    // Bytes that were never sealed by this key must never reach `Component::deserialize`.
    let sealed = harness
        .cache
        .open_sealed(harness.runtime.engine(), &[0; 32], data);
    assert!(sealed.is_err(), "an unsealed entry was accepted");
});
