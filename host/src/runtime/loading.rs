//! Loading tools: plugin folders and the embedded built-ins read, componentized, compiled (or
//! taken from the cache), their definitions checked and remembered, their memory images made.
//! It hands the calling room (`super::calling`) linked code; the calling room never names it.

pub mod cache;
mod code;
pub mod componentize;
pub mod definition;
pub mod embedded;
mod functions;
mod loader;
pub(super) mod memory_image;
pub mod needs;
mod prune;
mod remembered;

pub use cache::CompiledCache;
pub use code::ToolCode;
pub use componentize::Componentizer;
pub use loader::{
    CONTRACTS, DEFINITION_WALL_CLOCK, LoadError, Loader, WASI_PREFIX, allowed_imports,
    is_allowed_import, wasm_files,
};

use super::calling::ToolDefinition;
use crate::policy::capability::Grants;
use crate::policy::limits::Limits;
use std::path::PathBuf;
use std::sync::Arc;

/// A loaded tool: its component, linked and ready to instantiate (or on its first call), its definition for the
/// server's flags, and what its policy allows it.
#[derive(Clone)]
pub struct LoadedTool {
    pub definition: ToolDefinition,
    pub code: ToolCode,
    pub source: PathBuf,
    /// Lowercase hex sha256 of the file.
    pub sha256: String,
    /// The parsed `input-schema`.
    pub input_schema: serde_json::Map<String, serde_json::Value>,
    /// Contract 0.3.1: the schema of the structured results the tool declared, parsed and
    /// bounded; `None` for a tool that answers in text only.
    pub output_schema: Option<serde_json::Map<String, serde_json::Value>>,
    pub grants: Arc<Grants>,
    pub limits: Limits,
    /// The source map a TypeScript tool's build put in it, for its crash reports.
    pub source_map: Option<Arc<crate::source_map::SourceMap>>,
}
