//! Recovery (beyond 1.11.0, `--experimentalRecovery`): when the browser this session uses dies
//! (a crash, an out-of-memory kill, a kill), the next call's relaunch reopens the pages that
//! were open, at the URLs they last showed, under the ids the agent already knows, selects the
//! page that was selected, restores the named session that was active (`--sessionStore`, before
//! the pages reopen, so they load signed in), and that answer says once what came back and what
//! did not. What a page held only in memory (form input, scroll position, script state) is
//! lost, and said so.
//! A reopened page keeps its id; no id is ever given to another page. The same reopening
//! serves an idle tenant whose pages were closed to give their memory back (`serve
//! --discard-idle-secs`, `discard_pages`).

use super::SessionState;
use std::collections::BTreeMap;
use std::time::Duration;

/// How a relaunch's note begins.
pub(super) const RELAUNCHED: &str =
    "The browser had stopped (a crash or a kill) and was started again";

/// A page as it was last seen: where to reopen it.
#[derive(Clone, Debug)]
pub(super) struct Remembered {
    url: String,
    isolated_context: Option<String>,
}

/// What the dead browser had open.
pub(super) struct Lost {
    pages: BTreeMap<u32, Remembered>,
    selected: Option<u32>,
}

impl SessionState {
    /// Remembers where every page is (after each call, with `--experimentalRecovery`): a dead
    /// browser can no longer be asked. Each URL is the client's own view of the page, read
    /// from the DevTools client's state, not from the page.
    pub async fn remember_pages(&mut self) {
        if !self.options.recovery {
            return;
        }
        let mut remembered = BTreeMap::new();
        for (id, page) in &self.pages {
            let url = page.url().await;
            if url.is_empty() {
                if let Some(known) = self.remembered.get(id) {
                    remembered.insert(*id, known.clone());
                }
                continue;
            }
            remembered.insert(
                *id,
                Remembered {
                    url,
                    isolated_context: page.isolated_context.clone(),
                },
            );
        }
        self.remembered = remembered;
    }

    /// Before a relaunch: what the browser that died had open, to reopen.
    pub(super) fn lost_pages(&mut self) -> Option<Lost> {
        if !self.options.recovery || !self.had_browser {
            return None;
        }
        let pages = std::mem::take(&mut self.remembered);
        (!pages.is_empty()).then_some(Lost {
            pages,
            selected: self.selected,
        })
    }

    /// Closes every page of an idle tenant (`serve --discard-idle-secs`), remembering where
    /// each was: their renderers and window surfaces go back to the machine, the browser
    /// context (cookies, storage) stays, and the next call reopens them under their ids
    /// (`ensure_browser`). Returns how many were closed.
    pub async fn discard_pages(&mut self, idle: Duration) -> usize {
        let alive = self
            .browser
            .as_ref()
            .is_some_and(|browser| browser.connection().is_alive());
        if self.discarded.is_some() || self.pages.is_empty() || !alive {
            return 0;
        }
        let mut pages = BTreeMap::new();
        for (id, page) in &self.pages {
            let url = page.url().await;
            let url = if url.is_empty() {
                "about:blank".to_string()
            } else {
                url
            };
            let isolated_context = page.isolated_context.clone();
            pages.insert(
                *id,
                Remembered {
                    url,
                    isolated_context,
                },
            );
        }
        let ids: Vec<u32> = pages.keys().copied().collect();
        self.close_pages(&ids).await;
        // The recovery record must not reopen them a second time after a relaunch.
        self.remembered.clear();
        let selected = self.selected.take();
        self.publish_pages();
        self.discarded = Some((Lost { pages, selected }, idle));
        ids.len()
    }

    /// After a relaunch (or an idle tenant's next call): reopens each lost page under its id,
    /// and notes for the next answer what came back, the note beginning with `why`.
    pub(super) async fn reopen(&mut self, lost: Lost, why: &str) {
        // The relaunch opened a blank first page: the lost pages take its place.
        let blank: Vec<u32> = self.pages.keys().copied().collect();
        let mut reopened = Vec::new();
        let mut failed = Vec::new();
        for (id, page) in &lost.pages {
            let opened = self
                .new_page(&page.url, true, page.isolated_context.as_deref(), None)
                .await;
            match opened {
                Ok(new_id) => {
                    if let Some(mut tab) = self.pages.remove(&new_id) {
                        tab.id = *id;
                        self.pages.insert(*id, tab);
                    }
                    reopened.push(format!("{id} ({})", page.url));
                    // The blank page goes once one came back: it must not take the place of
                    // a lost page under a tenant's page limit.
                    self.close_pages(&blank).await;
                }
                Err(error) => failed.push(format!("{id} ({}): {error}", page.url)),
            }
        }
        self.selected = lost
            .selected
            .filter(|id| self.pages.contains_key(id))
            .or_else(|| self.pages.keys().next().copied());
        self.publish_pages();
        let mut note = String::from(why);
        if !reopened.is_empty() {
            note.push_str(&format!(
                "; these pages were reopened at their last URLs, with the same ids: {}. What they held only in memory (form input, scroll position, script state) is lost",
                reopened.join(", ")
            ));
        }
        if !failed.is_empty() {
            note.push_str(&format!(
                "; these could not be reopened: {}",
                failed.join("; ")
            ));
        }
        note.push('.');
        self.recovery_note = Some(note);
    }

    /// Adds what else a relaunch brought back (a named session) to its one note.
    pub(super) fn add_to_recovery_note(&mut self, part: &str) {
        let note = match self.recovery_note.take() {
            Some(note) => format!("{}; {part}.", note.trim_end_matches('.')),
            None => format!("{RELAUNCHED}; {part}."),
        };
        self.recovery_note = Some(note);
    }

    /// Closes `ids` (those still open).
    async fn close_pages(&mut self, ids: &[u32]) {
        for id in ids {
            if let Some(page) = self.pages.remove(id) {
                self.closing.insert(super::pages::target_key(page.cdp()));
                let _ = page.cdp().clone().close().await;
            }
        }
    }

    /// What the last relaunch restored, once.
    pub fn take_recovery_note(&mut self) -> Option<String> {
        self.recovery_note.take()
    }
}
