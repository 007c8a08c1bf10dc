//! `get_network_request`: one request in detail, bodies inline or saved to files.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The reqid of the network request. If omitted returns the currently selected request in the DevTools Network panel.
    reqid: Option<u32>,
    /// The absolute or relative path to a .network-request file to save the request body to. If omitted, the body is returned inline.
    request_file_path: Option<String>,
    /// The absolute or relative path to a .network-response file to save the response body to. If omitted, the body is returned inline.
    response_file_path: Option<String>,
}

struct GetNetworkRequest;

impl PageTool for GetNetworkRequest {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "get_network_request",
            Category::Network,
            "Gets a network request by an optional reqid, if omitted returns the currently selected request in the DevTools Network panel. Useful for inspecting request headers (including 'Cookie') and response headers (including 'Set-Cookie' and directives).",
        )
        .blocked_by_dialog()
        .number_param("reqid")
        .file_param("requestFilePath")
        .file_param("responseFilePath")
    }

    fn handle(_page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        response.include_network_request(
            params.reqid,
            params.request_file_path.as_deref(),
            params.response_file_path.as_deref(),
        );
        Ok(())
    }
}

devtools_tool::register_page_tool!(GetNetworkRequest);
