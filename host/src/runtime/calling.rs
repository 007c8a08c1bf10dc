//! Calling a tool: the bindings of every contract version, the engine and its limits, and the
//! host functions behind the one gate. Nothing here knows where a component came from; the
//! loading room hands it linked code.

pub(super) mod bindings;
pub mod compile_settings;
pub mod guest_report;
pub(super) mod host_api;
mod instances;
pub mod limits;

pub use bindings::{Category, ToolDefinition, ToolPre};
pub use host_api::function as host_function;
pub use host_api::{CallState, PLUGIN_FILE_EXTENSIONS, PageHandle};
pub use instances::{CallOutcome, Runtime};

#[cfg(test)]
pub mod bindings_for_tests {
    use super::bindings::Annotations;
    use super::{Category, ToolDefinition};

    /// A definition as a component would export it, for unit tests of the pipeline steps.
    pub fn definition(name: &str, category: Category, conditions: &[&str]) -> ToolDefinition {
        ToolDefinition {
            name: name.to_string(),
            description: String::new(),
            annotations: Annotations {
                title: None,
                category,
                read_only_hint: false,
                conditions: conditions
                    .iter()
                    .map(|condition| condition.to_string())
                    .collect(),
            },
            input_schema: "{\"type\":\"object\",\"properties\":{}}".into(),
            page_scoped: false,
            blocked_by_dialog: false,
            file_params: Vec::new(),
        }
    }
}
