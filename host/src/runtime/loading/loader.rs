//! Finds tool components on disk, checks their integrity (pinned hash, signature), turns core
//! modules into components, refuses what imports more than our interfaces (and a WASI that
//! grants nothing), evaluates each definition for the server's flags and applies the policy.

use super::cache::CompiledCache;
use super::componentize::Componentizer;
use super::functions::FunctionPack;
use super::remembered::Remembered;
use super::{LoadedTool, ToolCode, memory_image};
use crate::policy::limits::Limits;
use crate::policy::plugins::{Origin, Policy};
use crate::policy::signature::{self, Verdict};
use crate::runtime::calling::ToolPre;
use crate::runtime::calling::{Runtime, ToolDefinition};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime::component::types::ComponentItem;

include!(concat!(env!("OUT_DIR"), "/contracts.rs"));

/// The interfaces of ours a tool may import: every interface of every contract version the
/// server links (`CONTRACTS`, read from `wit/since_vX.Y.Z` by host/build.rs), versioned.
pub fn allowed_imports() -> impl Iterator<Item = String> {
    CONTRACTS.iter().flat_map(|(version, imports)| {
        imports
            .iter()
            .map(move |interface| format!("devtools:tool/{interface}@{version}"))
    })
}

/// Whether `import` is an interface of a contract the server links.
pub fn is_allowed_import(import: &str) -> bool {
    let Some((interface, version)) = import
        .strip_prefix("devtools:tool/")
        .and_then(|rest| rest.split_once('@'))
    else {
        return false;
    };
    CONTRACTS
        .iter()
        .any(|(known, imports)| *known == version && imports.contains(&interface))
}

/// The tool export of each contract version the server links.
fn is_tool_export(name: &str) -> bool {
    CONTRACTS
        .iter()
        .any(|(version, _)| name == format!("devtools:tool/tool@{version}"))
}

/// WASI interfaces are linked to an implementation that grants nothing.
pub const WASI_PREFIX: &str = "wasi:";

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
        "Plugin {file} imports `{import}`, which this server does not provide. Tools may import only {allowed}, and WASI 0.2 interfaces (which grant nothing)."
    )]
    ForbiddenImport {
        file: PathBuf,
        import: String,
        allowed: String,
    },
    #[error(
        "Plugin {file} cannot be linked: {reason}. Tools may import only devtools:tool/pages, devtools:tool/response, devtools:tool/styles, devtools:tool/screencast, devtools:tool/lighthouse, devtools:tool/vision, devtools:tool/interop, devtools:tool/page-tools, devtools:tool/extensions, devtools:tool/pwa and the WASI 0.2 interfaces."
    )]
    Link { file: PathBuf, reason: String },
    #[error("Plugin {file} was refused: {reason}.")]
    Integrity { file: PathBuf, reason: String },
    #[error("Plugin {file} (tool `{tool}`) was refused by the policy: {reason}.")]
    Policy {
        file: PathBuf,
        tool: String,
        reason: String,
    },
    #[error("Plugin {file} has no usable definition: {reason}")]
    Definition { file: PathBuf, reason: String },
    #[error(
        "Plugin {file} defines the tool `{name}`, which differs only in letter case from `{existing}` of {first}; names that read alike are refused. Rename one."
    )]
    Confusable {
        name: String,
        existing: String,
        file: PathBuf,
        first: PathBuf,
    },
    #[error("Two plugins define the tool `{name}`: {first} and {second}. Remove or rename one.")]
    Duplicate {
        name: String,
        first: PathBuf,
        second: PathBuf,
    },
}

/// A compiled, linked component and its definition, before the policy is applied.
pub struct Inspection {
    /// Lowercase hex sha256 of the file.
    pub sha256: String,
    pub pre: ToolPre,
    pub definition: ToolDefinition,
    pub input_schema: serde_json::Map<String, serde_json::Value>,
    /// The output schema it declared (contract 0.3.1), parsed and bounded.
    pub output_schema: Option<serde_json::Map<String, serde_json::Value>>,
    /// The component's imports, by name.
    pub imports: Vec<String>,
}

