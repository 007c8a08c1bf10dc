//! Tool components in two rooms: loading them (files, componentizing, the compiled-code
//! cache, memory images, the embedded built-ins) and calling them (bindings, the engine and its
//! limits, the host functions behind the gate). Loading depends on calling, never the reverse
//! (`layers::tests::the_runtime_rooms_import_one_way`).

pub mod calling;
pub mod loading;

pub use calling::{
    CallOutcome, CallState, Category, PLUGIN_FILE_EXTENSIONS, PageHandle, Runtime, ToolDefinition,
    ToolPre, compile_settings, guest_report, host_function, limits,
};
pub use loading::{
    CONTRACTS, CompiledCache, Componentizer, DEFINITION_WALL_CLOCK, LoadError, LoadedTool, Loader,
    ToolCode, WASI_PREFIX, allowed_imports, cache, componentize, definition, embedded,
    is_allowed_import, needs, wasm_files,
};

#[cfg(test)]
pub use calling::bindings_for_tests;
