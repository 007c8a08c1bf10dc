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
/// (wall-clock deadlines) and fuel (CPU budgets) are compiled into every function, and the CPU
/// the code is compiled for (see [`Cpu`]).
pub fn apply(config: &mut wasmtime::Config, cpu: Cpu) {
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    config.consume_fuel(true);
    cpu.apply(config);
}

/// The CPU features compiled code may use. Left to wasmtime, an engine uses every feature of
/// the machine it runs on, so code precompiled on the build machine (an AVX-512 server) is
/// refused on an older laptop and all built-in tools compile at its first start. On x86_64 the
/// code is compiled for a named level instead, so the build's code is the code every machine
/// of that level runs. The tools are glue (JSON in, host calls out): the newer instructions
/// buy them nothing measurable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cpu {
    /// x86-64-v2 (SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT, CMPXCHG16B): every x86_64 CPU since
    /// about 2009, and the floor RHEL 9 itself requires. The default where the host has it.
    X86_64V2,
    /// The first x86_64 (SSE2): older CPUs. Built-in tools precompiled for v2 are refused
    /// here and compiled at first start (then cached).
    X86_64,
    /// Whatever this machine has (wasmtime's default; every non-x86_64 target).
    Native,
}

/// The x86-64-v2 features, by Cranelift's names.
const X86_64_V2: [&str; 6] = [
    "has_sse3",
    "has_ssse3",
    "has_sse41",
    "has_sse42",
    "has_popcnt",
    "has_cmpxchg16b",
];

/// This build's own target (code for another would not run here).
const X86_64_TARGET: &str = if cfg!(target_os = "macos") {
    "x86_64-apple-darwin"
} else if cfg!(target_os = "windows") {
    "x86_64-pc-windows-msvc"
} else if cfg!(target_env = "musl") {
    "x86_64-unknown-linux-musl"
} else {
    "x86_64-unknown-linux-gnu"
};

/// The environment variable that names the level (`x86-64-v2`, `x86-64` or `native`), to
/// measure an older machine on a newer one or to trade the precompiled tools for native code.
pub const CPU_ENV: &str = "DEVTOOLS_MCP_CPU";

impl Cpu {
    /// The highest named level this machine runs: what the build script compiles for, and
    /// what the runtime uses unless [`CPU_ENV`] says otherwise.
    pub fn of_this_machine() -> Cpu {
        #[cfg(target_arch = "x86_64")]
        {
            let v2 = std::is_x86_feature_detected!("sse3")
                && std::is_x86_feature_detected!("ssse3")
                && std::is_x86_feature_detected!("sse4.1")
                && std::is_x86_feature_detected!("sse4.2")
                && std::is_x86_feature_detected!("popcnt")
                && std::is_x86_feature_detected!("cmpxchg16b");
            if v2 { Cpu::X86_64V2 } else { Cpu::X86_64 }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Cpu::Native
        }
    }

    /// The level [`CPU_ENV`] names, or this machine's. A name this build does not know is an
    /// error that lists the names (a setting is never ignored); so is a level above this
    /// machine's, which could not run.
    pub fn from_env() -> Result<Cpu, String> {
        Cpu::named(
            std::env::var_os(CPU_ENV)
                .as_deref()
                .map(|v| v.to_string_lossy())
                .as_deref(),
        )
    }

    /// The level `value` names (`None`: this machine's).
    fn named(value: Option<&str>) -> Result<Cpu, String> {
        let Some(value) = value else {
            return Ok(Cpu::of_this_machine());
        };
        let wanted = match value {
            "x86-64-v2" if cfg!(target_arch = "x86_64") => Cpu::X86_64V2,
            "x86-64" if cfg!(target_arch = "x86_64") => Cpu::X86_64,
            "native" => Cpu::Native,
            other => {
                let names = if cfg!(target_arch = "x86_64") {
                    "x86-64-v2, x86-64 or native"
                } else {
                    "native"
                };
                return Err(format!(
                    "{CPU_ENV}={other:?} is not a CPU level this build knows: use {names}, or unset it"
                ));
            }
        };
        if wanted == Cpu::X86_64V2 && Cpu::of_this_machine() != Cpu::X86_64V2 {
            return Err(format!(
                "{CPU_ENV}=x86-64-v2, but this CPU lacks an x86-64-v2 feature: use x86-64, or unset it"
            ));
        }
        Ok(wanted)
    }

    fn apply(self, config: &mut wasmtime::Config) {
        let features: &[&str] = match self {
            Cpu::Native => return,
            Cpu::X86_64 => &[],
            Cpu::X86_64V2 => &X86_64_V2,
        };
        // An explicit target turns off wasmtime's detection of this machine's features.
        config
            .target(X86_64_TARGET)
            .expect("wasmtime knows its own x86_64 target");
        for feature in features {
            // SAFETY: wasmtime checks every enabled feature against the running CPU before it
            // runs code compiled with it (`check_compatible_with_isa_flag`), and `from_env`
            // refuses a level above this machine's.
            #[allow(unsafe_code)]
            unsafe {
                config.cranelift_flag_enable(feature);
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprint(cpu: Cpu) -> String {
        let mut config = wasmtime::Config::new();
        apply(&mut config, cpu);
        engine_fingerprint(&wasmtime::Engine::new(&config).expect("engine"))
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn code_is_compiled_for_a_named_level_not_for_this_machine() {
        // The level's code is the same whoever computes it; this machine's own is another.
        assert_eq!(fingerprint(Cpu::X86_64V2), fingerprint(Cpu::X86_64V2));
        assert_ne!(fingerprint(Cpu::X86_64V2), fingerprint(Cpu::X86_64));
        if std::is_x86_feature_detected!("avx2") {
            assert_ne!(fingerprint(Cpu::X86_64V2), fingerprint(Cpu::Native));
        }
        // Every machine this test runs on since 2009 has v2; the build compiles for it.
        assert_eq!(Cpu::of_this_machine(), Cpu::X86_64V2);
    }

    #[test]
    fn an_unknown_level_is_refused_with_the_names_there_are() {
        let message = Cpu::named(Some("x86-64-v4")).expect_err("refused");
        assert!(
            message.contains("native") && message.contains("unset it"),
            "{message}"
        );
        assert_eq!(Cpu::named(None), Ok(Cpu::of_this_machine()));
        assert_eq!(Cpu::named(Some("native")), Ok(Cpu::Native));
    }
}
