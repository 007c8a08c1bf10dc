//! The built-in tools' definitions, remembered between starts in the compiled-code cache
//! folder, so that a start runs no tool code: each tool's code is deserialised and linked on
//! its first call ([`super::ToolCode::on_first_use`]).
//!
//! A definition decides what a model is told a tool does and which parameters it takes, so a
//! record is trusted only under the cache's MAC (its key lives outside the folder), bound to
//! this binary's version, the exact embedded modules (their sha256s), the server flags the
//! definitions were computed for and the definition budget. Anything else (no record, a
//! planted or altered one, one for other flags or another build) is ignored with a log line:
//! the tools are described by running their code, as without a cache, and the record is
//! written again.

use super::cache::{
    CompiledCache, HmacSha256, read_entry, seal_with, store_atomically, unseal_with,
};
use super::definition::{category_info, category_named};
use super::embedded::EmbeddedTool;
use crate::runtime::calling::ToolDefinition;
use crate::runtime::calling::bindings::Annotations;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::PathBuf;

/// Records start with this, then the 32-byte MAC, then the JSON body.
const MAGIC: &[u8; 8] = b"dtmcpd01";

/// One tool's definition as a record keeps it.
#[derive(Serialize, Deserialize)]
struct Stored {
    sha256: String,
    name: String,
    description: String,
    title: Option<String>,
    category: String,
    read_only_hint: bool,
    conditions: Vec<String>,
    input_schema: String,
    page_scoped: bool,
    blocked_by_dialog: bool,
    file_params: Vec<String>,
}

/// The embedded tools' definitions for one set of flags and one definition budget.
pub struct Remembered<'a> {
    cache: &'a CompiledCache,
    /// The embedded tools the definitions are of, in order (the binary's, or a test's).
    tools: &'static [EmbeddedTool],
    context: Vec<u8>,
}

impl<'a> Remembered<'a> {
    /// `budget` names the definition budget (its `Debug` form): a definition a smaller budget
    /// would have stopped must not be remembered past a change of limits.
    pub fn new(
        cache: &'a CompiledCache,
        tools: &'static [EmbeddedTool],
        flags_json: &str,
        budget: &str,
    ) -> Remembered<'a> {
        let mut context = Vec::new();
        for part in [
            "definitions v1",
            env!("CARGO_PKG_VERSION"),
            flags_json,
            budget,
        ] {
            context.extend_from_slice(part.as_bytes());
            context.push(0);
        }
        for tool in tools {
            context.extend_from_slice(tool.sha256().as_bytes());
            context.push(0);
        }
        Remembered {
            cache,
            tools,
            context,
        }
    }

    /// The record's file: one per context, in the cache folder (none without a folder).
    fn path(&self) -> Option<PathBuf> {
        let digest = hex::encode(Sha256::digest(&self.context));
        Some(
            self.cache
                .dir()?
                .join(format!("definitions-{}.rec", &digest[..16])),
        )
    }

    fn mac(&self) -> HmacSha256 {
        self.cache.record_mac(&self.context)
    }

    /// The definitions, in the order of [`Remembered::new`]'s `tools`, when a record for exactly
    /// this context verifies.
    pub fn load(&self) -> Option<Vec<ToolDefinition>> {
        let path = self.path()?;
        let entry = match read_entry(&path) {
            Ok(Some(entry)) => entry,
            Ok(None) => return None,
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot read remembered tool definitions; describing the tools");
                return None;
            }
        };
        match self.open(&entry) {
            Ok(definitions) => Some(definitions),
            Err(reason) => {
                tracing::warn!(path = %path.display(), %reason, "refusing remembered tool definitions; describing the tools");
                None
            }
        }
    }

    fn open(&self, entry: &[u8]) -> Result<Vec<ToolDefinition>, String> {
        let body = unseal_with(MAGIC, self.mac(), entry).map_err(|reason| {
            reason.unwrap_or(
                "its MAC does not verify (written by someone else, for another build or other flags, or corrupted)",
            )
        })?;
        let stored: Vec<Stored> =
            serde_json::from_slice(body).map_err(|error| format!("unreadable: {error}"))?;
        let tools = self.tools;
        if stored.len() != tools.len() {
            return Err("it lists other tools".into());
        }
        stored
            .into_iter()
            .zip(tools)
            .map(|(stored, tool)| {
                if stored.sha256 != tool.sha256() {
                    return Err(format!("it lists other code for {}", tool.file_name()));
                }
                definition_of(stored)
            })
            .collect()
    }

    /// Remembers `definitions`, given in [`Remembered::new`]'s `tools` order.
    pub fn store(&self, definitions: &[&ToolDefinition]) {
        let Some(path) = self.path() else { return };
        let tools = self.tools;
        if definitions.len() != tools.len() {
            return;
        }
        let stored: Vec<Stored> = definitions
            .iter()
            .zip(tools)
            .map(|(definition, tool)| stored_of(tool.sha256(), definition))
            .collect();
        let Ok(body) = serde_json::to_vec(&stored) else {
            return;
        };
        store_atomically(&path, &seal_with(MAGIC, self.mac(), &body));
    }
}

