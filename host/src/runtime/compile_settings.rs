//! The engine settings that decide what compiled tool code looks like, in one place: the
//! runtime's engine and the build script (which precompiles the built-in tools into the binary,
//! see `server/build.rs`) both take them from here. wasmtime refuses compiled code from an engine
//! configured differently, so the two must never drift apart.
//!
//! This file is also compiled into the build script (`#[path]`), so it uses only `wasmtime`
//! and `sha2`. Settings that do not change compiled code (stack size, instance allocation)
//! stay with the runtime.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};

/// Applies the settings compiled code depends on: the component model, epoch interruption
/// (wall-clock deadlines) and fuel (CPU budgets) are compiled into every function.
pub fn apply(config: &mut wasmtime::Config) {
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    config.consume_fuel(true);
}

/// A stable fingerprint of everything in `engine` that compiled code must match (wasmtime's
/// `precompile_compatibility_hash`: target, Cranelift and CPU flags, tunables, features,
/// wasmtime version), as lowercase hex SHA-256. Equal fingerprints mean one engine's
/// precompiled code is valid for the other; the build script records the one it compiled with.
pub fn engine_fingerprint(engine: &wasmtime::Engine) -> String {
    let mut hasher = Sha256Hasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher
        .0
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// `std::hash::Hasher` over SHA-256, so the fingerprint is the same in every process built by
/// the same compiler (unlike a keyed hasher).
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// Unused: the fingerprint is the full digest, read from the inner state.
    fn finish(&self) -> u64 {
        0
    }
}
