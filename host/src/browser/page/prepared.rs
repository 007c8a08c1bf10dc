//! An input action in two halves: prepared while the session is held (its elements resolved
//! from snapshot uids, which are the page's state), then performed on the page's link, where
//! the action and the wait for what it caused can run with the session given back
//! (`--experimentalParallelPages`).

use super::actions::interaction_failed;
use super::{McpPage, PageLink, input, settle};

/// An input action, its elements resolved, to perform on the page's link.
pub struct Action {
    kind: Kind,
    /// The element a failure is reported against (the reference's "Failed to interact with
    /// the element with uid ..."); `None`: the action's own error is the message.
    uid: Option<String>,
}

enum Kind {
    Hover {
        object_id: String,
    },
    Fill {
        object_id: String,
        value: String,
    },
    Type {
        text: String,
        submit_key: Option<String>,
    },
    Press {
        key: String,
    },
    Drag {
        from: String,
        to: String,
    },
    Upload {
        object_id: String,
        paths: Vec<String>,
    },
    Click {
        object_id: String,
        count: u32,
    },
    /// A point in the viewport: a node in a cross-process frame, or coordinates.
    ClickAt {
        point: (f64, f64),
        count: u32,
    },
}

impl Action {
    fn on(uid: &str, kind: Kind) -> Action {
        let uid = Some(uid.into());
        Action { kind, uid }
    }

    fn plain(kind: Kind) -> Action {
        Action { kind, uid: None }
    }
}

impl McpPage {
    pub async fn hover(&self, uid: &str) -> Result<Action, String> {
        let object_id = self.resolve_element(uid).await?;
        Ok(Action::on(uid, Kind::Hover { object_id }))
    }

    pub async fn fill(&self, uid: &str, value: &str) -> Result<Action, String> {
        let object_id = self.resolve_element(uid).await?;
        let value = value.into();
        Ok(Action::on(uid, Kind::Fill { object_id, value }))
    }

    pub fn type_text(&self, text: &str, submit_key: Option<&str>) -> Action {
        let submit_key = submit_key.map(String::from);
        let text = text.into();
        Action::plain(Kind::Type { text, submit_key })
    }

    pub fn press_key(&self, key: &str) -> Action {
        Action::plain(Kind::Press { key: key.into() })
    }

    pub async fn drag(&self, from_uid: &str, to_uid: &str) -> Result<Action, String> {
        let from = self.resolve_element(from_uid).await?;
        let to = self.resolve_element(to_uid).await?;
        Ok(Action::plain(Kind::Drag { from, to }))
    }

    pub async fn upload_files(&self, uid: &str, paths: &[String]) -> Result<Action, String> {
        let object_id = self.resolve_element(uid).await?;
        let paths = paths.to_vec();
        Ok(Action::plain(Kind::Upload { object_id, paths }))
    }

    /// A click on the element's centre, `count` times.
    pub async fn click(&self, uid: &str, count: u32) -> Result<Action, String> {
        // A node in a cross-process iframe is reached through that frame's own target.
        if let Some(point) = self.frame_click_at(uid).await? {
            return Ok(Action::on(uid, Kind::ClickAt { point, count }));
        }
        let object_id = self.resolve_element(uid).await?;
        Ok(Action::on(uid, Kind::Click { object_id, count }))
    }

    /// A click at viewport coordinates (`click_at`, `--experimentalVision`), `count` times.
    pub fn click_at(&self, x: f64, y: f64, count: u32) -> Result<Action, String> {
        if !x.is_finite() || !y.is_finite() {
            return Err(format!(
                "The coordinates ({x}, {y}) are not finite numbers."
            ));
        }
        let point = (x, y);
        Ok(Action::plain(Kind::ClickAt { point, count }))
    }
}

impl PageLink {
    /// Performs the action, then waits for the page to settle. Returns the URL it navigated to,
    /// if it did.
    pub async fn perform(&self, action: Action) -> Result<Option<String>, String> {
        let work = async {
            let done = run(self, &action.kind).await;
            match &action.uid {
                Some(uid) => done.map_err(|error| interaction_failed(uid, &error)),
                None => done,
            }
        };
        let (_, navigated) = settle::after_action(self, work).await?;
        Ok(navigated)
    }
}

async fn run(link: &PageLink, kind: &Kind) -> Result<(), String> {
    let (page, raw) = (&link.page, &*link.raw);
    match kind {
        Kind::Hover { object_id } => input::hover(page, object_id).await,
        Kind::Fill { object_id, value } => input::fill(page, raw, object_id, value).await,
        Kind::Type { text, submit_key } => {
            input::type_text(page, raw, text).await?;
            match submit_key {
                Some(key) => input::press_named_key(page, raw, key).await,
                None => Ok(()),
            }
        }
        Kind::Press { key } => input::press_key(page, raw, key).await,
        Kind::Drag { from, to } => input::drag(page, from, to).await,
        Kind::Upload { object_id, paths } => input::upload_files(page, object_id, paths).await,
        Kind::Click { object_id, count } => input::click_times(page, object_id, *count).await,
        Kind::ClickAt { point, count } => input::click_at(page, *point, *count).await,
    }
}
