//! `list_console_messages`: the page's console since the last navigation (or the last 3).

use devtools_tool::{Category, Definition, Flags, ListOptions, Page, PageTool, Response};
use serde::{Deserialize, Serialize};

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum MessageType {
    Log,
    Debug,
    Info,
    Error,
    Warn,
    Dir,
    Dirxml,
    Table,
    Trace,
    Clear,
    StartGroup,
    StartGroupCollapsed,
    EndGroup,
    Assert,
    Profile,
    ProfileEnd,
    Count,
    TimeEnd,
    Verbose,
    Issue,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Maximum number of messages to return. When omitted, returns all messages.
    #[schemars(range(min = 1))]
    page_size: Option<u32>,
    /// Page number to return (0-based). When omitted, returns the first page.
    page_idx: Option<u32>,
    /// Filter messages to only return messages of the specified resource types. When omitted or empty, returns all messages.
    types: Option<Vec<MessageType>>,
    /// Set to true to return the preserved messages over the last 3 navigations.
    include_preserved_messages: Option<bool>,
    /// Set to true to include the stack trace for each message when available. Increases the response size.
    include_stack_traces: Option<bool>,
    /// Filter messages to only return messages of the specified service worker.
    service_worker_id: Option<String>,
}

struct ListConsoleMessages;

impl PageTool for ListConsoleMessages {
    type Params = Params;

    fn definition(flags: &Flags) -> Definition {
        let extensions = if flags.enabled("categoryExtensions") {
            " This includes console messages originating from extensions content scripts."
        } else {
            ""
        };
        Definition::new(
            "list_console_messages",
            Category::Debugging,
            format!("List all console messages for the target page since the last navigation.{extensions}"),
        )
        .read_only()
        .param_default("includePreservedMessages", false)
        .param_default("includeStackTraces", false)
    }

    fn handle(_page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let types = params.types.as_deref().map(devtools_tool::serde_names);
        response.include_console_messages(&ListOptions {
            page_size: params.page_size,
            page_idx: params.page_idx,
            types,
            include_preserved: params.include_preserved_messages.unwrap_or(false),
            include_stack_traces: params.include_stack_traces.unwrap_or(false),
            service_worker_id: params.service_worker_id,
        });
        Ok(())
    }
}

devtools_tool::register_page_tool!(ListConsoleMessages);
