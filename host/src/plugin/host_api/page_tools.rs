//! `devtools:tool/page-tools`: the tools a page offers. Running them runs the page's code with
//! the agent's arguments, so every function needs `page-tools`; the host escapes what the page
//! says before it reaches the response.

use super::{CallState, PageHandle};
use crate::plugin::bindings::devtools::tool::page_tools;
use crate::plugin::capability::Capability;
use serde_json::Value;
use wasmtime::component::Resource;

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
    async fn list_developer_tools(
        &mut self,
        handle: Resource<PageHandle>,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::PageTools, "list-developer-tools")?;
        let page = match self.page(&handle)? {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        };
        Ok(page.list_developer_tools().await)
    }

    async fn execute_developer_tool(
        &mut self,
        handle: Resource<PageHandle>,
        name: String,
        params: String,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::PageTools, "execute-developer-tool")?;
        let params = match object(&params, "params") {
            Ok(params) => params,
            Err(error) => return Ok(Err(error)),
        };
        let page = match self.page(&handle)? {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        };
        Ok(page.execute_developer_tool(&name, &params).await)
    }

    async fn list_webmcp_tools(
        &mut self,
        handle: Resource<PageHandle>,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::PageTools, "list-webmcp-tools")?;
        let page = match self.page(&handle)? {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        };
        Ok(page.list_webmcp_tool_lines().await)
    }

    async fn execute_webmcp_tool(
        &mut self,
        handle: Resource<PageHandle>,
        name: String,
        input: String,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::PageTools, "execute-webmcp-tool")?;
        let input = match object(&input, "input") {
            Ok(input) => input,
            Err(error) => return Ok(Err(error)),
        };
        let page = match self.page(&handle)? {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        };
        Ok(page.execute_webmcp_tool(&name, &input).await)
    }
}
