//! Which tools a tenant may list and call: its `tools`, `categories` and `deny_tools`, narrowed
//! further by the scopes of an OAuth access token (`tenants::oauth` maps scopes to one).

use std::collections::BTreeSet;

/// Which tools a tenant may list and call: an allow-list by name and/or category (absent means
/// all), minus `deny_tools`.
#[derive(Debug, Clone, Default)]
pub struct ToolPolicy {
    pub tools: Option<BTreeSet<String>>,
    pub categories: Option<BTreeSet<String>>,
    pub deny_tools: BTreeSet<String>,
    /// A further policy every tool must pass too: the scopes of an OAuth access token.
    pub within: Option<Box<ToolPolicy>>,
}

impl ToolPolicy {
    pub fn allows(&self, tool: &str, category: &str) -> bool {
        if self.deny_tools.contains(tool)
            || self
                .within
                .as_ref()
                .is_some_and(|within| !within.allows(tool, category))
        {
            return false;
        }
        match (&self.tools, &self.categories) {
            (None, None) => true,
            (tools, categories) => {
                tools.as_ref().is_some_and(|tools| tools.contains(tool))
                    || categories
                        .as_ref()
                        .is_some_and(|categories| categories.contains(category))
            }
        }
    }
}
