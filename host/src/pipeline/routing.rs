//! Page routing: the page a page-scoped tool acts on.

use super::ToolEntry;
use crate::session::SessionState;
use serde_json::{Map, Value};

/// With page-id routing, `pageId` picks the page (and is not passed on: the tool's own schema
/// does not have it); otherwise the selected page. Global tools get none.
pub fn target_page(
    tool: &ToolEntry,
    arguments: &mut Map<String, Value>,
    state: &SessionState,
) -> Result<Option<u32>, String> {
    if !tool.definition().page_scoped {
        return Ok(None);
    }
    if tool.routed
        && let Some(value) = arguments.remove("pageId")
    {
        let id = value
            .as_u64()
            .and_then(|id| u32::try_from(id).ok())
            .ok_or("No page found")?;
        return state.page(id).map(|page| Some(page.id));
    }
    state.selected_id().map(Some)
}