fn stored_of(sha256: &str, definition: &ToolDefinition) -> Stored {
    let annotations = &definition.annotations;
    Stored {
        sha256: sha256.to_string(),
        name: definition.name.clone(),
        description: definition.description.clone(),
        title: annotations.title.clone(),
        category: category_info(annotations.category).0.to_string(),
        read_only_hint: annotations.read_only_hint,
        conditions: annotations.conditions.clone(),
        input_schema: definition.input_schema.clone(),
        page_scoped: definition.page_scoped,
        blocked_by_dialog: definition.blocked_by_dialog,
        file_params: definition.file_params.clone(),
    }
}

fn definition_of(stored: Stored) -> Result<ToolDefinition, String> {
    let category = category_named(&stored.category)
        .ok_or_else(|| format!("unknown category {}", stored.category))?;
    Ok(ToolDefinition {
        name: stored.name,
        description: stored.description,
        annotations: Annotations {
            title: stored.title,
            category,
            read_only_hint: stored.read_only_hint,
            conditions: stored.conditions,
        },
        input_schema: stored.input_schema,
        page_scoped: stored.page_scoped,
        blocked_by_dialog: stored.blocked_by_dialog,
        file_params: stored.file_params,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::runtime::Category;
    use crate::runtime::bindings_for_tests::definition;

    /// Three tools standing in for a binary's embedded ones (the library embeds none).
    fn tools() -> &'static [EmbeddedTool] {
        static TOOLS: std::sync::OnceLock<Vec<EmbeddedTool>> = std::sync::OnceLock::new();
        TOOLS.get_or_init(|| {
            ["click.wasm", "fill.wasm", "take_snapshot.wasm"]
                .into_iter()
                .map(EmbeddedTool::stand_in)
                .collect()
        })
    }

    fn definitions() -> Vec<ToolDefinition> {
        tools()
            .iter()
            .map(|tool| {
                let mut defined = definition(tool.file_name(), Category::Network, &["slim"]);
                defined.description = format!("Describes {}", tool.file_name());
                defined.annotations.title = Some("T".into());
                defined.file_params = vec!["filePath".into()];
                defined
            })
            .collect()
    }

    fn open_cache(dir: &std::path::Path) -> CompiledCache {
        CompiledCache::open(&wasmtime::Engine::default(), &dir.join("cache")).expect("cache")
    }

    #[test]
    fn definitions_round_trip_for_the_same_flags_only() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = open_cache(dir.path());
        let defined = definitions();
        assert_eq!(defined.len(), 3);
        let remembered = Remembered::new(&cache, tools(), "{\"slim\":false}", "budget");
        assert!(remembered.load().is_none());
        remembered.store(&defined.iter().collect::<Vec<_>>());
        let loaded = remembered.load().expect("remembered");
        assert_eq!(loaded.len(), defined.len());
        for (loaded, defined) in loaded.iter().zip(&defined) {
            assert_eq!(format!("{loaded:?}"), format!("{defined:?}"));
        }
        let other_flags = Remembered::new(&cache, tools(), "{\"slim\":true}", "budget");
        assert!(other_flags.load().is_none());
        let other_budget = Remembered::new(&cache, tools(), "{\"slim\":false}", "other");
        assert!(other_budget.load().is_none());
    }

    #[test]
    fn an_altered_or_planted_record_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = open_cache(dir.path());
        let remembered = Remembered::new(&cache, tools(), "{}", "budget");
        remembered.store(&definitions().iter().collect::<Vec<_>>());
        let path = remembered.path().expect("path");
        let mut entry = std::fs::read(&path).expect("record");
        // A changed description (the attack: tell the model something else), MAC untouched.
        let body = MAGIC.len() + 32;
        let at = entry[body..]
            .windows(9)
            .position(|window| window == b"Describes")
            .expect("a description");
        entry[body + at..body + at + 9].copy_from_slice(b"Ignores!!");
        std::fs::write(&path, &entry).expect("write");
        assert!(remembered.load().is_none());
        // So does a record sealed under another install's key.
        let elsewhere = tempfile::tempdir().expect("temp dir");
        let other_cache = open_cache(elsewhere.path());
        Remembered::new(&other_cache, tools(), "{}", "budget")
            .store(&definitions().iter().collect::<Vec<_>>());
        let planted = std::fs::read(
            Remembered::new(&other_cache, tools(), "{}", "budget")
                .path()
                .expect("path"),
        )
        .expect("record");
        std::fs::write(&path, planted).expect("plant");
        assert!(remembered.load().is_none());
        std::fs::write(&path, b"dtmcpd01").expect("truncate");
        assert!(remembered.load().is_none());
    }

    #[test]
    fn without_a_folder_nothing_is_remembered() {
        let cache = CompiledCache::in_memory(&wasmtime::Engine::default());
        let remembered = Remembered::new(&cache, tools(), "{}", "budget");
        remembered.store(&definitions().iter().collect::<Vec<_>>());
        assert!(remembered.load().is_none());
    }
}
