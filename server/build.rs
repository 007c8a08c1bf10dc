//! Builds the built-in tool plugins for wasm32-unknown-unknown and places them next to the
//! binary, in `plugins/`, so that `cargo build`, `cargo run` and `cargo test` need nothing
//! else (the test plugins are built by `tests/fixtures/built-plugins`, for tests only).
//!
//! The built-in tools are also embedded in the binary (`src/builtins.rs`, handed to the host's
//! `runtime::embedded`), each with its code compiled ahead of time by the same wasmtime,
//! configured by the same `host/src/runtime/calling/compile_settings.rs` as the runtime's engine: an
//! installed binary is self-contained and its first start compiles nothing. Cross builds embed
//! the wasm only (the code would be for the wrong machine); the binary then compiles it once,
//! into its cache.
//!
//! This is the only slow build script, and the host library does not wait for it: cargo runs
//! it while the library compiles. The nested cargo uses its own target directory (beside ours,
//! see `wasm_build.rs`), so it never waits on the lock of the build that runs this script.

#[path = "../host/src/runtime/calling/compile_settings.rs"]
#[allow(dead_code)] // the runtime's half (`Cpu::from_env`) is not the build's
mod compile_settings;

#[path = "../host/build_common.rs"]
mod build_common;
mod packing;
mod wasm_build;

use build_common::{names_ending, newest_contract, read, write};
use std::fmt::Write as _;
use std::path::Path;
use wasm_build::{Places, WASM_TARGET};

fn main() {
    let workspace = wasm_build::workspace(1);
    // Relative to this package, so a target dir shared by several checkouts (CI reusing a
    // developer's build, worktrees) watches the files of the checkout being built. The root
    // manifest holds the `plugin` profile the tools are built with.
    for watched in ["plugins", "wit", "Cargo.lock", "Cargo.toml"] {
        println!("cargo:rerun-if-changed=../{watched}");
    }
    // The tools are built against the SDK's copy of the contract: bring it in step first.
    let contract = newest_contract(&workspace.join("wit"));
    sync_sdk_wit(&contract, &workspace.join("plugins/sdk/wit"));
    let places = Places::from_env();
    let out_dir = &places.out_dir;
    if wasm_build::skipped() {
        embed(out_dir, Path::new(""), &[]);
        return;
    }
    // The test plugins are built by `tests/fixtures/built-plugins`, a dev-dependency.
    let builtin = wasm_build::crates_in(&workspace.join("plugins"));
    wasm_build::build(&workspace, &places.wasm_target_dir, WASM_TARGET, &builtin);
    let built = places.built(WASM_TARGET);
    embed(out_dir, &built, &builtin);
    wasm_build::copy_modules(&built, &builtin, &places.profile_dir.join("plugins"));
}

