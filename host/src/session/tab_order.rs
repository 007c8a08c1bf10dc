//! The order a running browser's tabs are numbered in: oldest first, as the user opened them.
//! `Target.getTargets` does not list targets in creation order (its order was seen to change
//! between two processes attached to the same browser), but Chromium numbers navigation
//! entries from one browser-wide counter, so the first entry of a tab's history says when the
//! tab began.

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::GetNavigationHistoryParams;
use std::time::Duration;

/// How long one tab may take to tell its history; a tab that does not answer goes last.
const HISTORY_WAIT: Duration = Duration::from_secs(2);

/// `pages`, oldest first. Tabs whose history cannot be read follow, in `fallback` order (the
/// rank of each page in the browser's listing).
pub async fn oldest_first(pages: Vec<Page>, fallback: impl Fn(&Page) -> i64) -> Vec<Page> {
    if pages.len() < 2 {
        return pages;
    }
    let firsts = futures::future::join_all(pages.iter().map(first_entry)).await;
    let mut ranked: Vec<((i64, i64), Page)> = pages
        .into_iter()
        .zip(firsts)
        .map(|(page, first)| ((first.unwrap_or(i64::MAX), fallback(&page)), page))
        .collect();
    ranked.sort_by_key(|(rank, _)| *rank);
    ranked.into_iter().map(|(_, page)| page).collect()
}

/// The id of the oldest entry of the tab's history.
async fn first_entry(page: &Page) -> Option<i64> {
    let history = tokio::time::timeout(HISTORY_WAIT, page.execute(GetNavigationHistoryParams {}))
        .await
        .ok()?
        .ok()?;
    history.result.entries.iter().map(|entry| entry.id).min()
}