#[derive(Clone)]
pub struct Loader {
    runtime: Runtime,
    cache: Arc<CompiledCache>,
    policy: Arc<Policy>,
    componentizer: Componentizer,
}

impl Loader {
    /// `cache`: from [`CompiledCache::open`] (a checked private folder) or
    /// [`CompiledCache::in_memory`] (nothing written). Core modules are made components in a
    /// child process of this binary ([`Componentizer::isolated`]).
    pub fn new(runtime: Runtime, cache: CompiledCache, policy: Arc<Policy>) -> Loader {
        Loader {
            runtime,
            cache: Arc::new(cache),
            policy,
            componentizer: Componentizer::isolated(),
        }
    }

    /// Where core modules are made components: [`Componentizer::InProcess`] for code that
    /// runs without the server's binary (the library's tests and benches).
    pub fn with_componentizer(mut self, componentizer: Componentizer) -> Loader {
        self.componentizer = componentizer;
        self
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Whether the compiled-code cache holds these bytes' code (see [`CompiledCache::has_entry`]).
    pub fn is_compiled(&self, bytes: &[u8]) -> bool {
        self.cache.has_entry(bytes)
    }

    /// One tool file: a component, or a core module carrying its component type, checked
    /// against the policy.
    pub async fn load_file(
        &self,
        file: &Path,
        origin: Origin,
        flags_json: &str,
    ) -> Result<LoadedTool, LoadError> {
        let bytes = std::fs::read(file).map_err(|source| LoadError::ReadFile {
            file: file.to_path_buf(),
            source,
        })?;
        self.load_bytes(file, &bytes, origin, flags_json).await
    }

    /// [`Loader::load_file`] for bytes already read; `file` names them (the embedded built-in
    /// tools are `<built-in>/<name>.wasm`).
    pub async fn load_bytes(
        &self,
        file: &Path,
        bytes: &[u8],
        origin: Origin,
        flags_json: &str,
    ) -> Result<LoadedTool, LoadError> {
        self.check_signature(file, bytes, origin)?;
        let Inspection {
            sha256,
            pre,
            definition,
            input_schema,
            output_schema,
            ..
        } = self.inspect(file, bytes, flags_json).await?;
        let mut tool = self.admit(
            file,
            origin,
            sha256,
            ToolCode::ready(pre),
            definition,
            input_schema,
        )?;
        tool.output_schema = output_schema;
        tool.source_map = crate::source_map::carried(bytes).map(Arc::new);
        Ok(tool)
    }

    /// A built-in tool described by running its `definition`, its linked code then let go
    /// (when the embedded code runs on this engine): like a remembered one, it links again on
    /// its first call. So a first start (no record
    /// of the definitions yet) holds only the tools being described at that moment, not all
    /// of them, and ends holding what every later start holds.
    pub async fn describe_builtin(
        &self,
        tool: &'static super::embedded::EmbeddedTool,
        flags_json: &str,
    ) -> Result<LoadedTool, LoadError> {
        let module = tool.wasm().map_err(|reason| LoadError::Integrity {
            file: tool.source(),
            reason,
        })?;
        let mut loaded = self
            .load_bytes(&tool.source(), &module, Origin::Builtin, flags_json)
            .await?;
        // Code compiled here instead (an engine for another CPU level than the build's)
        // stays linked: the embedded code would not run on this engine.
        if super::embedded::runs_on(self.runtime.engine()) {
            loaded.code = self.embedded_code(tool);
        }
        Ok(loaded)
    }

    /// Applies the policy to a described tool: its grants and limits, and the categories it
    /// may claim.
    fn admit(
        &self,
        file: &Path,
        origin: Origin,
        sha256: String,
        code: ToolCode,
        definition: ToolDefinition,
        input_schema: serde_json::Map<String, serde_json::Value>,
    ) -> Result<LoadedTool, LoadError> {
        let policy_error = |reason: String| LoadError::Policy {
            file: file.to_path_buf(),
            tool: definition.name.clone(),
            reason,
        };
        let resolved = self
            .policy
            .resolve(&definition.name, origin, &sha256)
            .map_err(policy_error)?;
        let (category, _, _) =
            crate::runtime::definition::category_info(definition.annotations.category);
        if let Some(allowed) = &resolved.categories
            && !allowed.iter().any(|name| name == category)
        {
            return Err(policy_error(format!(
                "it claims the category `{category}`, but its policy allows only {}",
                allowed.join(", ")
            )));
        }
        Ok(LoadedTool {
            definition,
            code,
            source: file.to_path_buf(),
            sha256,
            input_schema,
            // Set by the caller for a tool that declared one (a built-in tool does not).
            output_schema: None,
            grants: Arc::new(resolved.grants),
            limits: resolved.limits,
            // Set by the caller for a component that carries one.
            source_map: None,
        })
    }

    /// The built-in tools described from remembered definitions (see `remembered`), running
    /// none of their code: each links its embedded code on its first call. `None` when there
    /// is no valid record for these flags, or this engine cannot run the embedded code; the
    /// caller then loads them with [`Loader::load_bytes`] and calls [`Loader::remember_builtins`].
    pub fn remembered_builtins(
        &self,
        flags_json: &str,
    ) -> Option<Result<Vec<LoadedTool>, LoadError>> {
        if !super::embedded::runs_on(self.runtime.engine()) {
            return None;
        }
        let definitions = self.remembered(flags_json).load()?;
        let tools = super::embedded::tools().iter().zip(definitions);
        Some(
            tools
                .map(|(tool, definition)| {
                    let file = tool.source();
                    let input_schema =
                        super::definition::validate(&definition).map_err(|reason| {
                            LoadError::Definition {
                                file: file.clone(),
                                reason,
                            }
                        })?;
                    let code = self.embedded_code(tool);
                    let sha256 = tool.sha256().to_string();
                    self.admit(
                        &file,
                        Origin::Builtin,
                        sha256,
                        code,
                        definition,
                        input_schema,
                    )
                })
                .collect(),
        )
    }

    /// Remembers the built-in tools' definitions (`tools` in `embedded::tools()` order) for
    /// the next start with these flags.
    pub fn remember_builtins(&self, flags_json: &str, tools: &[LoadedTool]) {
        if !super::embedded::runs_on(self.runtime.engine()) {
            return;
        }
        let definitions: Vec<&ToolDefinition> = tools.iter().map(|tool| &tool.definition).collect();
        self.remembered(flags_json).store(&definitions);
    }

    fn remembered(&self, flags_json: &str) -> Remembered<'_> {
        let budget = format!("{:?}", definition_limits(self.policy.base_limits));
        Remembered::new(&self.cache, super::embedded::tools(), flags_json, &budget)
    }

