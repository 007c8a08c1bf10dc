//! Handing a live view's URL to the client while a call waits for a person (`request_human`):
//! a URL-mode elicitation (MCP 2025-11-25) to a client that declared `elicitation.url`; for
//! every client the progress messages of a call that asked for progress name the URL too
//! (see `progress`). The call itself ends when the person presses Done in the live view, not
//! when the client answers the elicitation.

use crate::activity::HumanWanted;
use rmcp::RoleServer;
use rmcp::model::ElicitRequestParams;
use rmcp::service::Peer;
use std::time::Duration;

/// How long the elicitation request may stay open: as long as a person may take.
const ELICITATION_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// Whether the client takes URL-mode elicitations.
pub fn takes_url_elicitation(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .and_then(|info| info.capabilities.elicitation.clone())
        .is_some_and(|elicitation| elicitation.url.is_some())
}

/// Asks a client that takes URL-mode elicitations to open the live view; the request runs
/// beside the call (aborted when the call ends).
pub fn elicit(
    peer: &Peer<RoleServer>,
    wanted: &HumanWanted,
) -> Option<tokio::task::JoinHandle<()>> {
    if !takes_url_elicitation(peer) {
        return None;
    }
    let peer = peer.clone();
    let params = ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message: format!(
            "The agent needs a person: {}. Open the live view, do it on the page, then press Done.",
            wanted.reason
        ),
        url: wanted.url.clone(),
        // The URL's token is unique to this request; the id is not a secret, so not the token.
        elicitation_id: format!("live-view-{}", next_id()),
    };
    Some(tokio::spawn(async move {
        if let Err(error) = peer
            .create_elicitation_with_timeout(params, Some(ELICITATION_TIMEOUT))
            .await
        {
            tracing::debug!(%error, "the live view's elicitation was not answered");
        }
    }))
}

fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
