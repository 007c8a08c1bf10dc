//! Builds the built-in tool plugins for wasm32-unknown-unknown and places them next to the
//! binary, in `plugins/`, so that `cargo build`, `cargo run` and `cargo test` need nothing
//! else (the test plugins are built by `tests/fixtures/built-plugins`, for tests only).
//!
//! The built-in tools are also embedded in the binary (`src/runtime/embedded.rs`), each with its
//! code compiled ahead of time by the same wasmtime, configured by the same
//! `src/runtime/compile_settings.rs` as the runtime's engine: an installed binary is
//! self-contained and its first start compiles nothing. Cross builds embed the wasm only (the
//! code would be for the wrong machine); the binary then compiles it once, into its cache.
//!
//! The nested cargo uses its own target directory (beside ours, see `wasm_build.rs`), so it
//! never waits on the lock of the build that runs this script.

#[path = "src/runtime/compile_settings.rs"]
mod compile_settings;

mod wasm_build;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use wasm_build::{Places, WASM_TARGET};

fn main() {
    let workspace = wasm_build::workspace(1);
    // Relative to this package, so a target dir shared by several checkouts (CI reusing a
    // developer's build, worktrees) watches the files of the checkout being built.
    for watched in ["plugins", "wit", "Cargo.lock"] {
        println!("cargo:rerun-if-changed=../{watched}");
    }
    let contract = newest_contract(&workspace.join("wit"));
    // The contract's version, for the loader's import and export names: it lives in one place,
    // the `package` line of the newest wit/since_vX.Y.Z/tool.wit.
    println!(
        "cargo:rustc-env=DEVTOOLS_TOOL_WIT_VERSION={}",
        wit_version(&contract.join("tool.wit"))
    );
    sync_sdk_wit(&contract, &workspace.join("plugins/sdk/wit"));
    let places = Places::from_env();
    let out_dir = &places.out_dir;
    write(
        &out_dir.join("interface_capabilities.rs"),
        interface_capabilities(&contract).as_bytes(),
    );
    write(
        &out_dir.join("contracts.rs"),
        contracts(&workspace.join("wit")).as_bytes(),
    );
    write(
        &out_dir.join("sdk_files.rs"),
        sdk_files(&workspace.join("plugins/sdk")).as_bytes(),
    );
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
/// bytes and (for native builds) its code compiled ahead of time, all `include_bytes!`-ed from
/// copies in OUT_DIR; and the fingerprint of the engine that compiled the code.
fn embed(out_dir: &Path, built: &Path, names: &[String]) {
    let embedded_dir = out_dir.join("embedded");
    if let Err(error) = std::fs::create_dir_all(&embedded_dir) {
        panic!("cannot create {}: {error}", embedded_dir.display());
    }
    let engine = precompiling_engine();
    let fingerprint = engine
        .as_ref()
        .map(compile_settings::engine_fingerprint)
        .unwrap_or_default();
    let mut table = String::new();
    for name in names {
        let file_name = format!("{}.wasm", name.replace('-', "_"));
        let module = read(&built.join(&file_name));
        let wasm_copy = embedded_dir.join(&file_name);
        write(&wasm_copy, &module);
        let precompiled = match &engine {
            Some(engine) => {
                let compiled = precompile(engine, &file_name, &module);
                let path = embedded_dir.join(format!("{file_name}.cwasm"));
                write(&path, &compiled);
                format!("Some(include_bytes!({:?}))", path.display().to_string())
            }
            None => "None".to_string(),
        };
        let sha256: String = <sha2::Sha256 as sha2::Digest>::digest(&module)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        // Names and hashes are held in the table itself, by value: as string literals they
        // would sit beside the modules in `.rodata`, and reading them at every start would
        // fault in (and read around) 63 slices of megabytes of code nothing runs yet.
        assert!(
            file_name.len() <= 64 && file_name.is_ascii(),
            "tool file name too long: {file_name}"
        );
        let padded = format!("{file_name:\0<64}");
        let _ = writeln!(
            table,
            "    EmbeddedTool {{ name: *b{padded:?}, name_len: {}, sha256_hex: *b{sha256:?}, wasm: include_bytes!({:?}), precompiled: {precompiled} }},",
            file_name.len(),
            wasm_copy.display().to_string()
        );
    }
    let generated = format!(
        "/// Fingerprint of the engine the embedded code was compiled with (empty: none was).\n\
         pub(crate) const BUILD_ENGINE_FINGERPRINT: &str = {fingerprint:?};\n\
         /// The built-in tools, in file-name order.\n\
         pub static TOOLS: &[EmbeddedTool] = &[\n{table}];\n"
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
    compile_settings::apply(&mut config);
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

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

/// Writes only when the content changed, so an unchanged tool does not relink the binary.
fn write(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).is_ok_and(|existing| existing == bytes) {
        return;
    }
    if let Err(error) = std::fs::write(path, bytes) {
        panic!("cannot write {}: {error}", path.display());
    }
}

/// The newest contract folder, `wit/since_vX.Y.Z` with the highest version: the one the host
/// implements natively and the SDK carries. Older folders are released contracts, frozen.
fn newest_contract(wit: &Path) -> PathBuf {
    let version = |name: &str| -> Option<Vec<u64>> {
        name.strip_prefix("since_v")?
            .split('.')
            .map(|part| part.parse().ok())
            .collect()
    };
    let newest = std::fs::read_dir(wit)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    Some((version(&name)?, entry.path()))
                })
                .max()
        })
        .ok()
        .flatten();
    match newest {
        Some((_, path)) => path,
        None => panic!("no wit/since_vX.Y.Z folder in {}", wit.display()),
    }
}

