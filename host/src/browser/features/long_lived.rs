//! What a page keeps doing after the call that started it: a performance trace and a
//! screencast run until a later call stops them. A tool whose policy does not grant
//! `long-lived` gets them ended with its call (the dispatcher asks for it).

use super::performance::Performance;
use super::screencast::Screencast;
use crate::browser::page::McpPage;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LongLived {
    Trace,
    Screencast,
}

impl LongLived {
    pub fn name(self) -> &'static str {
        match self {
            LongLived::Trace => "performance trace",
            LongLived::Screencast => "screencast recording",
        }
    }
}

/// The long-lived effects running on `page` now.
pub fn running(page: &McpPage) -> Vec<LongLived> {
    let mut running = Vec::new();
    if Performance::is_recording(page) {
        running.push(LongLived::Trace);
    }
    if Screencast::is_recording(page) {
        running.push(LongLived::Screencast);
    }
    running
}

/// Stops `effect` on `page` and drops what it recorded.
pub async fn end(page: &mut McpPage, effect: LongLived) {
    let ended = match effect {
        LongLived::Trace => Performance::abandon(page).await,
        LongLived::Screencast => Screencast::abandon(page).await,
    };
    if let Err(error) = ended {
        tracing::warn!(%error, effect = effect.name(), "stopping an effect at the end of its call failed");
    }
}
