//! Micro benchmarks of the host around a tool that does nothing (`tests/fixtures/plugins/noop`):
//! what a call costs besides the browser work it asks for.
//!
//! `cargo bench -p devtools-mcp-bench --bench host_overhead` (needs Chromium for `pipeline_call`).

use criterion::{Criterion, criterion_group, criterion_main};
use devtools_mcp::browser::BrowserOptions;
use devtools_mcp::pipeline::arguments::{input_validation_message, validation_message};
use devtools_mcp::pipeline::{CurrentToolSet, Pipeline, ToolSet};
use devtools_mcp::policy::capability::Grants;
use devtools_mcp::policy::limits::Limits;
use devtools_mcp::policy::plugins::{Origin, Policy};
use devtools_mcp::runtime::{CallState, CompiledCache, Componentizer, LoadedTool, Loader, Runtime};
use devtools_mcp::sandbox::Sandbox;
use devtools_mcp::session::Session;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::Arc;

/// `test-plugins/` beside the server binary of this profile (`cargo bench` builds it).
fn fixture(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(PathBuf::from)
        .unwrap_or_default();
    profile_dir
        .join("test-plugins")
        .join(format!("{name}.wasm"))
}

fn load(runtime: &tokio::runtime::Runtime, loader: &Loader, name: &str) -> LoadedTool {
    runtime
        .block_on(loader.load_file(&fixture(name), Origin::Community, "{}"))
        .unwrap_or_else(|error| panic!("load {name}: {error}"))
}

fn benches(criterion: &mut Criterion) {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|error| panic!("tokio: {error}"));
    let wasm = Runtime::new().unwrap_or_else(|error| panic!("wasmtime: {error}"));
    let cache = tempfile::tempdir().unwrap_or_else(|error| panic!("cache dir: {error}"));
    let compiled = CompiledCache::open(wasm.engine(), &cache.path().join("compiled"))
        .unwrap_or_else(|error| panic!("cache: {error}"));
    let loader = Loader::new(wasm.clone(), compiled, Arc::new(Policy::default()))
        .with_componentizer(Componentizer::InProcess);
    let noop = load(&tokio, &loader, "noop");

    // Compiled code from the on-disk cache, linked, and its definition evaluated.
    criterion.bench_function("load_from_cache", |bench| {
        bench
            .to_async(&tokio)
            .iter(|| loader.load_file(&noop.source, Origin::Community, "{}"))
    });

    // A fresh instance and a handler that returns at once: the wasm side of every call.
    let grants = Arc::new(Grants::all("noop"));
    criterion.bench_function("instantiate_and_call", |bench| {
        bench.to_async(&tokio).iter(|| async {
            let state = CallState::new(None, grants.clone(), Limits::default());
            let (_state, outcome) = wasm
                .handle(noop.code.linked().expect("linked"), state, "{}", None)
                .await;
            assert!(matches!(outcome, Ok(Ok(()))));
        })
    });

    // The checks before the lock, on the largest built-in schema shape.
    let schema: Map<String, Value> = serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "format": { "type": "string", "enum": ["png", "jpeg", "webp"] },
            "quality": { "type": "number", "minimum": 0, "maximum": 100 },
            "uid": { "type": "string" },
            "fullPage": { "type": "boolean" },
            "filePath": { "type": "string" }
        }
    }))
    .unwrap_or_default();
    let validator = jsonschema::validator_for(&Value::Object(schema.clone()))
        .unwrap_or_else(|error| panic!("schema: {error}"));
    let arguments: Map<String, Value> =
        serde_json::from_value(json!({ "format": "jpeg", "quality": 80, "fullPage": true }))
            .unwrap_or_default();
    criterion.bench_function("argument_checks", |bench| {
        bench.iter(|| {
            assert!(input_validation_message("take_screenshot", &arguments, &schema).is_none());
            assert!(validation_message("take_screenshot", &validator, &arguments).is_none());
        })
    });

    // The whole pipeline for the no-op tool, browser already up: gating, checks, lock, browser
    // liveness, routing, instance, handler, response assembly, unlock.
    let tools = ToolSet::new(vec![noop.clone()], &Map::new(), false)
        .unwrap_or_else(|error| panic!("tool set: {error}"));
    let pipeline = Pipeline {
        tools: CurrentToolSet::new(tools),
        runtime: wasm.clone(),
        via_cli: false,
        structured_content: false,
        slim: false,
        new_pages: false,
        parallel_pages: false,
        tasks: false,
        fence: false,
        flags: Map::new(),
        telemetry: None,
        output_tokens: None,
    };
    let sandbox = Sandbox::new([std::env::temp_dir()]).unwrap_or_else(|error| panic!("{error}"));
    let options = BrowserOptions {
        headless: true,
        isolated: true,
        ..BrowserOptions::default()
    };
    let session = Session::new(options, sandbox);
    let first = tokio.block_on(pipeline.call(&session, "noop", None));
    assert!(first.is_ok_and(|result| result.is_error != Some(true)));
    criterion.bench_function("pipeline_call", |bench| {
        bench.to_async(&tokio).iter(|| async {
            let result = pipeline.call(&session, "noop", Some(Map::new())).await;
            assert!(result.is_ok_and(|result| result.is_error != Some(true)));
        })
    });
    tokio.block_on(session.shutdown(std::time::Duration::from_millis(700)));
}

criterion_group!(host_overhead, benches);
criterion_main!(host_overhead);
