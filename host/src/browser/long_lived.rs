//! What a page keeps doing after the call that started it: a performance trace and a
//! screencast run until a later call stops them. A tool whose policy does not grant
//! `long-lived` gets them ended with its call (the dispatcher asks for it).

use super::McpPage;

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

impl McpPage {
    /// The long-lived effects running on this page now.
    pub fn long_lived_effects(&self) -> Vec<LongLived> {
        let mut running = Vec::new();
        if self.trace.is_some() {
            running.push(LongLived::Trace);
        }
        if self.screencast.is_some() {
            running.push(LongLived::Screencast);
        }
        running
    }

    /// Stops `effect` and drops what it recorded.
    pub async fn end_long_lived(&mut self, effect: LongLived) {
        match effect {
            LongLived::Trace => {
                if let Some(recording) = self.trace.take()
                    && let Err(error) = super::trace::stop(&self.page, recording).await
                {
                    tracing::warn!(%error, "stopping a trace at the end of its call failed");
                }
            }
            LongLived::Screencast => {
                if let Some(recording) = self.screencast.take()
                    && let Err(error) = self.finish_recording(recording).await
                {
                    tracing::warn!(%error, "stopping a screencast at the end of its call failed");
                }
            }
        }
    }
}
