//! `devtools:tool/page-tools`: the tools a page offers. Running them runs the page's code with
//! the agent's arguments, so every function needs `page-tools`, and a run is landing-checked
//! like any action; the host escapes what the page says before it reaches the response, and
//! every answer (errors included) is recorded as page-written by the dispatcher, as every
//! function marked `PAGE_CONTENT` is.

use super::function::{HostFunction as F, Marks as M};
use super::{CallState, PageHandle};
use crate::browser::features::page_tools::PageTools;
use crate::runtime::calling::bindings::v0_3::devtools::tool::page_tools;
use serde_json::Value;
use wasmtime::component::Resource;

const LIST_DEVELOPER_TOOLS: F = F::new(
    "page-tools",
    "list-developer-tools",
    M::PAGE_CONTENT.and(M::ON_PAGE),
);
const EXECUTE_DEVELOPER_TOOL: F = F::new(
    "page-tools",
    "execute-developer-tool",
    M::NAVIGATES.and(M::PAGE_CONTENT).and(M::ON_PAGE),
);
const LIST_WEBMCP_TOOLS: F = F::new(
    "page-tools",
    "list-webmcp-tools",
    M::PAGE_CONTENT.and(M::ON_PAGE),
);
const EXECUTE_WEBMCP_TOOL: F = F::new(
    "page-tools",
    "execute-webmcp-tool",
    M::NAVIGATES.and(M::PAGE_CONTENT).and(M::ON_PAGE),
);

pub(super) const FUNCTIONS: &[&F] = &[
    &LIST_DEVELOPER_TOOLS,
    &EXECUTE_DEVELOPER_TOOL,
    &LIST_WEBMCP_TOOLS,
    &EXECUTE_WEBMCP_TOOL,
];

type Lines = wasmtime::Result<Result<Vec<String>, String>>;

/// The arguments a plugin passes must be a JSON object.
fn object(text: &str, what: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(format!(
            "Failed to parse {what} as JSON: Parsed {what} is not an object"
        )),
        Err(error) => Err(format!("Failed to parse {what} as JSON: {error}")),
    }
}

impl page_tools::Host for CallState {
    async fn list_developer_tools(&mut self, handle: Resource<PageHandle>) -> Lines {
        self.dispatch(&LIST_DEVELOPER_TOOLS, async |call| {
            let lines = match call.page(&handle).await? {
                Ok(page) => PageTools::of(page).list_developer_tools().await,
                Err(message) => Err(message),
            };
            Ok(lines)
        })
        .await
    }

    async fn execute_developer_tool(
        &mut self,
        handle: Resource<PageHandle>,
        name: String,
        params: String,
    ) -> Lines {
        self.dispatch(&EXECUTE_DEVELOPER_TOOL, async |call| {
            let lines = match (object(&params, "params"), call.page(&handle).await?) {
                (Ok(params), Ok(page)) => {
                    PageTools::of(page)
                        .execute_developer_tool(&name, &params)
                        .await
                }
                (Err(message), _) | (_, Err(message)) => Err(message),
            };
            Ok(lines)
        })
        .await
    }

    async fn list_webmcp_tools(&mut self, handle: Resource<PageHandle>) -> Lines {
        self.dispatch(&LIST_WEBMCP_TOOLS, async |call| {
            let lines = match call.page(&handle).await? {
                Ok(page) => PageTools::of(page).list_webmcp_tool_lines().await,
                Err(message) => Err(message),
            };
            Ok(lines)
        })
        .await
    }

    async fn execute_webmcp_tool(
        &mut self,
        handle: Resource<PageHandle>,
        name: String,
        input: String,
    ) -> Lines {
        self.dispatch(&EXECUTE_WEBMCP_TOOL, async |call| {
            let lines = match (object(&input, "input"), call.page(&handle).await?) {
                (Ok(input), Ok(page)) => {
                    PageTools::of(page).execute_webmcp_tool(&name, &input).await
                }
                (Err(message), _) | (_, Err(message)) => Err(message),
            };
            Ok(lines)
        })
        .await
    }
}
