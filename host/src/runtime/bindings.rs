//! Host bindings generated from the contract (`wit/since_v0.2.0`).

wasmtime::component::bindgen!({
    path: "../wit/since_v0.2.0",
    world: "plugin",
    imports: { default: async | trappable },
    exports: { default: async },
    with: { "devtools:tool/pages.page": crate::runtime::PageHandle },
});
