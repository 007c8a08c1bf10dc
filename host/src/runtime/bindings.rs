//! Host bindings generated from `wit/tool.wit`.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
    imports: { default: async | trappable },
    exports: { default: async },
    with: { "devtools:tool/pages.page": crate::runtime::PageHandle },
});
