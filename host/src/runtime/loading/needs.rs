//! What a component could ask of the host, read from its imports: the capabilities `plugin
//! check` reports, taken from the host functions' own declarations (`host_api::function`).

use crate::policy::capability::Capability;
use std::collections::{BTreeMap, BTreeSet};

/// What a component's code could call for, from the imports of its core modules
/// (`[method]page.click` from `devtools:tool/pages@…`), looked up in the host functions' own
/// declarations by interface and name, so `plugin check` reports what the dispatcher enforces.
#[derive(Debug, Default)]
pub struct Needs {
    /// Capabilities every call of a function needs, with the functions.
    pub always: BTreeMap<Capability, BTreeSet<String>>,
    /// Capabilities some arguments need (a file path given, a URL that runs script).
    pub depending: BTreeMap<Capability, BTreeSet<String>>,
}

pub fn needed_by(bytes: &[u8]) -> Needs {
    let mut needs = Needs::default();
    for (version, interface, name) in tool_imports(bytes) {
        let found =
            crate::runtime::calling::host_function::find_in_contract(&version, &interface, &name);
        let Some(function) = found else {
            continue;
        };
        for capability in function.needs() {
            needs
                .always
                .entry(capability)
                .or_default()
                .insert(name.clone());
        }
        for capability in function.may_need {
            needs
                .depending
                .entry(*capability)
                .or_default()
                .insert(name.clone());
        }
    }
    needs
}

/// The `devtools:tool` functions a component's core modules import: (contract version,
/// interface, function).
fn tool_imports(bytes: &[u8]) -> Vec<(String, String, String)> {
    let mut imports = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        let Ok(wasmparser::Payload::ImportSection(reader)) = payload else {
            continue;
        };
        for group in reader.into_iter().flatten() {
            let names: Vec<(&str, &str)> = match group {
                wasmparser::Imports::Single(_, import) => vec![(import.module, import.name)],
                wasmparser::Imports::Compact1 { module, items } => items
                    .into_iter()
                    .flatten()
                    .map(|item| (module, item.name))
                    .collect(),
                wasmparser::Imports::Compact2 { module, names, .. } => names
                    .into_iter()
                    .flatten()
                    .map(|name| (module, name))
                    .collect(),
            };
            for (module, name) in names {
                let Some(rest) = module.strip_prefix("devtools:tool/") else {
                    continue;
                };
                let (interface, version) = rest.split_once('@').unwrap_or((rest, ""));
                imports.push((version.to_string(), interface.to_string(), name.to_string()));
            }
        }
    }
    imports
}