    /// An embedded tool's code, deserialised and linked on its first call, with the import
    /// check every loaded component passes.
    fn embedded_code(&self, tool: &'static super::embedded::EmbeddedTool) -> ToolCode {
        let runtime = self.runtime.clone();
        ToolCode::on_first_use(move || {
            let component = super::embedded::code_of(runtime.engine(), tool)
                .ok_or("its embedded code does not run on this engine")?;
            check_imports(&tool.source(), &component, runtime.engine())
                .map_err(|error| error.to_string())?;
            link(&runtime, &component).map_err(|error| format!("{error:#}"))
        })
    }

    /// Compiles (or loads from the cache), links and describes a component, without applying
    /// the policy: what `load_file` builds on and `plugin check` prints.
    pub async fn inspect(
        &self,
        file: &Path,
        bytes: &[u8],
        flags_json: &str,
    ) -> Result<Inspection, LoadError> {
        let sha256 = match super::embedded::sha256_of(bytes) {
            Some(known) => known.to_string(),
            None => hex::encode(Sha256::digest(bytes)),
        };
        // Built-in tools carry their code, compiled when the binary was built.
        let (component, from_cache) =
            match super::embedded::precompiled(self.runtime.engine(), bytes) {
                Some(component) => (component, true),
                None => self.compile(file, bytes).await?,
            };
        tracing::debug!(file = %file.display(), from_cache, "loaded plugin");
        let imports: Vec<String> = component
            .component_type()
            .imports(self.runtime.engine())
            .map(|(name, _)| name.to_string())
            .collect();
        check_imports(file, &component, self.runtime.engine())?;
        let exports_tool = component
            .component_type()
            .exports(self.runtime.engine())
            .any(|(name, _)| is_tool_export(name));
        if !exports_tool {
            return Err(LoadError::Definition {
                file: file.to_path_buf(),
                reason: format!(
                    "it does not export devtools:tool/tool of a contract version this server links ({}); build it with the devtools-tool SDK or against the devtools:tool WIT",
                    CONTRACTS
                        .iter()
                        .map(|(version, _)| *version)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        let pre = link(&self.runtime, &component).map_err(|error| LoadError::Link {
            file: file.to_path_buf(),
            reason: format!("{error:#}"),
        })?;
        let (definition, output_schema) = self
            .runtime
            .definition(&pre, flags_json, definition_limits(self.policy.base_limits))
            .await
            .map_err(|error| LoadError::Definition {
                file: file.to_path_buf(),
                reason: definition_failure(&error),
            })?;
        let input_schema =
            super::definition::validate(&definition).map_err(|reason| LoadError::Definition {
                file: file.to_path_buf(),
                reason,
            })?;
        let output_schema = output_schema
            .map(|text| crate::schema::parse(&text).and_then(super::definition::object_schema))
            .transpose()
            .map_err(|reason| LoadError::Definition {
                file: file.to_path_buf(),
                reason: format!(
                    "its output schema (response.declare-output-schema) is refused: {reason}"
                ),
            })?;
        Ok(Inspection {
            sha256,
            pre,
            definition,
            input_schema,
            output_schema,
            imports,
        })
    }

    /// Componentizes (in a child process, see `componentize`) and compiles (or takes from the
    /// cache) off the async workers. A panic in a parser or the compiler is caught and
    /// reported against the file: a malformed plugin never takes the server (or the `--watch`
    /// task) down.
    async fn compile(
        &self,
        file: &Path,
        bytes: &[u8],
    ) -> Result<(wasmtime::component::Component, bool), LoadError> {
        let cache = self.cache.clone();
        let runtime = self.runtime.clone();
        let owned_file = file.to_path_buf();
        let owned_bytes = bytes.to_vec();
        let componentizer = self.componentizer.clone();
        let work = move || {
            caught_quietly(|| {
                let componentize = |bytes: &[u8]| {
                    componentizer
                        .componentize(&owned_file, bytes)
                        .map_err(wasmtime::Error::from)
                };
                // Only on a miss: the functions this file's last compile made are reused.
                let precompile = |component: &[u8]| {
                    let pack = Arc::new(FunctionPack::load(&cache, &owned_file));
                    let compiled = runtime
                        .compiler(pack.clone())?
                        .precompile_component(component)?;
                    tracing::debug!(file = %owned_file.display(), reused = pack.reused(), compiled = pack.made(), "compiled plugin");
                    pack.store(&cache, &owned_file);
                    Ok(compiled)
                };
                cache.load_or_compile_with(runtime.engine(), &owned_bytes, componentize, precompile)
            })
        };
        let compile_error = |reason: String| LoadError::Compile {
            file: file.to_path_buf(),
            reason,
        };
        let outcome = tokio::task::spawn_blocking(work)
            .await
            .map_err(|error| compile_error(format!("the compiler task failed: {error}")))?;
        match outcome {
            Ok(Ok(compiled)) => Ok(compiled),
            Ok(Err(error)) => Err(match error.downcast::<LoadError>() {
                Ok(load_error) => load_error,
                Err(error) => compile_error(format!("{error:#}")),
            }),
            Err(panic) => Err(compile_error(format!(
                "it is malformed (the parser gave up: {})",
                panic_text(&panic)
            ))),
        }
    }

    /// A signature that does not verify is always refused; with `require_signed`, so are
    /// unsigned community plugins and keys the policy does not trust.
    fn check_signature(&self, file: &Path, bytes: &[u8], origin: Origin) -> Result<(), LoadError> {
        let refuse = |reason: String| LoadError::Integrity {
            file: file.to_path_buf(),
            reason,
        };
        if origin == Origin::Builtin && super::embedded::is_embedded(file) {
            return if super::embedded::carries(bytes) {
                Ok(())
            } else {
                Err(refuse(
                    "it names an embedded tool but is not its code".into(),
                ))
            };
        }
        let required = self.policy.require_signed && origin == Origin::Community;
        match signature::verify(file, bytes, &self.policy.trusted_keys) {
            Verdict::Invalid { reason } => Err(refuse(reason)),
            Verdict::Trusted { .. } => Ok(()),
            Verdict::Unsigned if required => Err(refuse(format!(
                "it is not signed and --require-signed is on (sign it with `devtools-mcp plugin sign`, which writes {})",
                signature::signature_path(file).display()
            ))),
            Verdict::UnknownKey { key } if required => Err(refuse(format!(
                "it is signed by the key {key}, which is not among the policy's [signing] trusted_keys"
            ))),
            Verdict::UnknownKey { key } => {
                tracing::warn!(file = %file.display(), %key, "plugin signed by an untrusted key");
                Ok(())
            }
            Verdict::Unsigned => Ok(()),
        }
    }
}

/// The budget of one `definition()` evaluation: the server's `--plugin*` limits, with the
/// wall clock capped so that start-up stays quick however many plugins load (they load
/// together, so N slow plugins cost one budget, not N).
pub const DEFINITION_WALL_CLOCK: std::time::Duration = std::time::Duration::from_secs(10);

/// Links a component once, its memory images made first so no call meets the kernel refusing
/// one; every call then instantiates it afresh from what this returns.
fn link(
    runtime: &Runtime,
    component: &wasmtime::component::Component,
) -> wasmtime::Result<ToolPre> {
    memory_image::initialize(component)?;
    runtime.link(component)
}

fn definition_limits(base: Limits) -> Limits {
    Limits {
        wall_clock: base.wall_clock.min(DEFINITION_WALL_CLOCK),
        ..base
    }
}

/// Why `definition()` failed: the limit that stopped it, if one did.
fn definition_failure(error: &wasmtime::Error) -> String {
    match error.downcast_ref::<crate::runtime::calling::limits::LimitExceeded>() {
        Some(exceeded) => format!("computing its definition was stopped: {exceeded}"),
        None => match error.downcast_ref::<wasmtime::Trap>() {
            Some(wasmtime::Trap::OutOfFuel) => {
                "computing its definition was stopped: it used more than its CPU budget (--plugin-fuel)".into()
            }
            _ => format!("{error:#}"),
        },
    }
}

thread_local! {
    /// Set while this thread parses untrusted bytes under [`caught_quietly`].
    static PARSING_UNTRUSTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs a parser over a stranger's bytes, catching a panic (reported against the file by the
/// caller) without the panic hook printing it as if the server had crashed.
fn caught_quietly<R>(work: impl FnOnce() -> R) -> std::thread::Result<R> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !PARSING_UNTRUSTED.with(std::cell::Cell::get) {
                default(info);
            }
        }));
    });
    PARSING_UNTRUSTED.with(|flag| flag.set(true));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    PARSING_UNTRUSTED.with(|flag| flag.set(false));
    outcome
}

pub(super) fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| text.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

pub fn wasm_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
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

fn check_imports(
    file: &Path,
    component: &wasmtime::component::Component,
    engine: &wasmtime::Engine,
) -> Result<(), LoadError> {
    for (import, item) in component.component_type().imports(engine) {
        let known = is_allowed_import(import) || import.starts_with(WASI_PREFIX);
        let allowed = known && matches!(item.ty, ComponentItem::ComponentInstance(_));
        if !allowed {
            return Err(LoadError::ForbiddenImport {
                file: file.to_path_buf(),
                import: import.to_string(),
                allowed: allowed_imports().collect::<Vec<_>>().join(" and "),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_module_that_exports_no_tool_is_refused_naming_the_file() {
        // `(module)` in binary form: magic and version only.
        let empty_module = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
        let directory = tempfile::tempdir().expect("temp dir");
        let file = directory.path().join("empty.wasm");
        std::fs::write(&file, empty_module).expect("write module");
        let runtime = Runtime::new().expect("runtime");
        let cache = CompiledCache::in_memory(runtime.engine());
        let loader = Loader::new(runtime, cache, Arc::default())
            .with_componentizer(Componentizer::InProcess);
        let error = loader.load_file(&file, Origin::Community, "{}").await.err();
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
