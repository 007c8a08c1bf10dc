//! `list_network_requests`: the page's requests since the last navigation (or the last 3).

use devtools_tool::{Category, Definition, Flags, ListOptions, Page, PageTool, Response};
use serde::{Deserialize, Serialize};

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ResourceType {
    Document,
    Stylesheet,
    Image,
    Media,
    Font,
    Script,
    Texttrack,
    Xhr,
    Fetch,
    Prefetch,
    Eventsource,
    Websocket,
    Manifest,
    Signedexchange,
    Ping,
    Cspviolationreport,
    Preflight,
    Fedcm,
    Other,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Maximum number of requests to return. When omitted, returns all requests.
    #[schemars(range(min = 1))]
    page_size: Option<u32>,
    /// Page number to return (0-based). When omitted, returns the first page.
    page_idx: Option<u32>,
    /// Filter requests to only return requests of the specified resource types. When omitted or empty, returns all requests.
    resource_types: Option<Vec<ResourceType>>,
    /// Set to true to return the preserved requests over the last 3 navigations.
    include_preserved_requests: Option<bool>,
}

struct ListNetworkRequests;

impl PageTool for ListNetworkRequests {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "list_network_requests",
            Category::Network,
            "Lists the most recent requests for the target page since the last navigation.",
        )
        .read_only()
        .param_default("includePreservedRequests", false)
    }

    fn handle(_page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let types = params
            .resource_types
            .as_deref()
            .map(devtools_tool::serde_names);
        response.include_network_requests(&ListOptions {
            page_size: params.page_size,
            page_idx: params.page_idx,
            types,
            include_preserved: params.include_preserved_requests.unwrap_or(false),
            include_stack_traces: false,
            service_worker_id: None,
        });
        Ok(())
    }
}

devtools_tool::register_page_tool!(ListNetworkRequests);
