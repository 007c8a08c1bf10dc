//! `pages.network-requests` and `pages.console-messages` (`pages.read`): a page's requests and
//! console messages as records, from the same collectors that print 1.11.0's listings.

use super::super::function::{HostFunction as F, Marks as M};
use super::super::{CallState, PageHandle};
use crate::browser::features::collectors::Collectors;
use crate::runtime::calling::bindings::v0_3::devtools::tool::pages::{
    ConsoleMessage, Header, MessageKind, NetworkRequest, RequestState,
};
use devtools_collectors::{MessageRecord, RequestRecord, RequestState as EngineState};
use wasmtime::component::Resource;

const NETWORK_REQUESTS: F = F::new("pages", "network-requests", M::PAGE_CONTENT.and(M::ON_PAGE));
const CONSOLE_MESSAGES: F = F::new("pages", "console-messages", M::PAGE_CONTENT.and(M::ON_PAGE));

pub(in crate::runtime::calling::host_api) const FUNCTIONS: &[&F] =
    &[&NETWORK_REQUESTS, &CONSOLE_MESSAGES];

fn headers(headers: Vec<(String, String)>) -> Vec<Header> {
    headers
        .into_iter()
        .map(|(name, value)| Header { name, value })
        .collect()
}

fn request(record: RequestRecord) -> NetworkRequest {
    NetworkRequest {
        id: record.id,
        method: record.method,
        url: record.url,
        resource_type: record.resource_type,
        state: match record.state {
            EngineState::Pending => RequestState::Pending,
            EngineState::Answered(status) => RequestState::Answered(status),
            EngineState::Failed(error) => RequestState::Failed(error),
        },
        request_headers: headers(record.request_headers),
        response_headers: headers(record.response_headers),
        has_post_data: record.has_post_data,
        navigation: record.navigation,
        from_memory_cache: record.from_memory_cache,
        redirect_chain_start: record.redirect_chain_start,
        started_at_ms: record.started_at_ms,
        response_ms: record.response_ms,
        duration_ms: record.duration_ms,
        encoded_bytes: record.encoded_bytes,
    }
}

/// The console's type names (puppeteer's, `warning` printed as `warn`) as the WIT enum.
fn kind(kind: &str) -> MessageKind {
    match kind {
        "log" => MessageKind::Log,
        "debug" => MessageKind::Debug,
        "info" => MessageKind::Info,
        "warn" | "warning" => MessageKind::Warning,
        "error" => MessageKind::Error,
        "dir" => MessageKind::Dir,
        "dirxml" => MessageKind::Dirxml,
        "table" => MessageKind::Table,
        "trace" => MessageKind::Trace,
        "clear" => MessageKind::Clear,
        "startGroup" => MessageKind::StartGroup,
        "startGroupCollapsed" => MessageKind::StartGroupCollapsed,
        "endGroup" => MessageKind::EndGroup,
        "assert" => MessageKind::Assert,
        "profile" => MessageKind::Profile,
        "profileEnd" => MessageKind::ProfileEnd,
        "count" => MessageKind::Count,
        "timeEnd" => MessageKind::TimeEnd,
        "verbose" => MessageKind::Verbose,
        _ => MessageKind::Other,
    }
}

fn message(record: MessageRecord) -> ConsoleMessage {
    ConsoleMessage {
        id: record.id,
        kind: kind(&record.kind),
        text: record.text,
        argument_count: u32::try_from(record.argument_count).unwrap_or(u32::MAX),
        arguments: record.arguments,
        stack: record.stack,
        uncaught: record.uncaught,
    }
}

/// Called from the `pages` host implementation.
impl CallState {
    pub(super) async fn request_records(
        &mut self,
        handle: Resource<PageHandle>,
        include_preserved: bool,
    ) -> wasmtime::Result<Vec<NetworkRequest>> {
        self.dispatch(&NETWORK_REQUESTS, async |call| {
            let records = match call.page(&handle).await? {
                Ok(page) => Collectors::of(page)
                    .map(|collectors| collectors.network_records(include_preserved))
                    .unwrap_or_default(),
                Err(_) => Vec::new(),
            };
            Ok(records.into_iter().map(request).collect())
        })
        .await
    }

    pub(super) async fn message_records(
        &mut self,
        handle: Resource<PageHandle>,
        include_preserved: bool,
    ) -> wasmtime::Result<Vec<ConsoleMessage>> {
        self.dispatch(&CONSOLE_MESSAGES, async |call| {
            let records = match call.page(&handle).await? {
                Ok(page) => Collectors::of(page)
                    .map(|collectors| collectors.console_records(include_preserved))
                    .unwrap_or_default(),
                Err(_) => Vec::new(),
            };
            Ok(records.into_iter().map(message).collect())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_console_type_has_its_kind() {
        for (name, expected) in [
            ("warn", MessageKind::Warning),
            ("startGroupCollapsed", MessageKind::StartGroupCollapsed),
            ("timeEnd", MessageKind::TimeEnd),
            ("somethingNew", MessageKind::Other),
        ] {
            assert_eq!(kind(name), expected, "{name}");
        }
    }
}