/// The Rust SDK's sources, WIT and README, embedded in the binary so that `plugin new` can
/// write them beside a new crate: an installed server needs no checkout and no registry.
fn sdk_files(sdk: &Path) -> String {
    let mut files = Vec::new();
    for folder in ["src", "wit"] {
        let mut names: Vec<String> = std::fs::read_dir(sdk.join(folder))
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|entry| entry.file_name().to_string_lossy().into_owned())
                    .filter(|name| name.ends_with(".rs") || name.ends_with(".wit"))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        files.extend(names.into_iter().map(|name| format!("{folder}/{name}")));
    }
    files.push("README.md".to_string());
    let mut source = String::from(
        "/// The SDK's files, relative to its folder, with their text.\n\
         pub const SDK_FILES: &[(&str, &str)] = &[\n",
    );
    // The text itself, not an `include_str!` of an absolute path: a target dir shared by
    // several checkouts (CI reusing a developer's build) must not point into another one.
    for file in files {
        let text = String::from_utf8(read(&sdk.join(&file)))
            .unwrap_or_else(|error| panic!("{file} in the SDK is not UTF-8: {error}"));
        source.push_str(&format!("    ({file:?}, {text:?}),\n"));
    }
    source.push_str("];\n");
    source
}

/// Every contract version under `wit/` with the interfaces its `plugin` world imports, as Rust
/// source for the loader: the imports a component may have are exactly these.
fn contracts(wit: &Path) -> String {
    let mut versions: Vec<(Vec<u64>, String, Vec<String>)> = Vec::new();
    for entry in std::fs::read_dir(wit)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(version) = name.strip_prefix("since_v") else {
            continue;
        };
        let key: Vec<u64> = version
            .split('.')
            .filter_map(|part| part.parse().ok())
            .collect();
        let text = String::from_utf8(read(&entry.path().join("tool.wit"))).unwrap_or_default();
        let world = text
            .split("world plugin {")
            .nth(1)
            .and_then(|rest| rest.split('}').next())
            .unwrap_or_else(|| panic!("{name}/tool.wit has no `world plugin`"));
        let imports = world
            .lines()
            .filter_map(|line| line.trim().strip_prefix("import "))
            .map(|import| import.trim_end_matches(';').trim().to_string())
            .collect();
        versions.push((key, version.to_string(), imports));
    }
    versions.sort();
    let mut source = String::from(
        "/// Every contract version the server links, oldest first, with the interfaces its\n\
         /// world imports.\n\
         pub const CONTRACTS: &[(&str, &[&str])] = &[\n",
    );
    for (_, version, imports) in versions {
        source.push_str(&format!("    ({version:?}, &{imports:?}),\n"));
    }
    source.push_str("];\n");
    source
}

/// Each interface of the contract with the capability its doc comment names
/// (`/// Capability: pages.read`, or `none`), as Rust source for `policy::capability`: the
/// WIT is the one place that says which capability an interface is.
fn interface_capabilities(contract: &Path) -> String {
    let mut pairs = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(contract)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for file in files
        .iter()
        .filter(|path| path.extension().is_some_and(|ext| ext == "wit"))
    {
        let text = String::from_utf8(read(file)).unwrap_or_default();
        let mut capability: Option<String> = None;
        for line in text.lines().map(str::trim) {
            if let Some(doc) = line.strip_prefix("///") {
                if let Some(name) = doc.trim().strip_prefix("Capability:") {
                    capability = Some(name.trim().to_string());
                }
                continue;
            }
            if let Some(rest) = line.strip_prefix("interface ") {
                let name = rest.trim_end_matches('{').trim();
                match capability.take() {
                    Some(capability) => pairs.push((name.to_string(), capability)),
                    None => panic!(
                        "interface {name} in {} has no `/// Capability: NAME` (or `none`) line",
                        file.display()
                    ),
                }
                continue;
            }
            capability = None;
        }
    }
    let mut source = String::from(
        "/// Each interface of the newest contract and the capability its WIT names.\n\
         pub const INTERFACE_CAPABILITIES: &[(&str, &str)] = &[\n",
    );
    for (interface, capability) in pairs {
        source.push_str(&format!("    ({interface:?}, {capability:?}),\n"));
    }
    source.push_str("];\n");
    source
}

/// `X.Y.Z` of `package devtools:tool@X.Y.Z;`.
fn wit_version(tool_wit: &Path) -> String {
    let text = String::from_utf8(read(tool_wit)).unwrap_or_default();
    text.lines()
        .find_map(|line| {
            let rest = line.trim().strip_prefix("package devtools:tool@")?;
            Some(rest.trim_end_matches(';').trim().to_string())
        })
        .unwrap_or_else(|| {
            panic!(
                "{} has no `package devtools:tool@VERSION;` line",
                tool_wit.display()
            )
        })
}

/// The SDK crate carries its own copy of the contract (a published crate cannot reach
/// `../../wit`): make `plugins/sdk/wit` equal to the newest `wit/since_vX.Y.Z` (only `.wit`
/// files; unchanged files are not rewritten). Commit the copy with the change to `wit/`.
fn sync_sdk_wit(contract: &Path, copy: &Path) {
    let wit_files = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|entry| entry.file_name().to_string_lossy().into_owned())
                    .filter(|name| name.ends_with(".wit"))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let wanted = wit_files(contract);
    if wanted.is_empty() {
        panic!("no .wit files in {}", contract.display());
    }
    if let Err(error) = std::fs::create_dir_all(copy) {
        panic!("cannot create {}: {error}", copy.display());
    }
    for stale in wit_files(copy).iter().filter(|name| !wanted.contains(name)) {
        let _removed = std::fs::remove_file(copy.join(stale));
    }
    for name in &wanted {
        write(&copy.join(name), &read(&contract.join(name)));
    }
}
