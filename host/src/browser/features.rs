//! What a page can do beyond the page model, one type per capability, each keeping its state
//! in its page's slot (`McpPage::features`): console and network [`collectors`], CSS
//! [`styles`], [`performance`] traces, [`memory`] (heap snapshots), [`screencast`]s, [`page_tools`],
//! [`extensions`], [`pwa`]s, what a page's contexts hold ([`renderer_memory`]) and what a tenant's browser context holds ([`footprint`]). Features may use the page model and `cdp`, never the other way.

pub mod call_timers;
pub mod call_workers;
pub mod collectors;
pub mod downloads;
pub mod extensions;
pub mod footprint;
pub mod human;
pub mod long_lived;
pub mod memory;
pub mod page_tools;
pub mod performance;
pub mod pwa;
pub mod renderer_memory;
pub mod screencast;
pub mod sessions;
pub mod styles;

use super::page::McpPage;

/// Attaches the features every page has from its start: the collectors, attached right after
/// the page is created to miss nothing.
pub async fn attach(page: &mut McpPage, redact_network_headers: bool) -> Result<(), String> {
    let collectors = collectors::Collectors::attach(page.cdp()).await?;
    collectors.set_redact_network_headers(redact_network_headers);
    page.features_mut().insert(collectors);
    Ok(())
}
