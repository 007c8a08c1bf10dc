//! Finds tool components on disk, turns core modules into components, refuses what imports
//! more than our two interfaces, and evaluates each definition for the server's flags.

use super::cache::CompiledCache;
use super::{LoadedTool, Runtime};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wasmtime::component::types::ComponentItem;

/// The only interfaces a tool may import.
pub const ALLOWED_IMPORTS: [&str; 2] =
    ["devtools:tool/pages@0.2.0", "devtools:tool/response@0.2.0"];

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("Cannot read plugin folder {dir}: {source}")]
    ReadDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("Cannot read plugin {file}: {source}")]
    ReadFile {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("Plugin {file} is neither a WebAssembly component nor a core module.")]
    NotWasm { file: PathBuf },
    #[error(
        "Plugin {file} is a core module that could not be made a component ({reason}); build it with wit-bindgen against the devtools:tool WIT."
    )]
    Componentize { file: PathBuf, reason: String },
    #[error("Plugin {file} could not be compiled: {reason}")]
    Compile { file: PathBuf, reason: String },
    #[error(
        "Plugin {file} imports `{import}`, which this server does not provide. Tools may import only {allowed}."
    )]
    ForbiddenImport {
        file: PathBuf,
        import: String,
        allowed: String,
    },
    #[error("Plugin {file} has no usable definition: {reason}")]
    Definition { file: PathBuf, reason: String },
    #[error("Two plugins define the tool `{name}`: {first} and {second}. Remove or rename one.")]
    Duplicate {
        name: String,
        first: PathBuf,
        second: PathBuf,
    },
}

pub struct Loader {
    runtime: Runtime,
    cache: CompiledCache,
}

impl Loader {
    pub fn new(runtime: Runtime, cache_dir: Option<PathBuf>) -> Loader {
        let cache = CompiledCache::new(runtime.engine(), cache_dir);
        Loader { runtime, cache }
    }

    /// Every `*.wasm` file of these folders, as tools sorted by name.
    pub async fn load_dirs(
        &self,
        dirs: &[PathBuf],
        flags_json: &str,
    ) -> Result<Vec<LoadedTool>, LoadError> {
        let mut by_name: BTreeMap<String, LoadedTool> = BTreeMap::new();
        for dir in dirs {
            for file in wasm_files(dir)? {
                let tool = self.load_file(&file, flags_json).await?;
                let name = tool.definition.name.clone();
                if let Some(existing) = by_name.get(&name) {
                    return Err(LoadError::Duplicate {
                        name,
                        first: existing.source.clone(),
                        second: file,
                    });
                }
                by_name.insert(name, tool);
            }
        }
        Ok(by_name.into_values().collect())
    }

    /// One tool file: a component, or a core module carrying its component type.
    pub async fn load_file(&self, file: &Path, flags_json: &str) -> Result<LoadedTool, LoadError> {
        let bytes = std::fs::read(file).map_err(|source| LoadError::ReadFile {
            file: file.to_path_buf(),
            source,
        })?;
        let (component, from_cache) = self
            .cache
            .load_or_compile(self.runtime.engine(), &bytes, |bytes| {
                componentize(file, bytes).map_err(wasmtime::Error::from)
            })
            .map_err(|error| match error.downcast::<LoadError>() {
                Ok(load_error) => load_error,
                Err(error) => LoadError::Compile {
                    file: file.to_path_buf(),
                    reason: format!("{error:#}"),
                },
            })?;
        tracing::debug!(file = %file.display(), from_cache, "loaded plugin");
        check_imports(file, &component, self.runtime.engine())?;
        let definition = self
            .runtime
            .definition(&component, flags_json)
            .await
            .map_err(|error| LoadError::Definition {
                file: file.to_path_buf(),
                reason: format!("{error:#}"),
            })?;
        let input_schema = match serde_json::from_str(&definition.input_schema) {
            Ok(serde_json::Value::Object(schema)) => schema,
            _ => {
                return Err(LoadError::Definition {
                    file: file.to_path_buf(),
                    reason: "its input schema is not a JSON object".into(),
                });
            }
        };
        if let Err(error) =
            jsonschema::validator_for(&serde_json::Value::Object(input_schema.clone()))
        {
            return Err(LoadError::Definition {
                file: file.to_path_buf(),
                reason: format!("its input schema is invalid: {error}"),
            });
        }
        Ok(LoadedTool {
            definition,
            component,
            source: file.to_path_buf(),
            input_schema,
        })
    }
}

fn wasm_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|source| LoadError::ReadDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "wasm") && path.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Components pass through; a core module is encoded into a component from the component type
/// that wit-bindgen embedded in it.
fn componentize(file: &Path, bytes: &[u8]) -> Result<Vec<u8>, LoadError> {
    if wasmparser::Parser::is_component(bytes) {
        return Ok(bytes.to_vec());
    }
    if !wasmparser::Parser::is_core_wasm(bytes) {
        return Err(LoadError::NotWasm {
            file: file.to_path_buf(),
        });
    }
    let componentize_error = |error: anyhow::Error| LoadError::Componentize {
        file: file.to_path_buf(),
        reason: format!("{error:#}"),
    };
    wit_component::ComponentEncoder::default()
        .module(bytes)
        .map_err(componentize_error)?
        .validate(true)
        .encode()
        .map_err(componentize_error)
}

fn check_imports(
    file: &Path,
    component: &wasmtime::component::Component,
    engine: &wasmtime::Engine,
) -> Result<(), LoadError> {
    for (import, item) in component.component_type().imports(engine) {
        let allowed = ALLOWED_IMPORTS.contains(&import)
            && matches!(item.ty, ComponentItem::ComponentInstance(_));
        if !allowed {
            return Err(LoadError::ForbiddenImport {
                file: file.to_path_buf(),
                import: import.to_string(),
                allowed: ALLOWED_IMPORTS.join(" and "),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_not_wasm() {
        let error = componentize(Path::new("x.wasm"), b"hello");
        assert!(matches!(error, Err(LoadError::NotWasm { .. })));
    }

    #[tokio::test]
    async fn a_module_that_exports_no_tool_is_refused_naming_the_file() {
        // `(module)` in binary form: magic and version only.
        let empty_module = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
        let directory = tempfile::tempdir().expect("temp dir");
        let file = directory.path().join("empty.wasm");
        std::fs::write(&file, empty_module).expect("write module");
        let runtime = Runtime::new().expect("runtime");
        let loader = Loader::new(runtime, None);
        let error = loader.load_file(&file, "{}").await.err();
        let message = error.map(|error| error.to_string()).unwrap_or_default();
        assert!(
            message.starts_with(&format!(
                "Plugin {} has no usable definition",
                file.display()
            )),
            "{message}"
        );
    }
}
