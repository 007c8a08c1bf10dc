//! The page scope of a plugin held to URL patterns (see the module above): where a page
//! stands, asked of the browser, judged before a body gets it and after; only the pages this
//! call reached, opened or was given.

use super::super::CLEANUP_TIMEOUT;
use super::CallState;
use crate::browser::McpPage;
use crate::policy::capability::Denied;

impl CallState {
    /// The pages a navigating function opened: of those that appeared since `before` (the
    /// ids it started with), the ones it handed to the guest (a new page, a launched app) and
    /// the popups of a page this call reached or touched (their opener). A page another call
    /// opened meanwhile is not this call's, whenever it appeared.
    pub(super) async fn opened_since(&mut self, before: &[u32], reached: &[u32]) -> Vec<u32> {
        let Some(session) = self.session.as_deref_mut() else {
            return Vec::new();
        };
        session.sync_pages().await;
        let ours: Vec<_> = reached
            .iter()
            .chain(self.touched.iter().map(|(id, _)| id))
            .filter_map(|id| session.page(*id).ok())
            .map(|page| page.cdp().target_id().clone())
            .collect();
        session
            .page_ids()
            .into_iter()
            .filter(|id| !before.contains(id))
            .filter(|id| {
                self.handed.contains(id)
                    || session.page(*id).is_ok_and(|page| {
                        page.cdp()
                            .opener_id()
                            .as_ref()
                            .is_some_and(|opener| ours.contains(opener))
                    })
            })
            .collect()
    }

    /// Checks page `id` before a body reads or acts on it. A page this call saw inside the
    /// patterns that stands outside now moved under the call: it is sent to about:blank, as
    /// a landing is. A page the call had not seen is only refused.
    pub(super) async fn check_scope(&mut self, id: u32) -> Result<(), Denied> {
        let grants = self.grants.clone();
        let Some(session) = self.session.as_deref_mut() else {
            return Ok(());
        };
        let Ok(page) = session.page(id) else {
            // No such page: the body answers that.
            return Ok(());
        };
        let current = committed_url(page).await;
        let seen = self.touched.iter().position(|(known, _)| *known == id);
        if let Err(refused) = grants.check_scope(&current) {
            // The page chose where it went: its URL is page-written wherever it is printed.
            if self.records_page_text {
                self.response.page_written.record(&current);
            }
            return match seen {
                Some(_) => {
                    leave(page).await;
                    grants.check_landed(&current)
                }
                None => Err(refused),
            };
        }
        match seen {
            Some(index) => self.touched[index].1 = current,
            None => self.touched.push((id, current)),
        }
        Ok(())
    }

    /// Checks where each of the pages `ids` (this call's) stands now; one outside the patterns
    /// is sent to about:blank and the call is stopped. No other page is judged.
    pub(super) async fn check_landed(&mut self, ids: &[u32]) -> Result<(), Denied> {
        let grants = self.grants.clone();
        let Some(session) = self.session.as_deref_mut() else {
            return Ok(());
        };
        let mut refused = None;
        for &id in ids {
            let Ok(page) = session.page(id) else {
                continue;
            };
            let current = committed_url(page).await;
            if let Err(denied) = grants.check_landed(&current) {
                if self.records_page_text {
                    self.response.page_written.record(&current);
                }
                leave(page).await;
                refused.get_or_insert(denied);
                continue;
            }
            match self.touched.iter_mut().find(|(known, _)| *known == id) {
                Some(entry) => entry.1 = current,
                None => self.touched.push((id, current)),
            }
        }
        match refused {
            Some(denied) => Err(denied),
            None => Ok(()),
        }
    }
}

/// Where a page stands, as the browser's history says (its last committed entry, same-document
/// moves included): asked at each check rather than taken from events the connection may not
/// have delivered yet. Answered by the browser process, so a busy renderer does not hold it;
/// the tracked URL if the browser does not answer in time.
async fn committed_url(page: &McpPage) -> String {
    let history = crate::browser::cdp("Page.getNavigationHistory", serde_json::json!({}));
    if let Ok(Ok(answer)) = tokio::time::timeout(CLEANUP_TIMEOUT, page.cdp().execute(history)).await
    {
        let index = answer.result["currentIndex"].as_u64().unwrap_or(0) as usize;
        if let Some(url) = answer.result["entries"][index]["url"].as_str() {
            return url.to_string();
        }
    }
    page.url().await
}

/// Sends a page outside the patterns to about:blank (bounded: a page that does not answer
/// stays, and the call is stopped anyway).
async fn leave(page: &McpPage) {
    let blank = crate::browser::cdp("Page.navigate", serde_json::json!({ "url": "about:blank" }));
    let _left = tokio::time::timeout(CLEANUP_TIMEOUT, page.cdp().execute(blank)).await;
}