/// Writes `embedded_tools.rs` into OUT_DIR: for each built-in tool its file name, its module
/// and (for native builds) its code compiled ahead of time, both packed (`packing.rs`) into
/// files in OUT_DIR that the table `include_bytes!`; the two dictionaries; and the fingerprint
/// of the engine that compiled the code. `src/builtins.rs` includes it.
fn embed(out_dir: &Path, built: &Path, names: &[String]) {
    let embedded_dir = out_dir.join("embedded");
    // Earlier builds' files (unpacked copies, tools since removed) would only take disk.
    let _ = std::fs::remove_dir_all(&embedded_dir);
    if let Err(error) = std::fs::create_dir_all(&embedded_dir) {
        panic!("cannot create {}: {error}", embedded_dir.display());
    }
    let engine = precompiling_engine();
    let fingerprint = engine
        .as_ref()
        .map(compile_settings::engine_fingerprint)
        .unwrap_or_default();
    let file_names: Vec<String> = names
        .iter()
        .map(|name| format!("{}.wasm", name.replace('-', "_")))
        .collect();
    let modules: Vec<Vec<u8>> = file_names
        .iter()
        .map(|file_name| read(&built.join(file_name)))
        .collect();
    let compiled: Option<Vec<Vec<u8>>> = engine.as_ref().map(|engine| {
        file_names
            .iter()
            .zip(&modules)
            .map(|(file_name, module)| precompile(engine, file_name, module))
            .collect()
    });
    let packed_modules = packing::pack(&modules.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let packed_code = compiled
        .as_ref()
        .map(|code| packing::pack(&code.iter().map(Vec::as_slice).collect::<Vec<_>>()));
    let mut table = String::new();
    for (index, (file_name, module)) in file_names.iter().zip(&modules).enumerate() {
        let wasm = packing::expression(
            &embedded_dir.join(format!("{file_name}.zst")),
            &packed_modules.frames[index],
            module.len(),
        );
        let precompiled = match (&packed_code, &compiled) {
            (Some(packed), Some(code)) => format!(
                "Some({})",
                packing::expression(
                    &embedded_dir.join(format!("{file_name}.cwasm.zst")),
                    &packed.frames[index],
                    code[index].len(),
                )
            ),
            _ => "None".to_string(),
        };
        let sha256: String = <sha2::Sha256 as sha2::Digest>::digest(module)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        // Names and hashes are held in the table itself, by value: as string literals they
        // would sit beside the packed tools in `.rodata`, and reading them at every start would
        // fault in (and read around) the tools' pages.
        assert!(
            file_name.len() <= 64 && file_name.is_ascii(),
            "tool file name too long: {file_name}"
        );
        let padded = format!("{file_name:\0<64}");
        let _ = writeln!(
            table,
            "    unsafe {{ EmbeddedTool::new(*b{padded:?}, {}, *b{sha256:?}, {wasm}, {precompiled}) }},",
            file_name.len(),
        );
    }
    // SAFETY (of `Packed::zstd`): its bytes are `include_bytes!`-ed, the binary's read-only data.
    let dictionary = |kind: &str, packed: Option<&packing::Packed>| match packed {
        Some(packed) => format!(
            "unsafe {{ {} }}",
            packing::expression(
                &embedded_dir.join(format!("dictionary.{kind}.zst")),
                &packed.dictionary,
                packed.dictionary_len,
            )
        ),
        None => "Packed::stored(&[])".to_string(),
    };
    let dictionaries = format!(
        "Dictionaries::new({}, {})",
        dictionary("wasm", Some(&packed_modules)),
        dictionary("cwasm", packed_code.as_ref())
    );
    // SAFETY (of each `EmbeddedTool::new`): the code is `precompile_component` output of the
    // engine whose fingerprint is recorded, for exactly the module beside it.
    let generated = format!(
        "/// The built-in tools, in file-name order.\n\
         static TOOLS: [EmbeddedTool; {count}] = [\n{table}];\n\
         /// The tools, the dictionaries they were packed with, and the fingerprint of the engine\n\
         /// that compiled their code (empty: none did).\n\
         pub static BUILTINS: Builtins = Builtins::new({fingerprint:?}, {dictionaries}, &TOOLS);\n",
        count = names.len()
    );
    write(&out_dir.join("embedded_tools.rs"), generated.as_bytes());
}

/// The engine the runtime will use, for a native build; `None` when cross-compiling (code
/// compiled here would be for this machine, not the target).
fn precompiling_engine() -> Option<wasmtime::Engine> {
    if wasm_build::env("TARGET") != wasm_build::env("HOST") {
        println!(
            "cargo:warning=cross build: the built-in tools are embedded as wasm and compiled at first start"
        );
        return None;
    }
    let mut config = wasmtime::Config::new();
    // This machine's CPU level, as the runtime picks it by default (`Cpu::from_env`).
    compile_settings::apply(&mut config, compile_settings::Cpu::of_this_machine());
    match wasmtime::Engine::new(&config) {
        Ok(engine) => Some(engine),
        Err(error) => panic!("cannot create the wasmtime engine to precompile the tools: {error}"),
    }
}

/// A core module (as the wasm target emits it) made a component, then compiled: the same
/// steps the loader takes at run time.
fn precompile(engine: &wasmtime::Engine, file_name: &str, module: &[u8]) -> Vec<u8> {
    let component = if wasmparser::Parser::is_component(module) {
        module.to_vec()
    } else {
        wit_component::ComponentEncoder::default()
            .module(module)
            .and_then(|encoder| encoder.validate(true).encode())
            .unwrap_or_else(|error| panic!("cannot make {file_name} a component: {error:#}"))
    };
    engine
        .precompile_component(&component)
        .unwrap_or_else(|error| panic!("cannot compile {file_name}: {error:#}"))
}

/// The SDK crate carries its own copy of the contract (a published crate cannot reach
/// `../../wit`): make `plugins/sdk/wit` equal to the newest `wit/since_vX.Y.Z` (only `.wit`
/// files; unchanged files are not rewritten). Commit the copy with the change to `wit/`.
fn sync_sdk_wit(contract: &Path, copy: &Path) {
    let wanted = names_ending(contract, ".wit");
    if wanted.is_empty() {
        panic!("no .wit files in {}", contract.display());
    }
    if let Err(error) = std::fs::create_dir_all(copy) {
        panic!("cannot create {}: {error}", copy.display());
    }
    for stale in names_ending(copy, ".wit")
        .iter()
        .filter(|name| !wanted.contains(name))
    {
        let _removed = std::fs::remove_file(copy.join(stale));
    }
    for name in &wanted {
        write(&copy.join(name), &read(&contract.join(name)));
    }
}
