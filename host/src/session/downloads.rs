//! A session's downloads (`--experimentalDownloads`): each browser context the session works
//! in saves its downloads into the session's folder, and the session follows their events on
//! every (re)connection, taking only those of its own pages in a shared browser.

use super::{Session, SessionState};
use crate::browser::features::downloads::{Download, Downloads, OwnsFrame};
use std::sync::Arc;
use std::time::Duration;

/// How long an answer waits for a download in progress to finish.
const FINISH_WAIT: Duration = Duration::from_secs(10);

impl Session {
    /// Saves the downloads of the session's pages into `downloads`' folder.
    pub fn with_downloads(self, downloads: Downloads) -> Session {
        if let Ok(mut state) = self.state.try_lock() {
            state.downloads = Some(Arc::new(downloads));
        }
        self
    }
}

impl SessionState {
    /// After a (re)connection: downloads of the session's context go to its folder, and their
    /// events are followed for as long as this connection lives.
    pub(super) async fn follow_downloads(&mut self) -> Result<(), String> {
        let Some(downloads) = self.downloads.clone() else {
            return Ok(());
        };
        let context = self.scope.as_ref().and_then(|scope| scope.context.clone());
        let browser = self.browser()?;
        downloads.allow(browser, context.as_deref()).await?;
        // Named contexts a reconnection kept report to this connection too.
        for kept in self.contexts.values() {
            downloads.allow(browser, Some(kept)).await?;
        }
        let owns_frame: OwnsFrame = match self.scope {
            // A browser of its own: every download is the session's.
            None => Arc::new(|_: &str| true),
            Some(_) => {
                let watch = self.watch.clone();
                Arc::new(move |frame: &str| watch.has_page_target(frame))
            }
        };
        let raw = self.raw_link().ok_or("The browser is not running.")?;
        let follow = downloads.follow(browser, raw, owns_frame).await?;
        self.downloads_followed = Some(super::watch::AbortOnDrop(tokio::spawn(follow)));
        Ok(())
    }

    /// A new browser context of the session (a named isolated one) saves its downloads to the
    /// session's folder too.
    pub(super) async fn allow_downloads_in(&self, context: &str) -> Result<(), String> {
        match &self.downloads {
            Some(downloads) => downloads.allow(self.browser()?, Some(context)).await,
            None => Ok(()),
        }
    }

    /// A call begins: the downloads it starts are counted against its limit.
    pub fn begin_downloads_call(&self) {
        if let Some(downloads) = &self.downloads {
            downloads.begin_call();
        }
    }

    /// The downloads to list in this answer (`None` without `--experimentalDownloads`): those
    /// not listed as finished yet, after waiting a while for those in progress.
    pub async fn downloads_to_report(&self) -> Option<Vec<Download>> {
        let downloads = self.downloads.as_ref()?;
        Some(downloads.to_report(FINISH_WAIT).await)
    }
}
