//! The names configuration may use, taken from what is loaded: the tools (with their
//! categories), the categories and the flags that gate tools. The plugin policy and the tenants
//! file are checked against them, so a misspelt name is refused with the names there are, never
//! a rule that silently matches nothing.

use crate::pipeline::ToolSet;
use crate::pipeline::gate::category_flag;
use crate::policy::names;
use crate::policy::plugins::Policy;
use crate::runtime::ToolDefinition;
use crate::runtime::definition::{CATEGORIES, category_info};
use std::collections::{BTreeMap, BTreeSet};

/// The names there are on this server.
#[derive(Debug, Clone, Default)]
pub struct KnownNames {
    /// Every loaded tool (enabled by the flags or not) and its category.
    tools: BTreeMap<String, &'static str>,
    /// The flags that gate tools: a flag per category, and every condition a tool has.
    gating_flags: BTreeSet<String>,
}

impl KnownNames {
    /// The names of the tools in `tools`.
    pub fn of(tools: &ToolSet) -> KnownNames {
        KnownNames::from_definitions(tools.iter().map(|tool| tool.definition()))
    }

    pub fn from_definitions<'a>(
        definitions: impl IntoIterator<Item = &'a ToolDefinition>,
    ) -> KnownNames {
        let mut gating_flags: BTreeSet<String> =
            CATEGORIES.into_iter().map(category_flag).collect();
        let mut names = BTreeMap::new();
        for definition in definitions {
            let annotations = &definition.annotations;
            names.insert(
                definition.name.clone(),
                category_info(annotations.category).0,
            );
            gating_flags.extend(annotations.conditions.iter().cloned());
        }
        KnownNames {
            tools: names,
            gating_flags,
        }
    }

    /// `Err`: why `name` is no tool of this server, and the tools there are.
    pub fn tool(&self, name: &str) -> Result<(), String> {
        if self.tools.contains_key(name) {
            return Ok(());
        }
        Err(names::unknown(
            name,
            "tools of this server",
            self.tools.keys().map(String::as_str),
        ))
    }

    /// `Err`: why `name` is no category, and the categories there are.
    pub fn category(&self, name: &str) -> Result<(), String> {
        let categories = CATEGORIES.map(|category| category_info(category).0);
        if categories.contains(&name) {
            return Ok(());
        }
        Err(names::unknown(name, "categories", categories))
    }

    /// `Err`: why `name` gates no tool of this server, and the flags that do.
    pub fn gating_flag(&self, name: &str) -> Result<(), String> {
        if self.gating_flags.contains(name) {
            return Ok(());
        }
        Err(names::unknown(
            name,
            "flags that enable tools",
            self.gating_flags.iter().map(String::as_str),
        ))
    }
}

/// What is wrong with a name in configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The configuration must be refused.
    Refused(String),
    /// Said, not refused: a plugin of that name may still arrive (`--watch`).
    Warning(String),
}

/// Every `[plugins.NAME]` section of the policy must name a loaded tool (a grant for a tool
/// nothing defines protects nothing, and usually means a misspelt name while the real tool
/// runs under `[default]`), and every category a rule names must exist. With `watching`
/// (`--watch`), a section for a tool not loaded yet is a warning: its plugin may arrive.
pub fn policy_problems(policy: &Policy, known: &KnownNames, watching: bool) -> Vec<Problem> {
    let mut problems = Vec::new();
    let rules = std::iter::once(("[default]".to_string(), None, policy.default_rule())).chain(
        policy
            .rules()
            .map(|(name, rule)| (format!("[plugins.{name}]"), Some(name), rule)),
    );
    for (section, tool, rule) in rules {
        for category in rule.categories.iter().flatten() {
            if let Err(reason) = known.category(category) {
                problems.push(Problem::Refused(format!(
                    "{section}: categories names {reason}. Correct the name, or remove it."
                )));
            }
        }
        let Some(tool) = tool else { continue };
        if let Err(reason) = known.tool(tool) {
            problems.push(if watching {
                Problem::Warning(format!(
                    "{section} names {reason}. The section applies once a plugin defining that tool is loaded (--watch); if the name is misspelt, the plugin it was meant for runs under [default]."
                ))
            } else {
                Problem::Refused(format!(
                    "{section} names {reason}. A section grants to the tool it names: name it after the tool (as tools/list shows it, not its file name), or remove it."
                ))
            });
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::limits::Limits;
    use crate::runtime::Category;
    use crate::runtime::bindings_for_tests::definition;

    fn known() -> KnownNames {
        let tools = [
            definition("evaluate_script", Category::Debugging, &[]),
            definition("page_title", Category::Debugging, &[]),
            definition(
                "get_heapsnapshot_summary",
                Category::Memory,
                &["memoryDebugging"],
            ),
        ];
        KnownNames::from_definitions(&tools)
    }

    fn problems(text: &str, watching: bool) -> Vec<Problem> {
        let policy = Policy::parse(text, Limits::default()).expect("a valid policy");
        policy_problems(&policy, &known(), watching)
    }

    #[test]
    fn a_section_for_a_tool_nothing_defines_is_refused_naming_the_tools() {
        let found = problems("[plugins.pagetitle]\ncapabilities = [\"script\"]\n", false);
        let [Problem::Refused(reason)] = found.as_slice() else {
            panic!("{found:?}")
        };
        assert!(
            reason.contains("[plugins.pagetitle] names \"pagetitle\"")
                && reason.contains("did you mean \"page_title\"?")
                && reason.contains("evaluate_script, get_heapsnapshot_summary, page_title"),
            "{reason}"
        );
        assert!(problems("[plugins.page_title]\n", false).is_empty());
    }

    #[test]
    fn under_watch_a_section_for_a_tool_not_loaded_yet_is_a_warning() {
        let found = problems("[plugins.later]\n", true);
        assert!(
            matches!(found.as_slice(), [Problem::Warning(reason)] if reason.contains("\"later\"")),
            "{found:?}"
        );
    }

    #[test]
    fn misspelt_categories_are_refused_even_under_watch() {
        for section in ["[default]", "[plugins.page_title]"] {
            let found = problems(&format!("{section}\ncategories = [\"netwrok\"]\n"), true);
            assert!(
                matches!(found.as_slice(), [Problem::Refused(reason)]
                    if reason.contains("did you mean \"network\"?")),
                "{section}: {found:?}"
            );
        }
    }

    #[test]
    fn gating_flags_are_the_category_flags_and_the_tools_conditions() {
        let known = known();
        assert!(known.gating_flag("categoryNetwork").is_ok());
        assert!(known.gating_flag("memoryDebugging").is_ok());
        let error = known.gating_flag("categoryNetwrok").expect_err("misspelt");
        assert!(
            error.contains("did you mean \"categoryNetwork\"?"),
            "{error}"
        );
        assert!(known.gating_flag("experimentalStructuredContent").is_err());
    }
}
