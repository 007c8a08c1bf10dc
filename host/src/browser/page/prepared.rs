//! An input action in two halves: prepared while the session is held (its elements resolved
//! from snapshot uids, which are the page's state), then performed on the page's link, where
//! the action and the wait for what it caused can run with the session given back
//! (`--experimentalParallelPages`).

use super::actions::interaction_failed;
use super::{McpPage, PageLink, input, settle};

/// An input action, its elements resolved, to perform on the page's link.
pub struct Action(Kind);

enum Kind {
    Hover {
        uid: String,
        object_id: String,
    },
    Fill {
        uid: String,
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
        uid: String,
        object_id: String,
        count: u32,
    },
    /// A point in the viewport: a node in a cross-process frame (by uid), or coordinates.
    ClickAt {
        uid: Option<String>,
        point: (f64, f64),
        count: u32,
    },
}

impl McpPage {
    pub async fn hover(&self, uid: &str) -> Result<Action, String> {
        let object_id = self.resolve_element(uid).await?;
        Ok(Action(Kind::Hover {
            uid: uid.into(),
            object_id,
        }))
    }

    pub async fn fill(&self, uid: &str, value: &str) -> Result<Action, String> {
        let object_id = self.resolve_element(uid).await?;
        let value = value.into();
        Ok(Action(Kind::Fill {
            uid: uid.into(),
            object_id,
            value,
        }))
    }

    pub fn type_text(&self, text: &str, submit_key: Option<&str>) -> Action {
        let submit_key = submit_key.map(String::from);
        Action(Kind::Type {
            text: text.into(),
            submit_key,
        })
    }

    pub fn press_key(&self, key: &str) -> Action {
        Action(Kind::Press { key: key.into() })
    }

    pub async fn drag(&self, from_uid: &str, to_uid: &str) -> Result<Action, String> {
        let from = self.resolve_element(from_uid).await?;
        let to = self.resolve_element(to_uid).await?;
        Ok(Action(Kind::Drag { from, to }))
    }

    pub async fn upload_files(&self, uid: &str, paths: &[String]) -> Result<Action, String> {
        let object_id = self.resolve_element(uid).await?;
        let paths = paths.to_vec();
        Ok(Action(Kind::Upload { object_id, paths }))
    }

    /// A click on the element's centre, `count` times.
    pub async fn click(&self, uid: &str, count: u32) -> Result<Action, String> {
        // A node in a cross-process iframe is reached through that frame's own target.
        if let Some(point) = self.frame_click_at(uid).await? {
            return Ok(Action(Kind::ClickAt {
                uid: Some(uid.into()),
                point,
                count,
            }));
        }
        let object_id = self.resolve_element(uid).await?;
        Ok(Action(Kind::Click {
            uid: uid.into(),
            object_id,
            count,
        }))
    }

    /// A click at viewport coordinates (`click_at`, `--experimentalVision`), `count` times.
    pub fn click_at(&self, x: f64, y: f64, count: u32) -> Result<Action, String> {
        if !x.is_finite() || !y.is_finite() {
            return Err(format!(
                "The coordinates ({x}, {y}) are not finite numbers."
            ));
        }
        Ok(Action(Kind::ClickAt {
            uid: None,
            point: (x, y),
            count,
        }))
    }
}

impl PageLink {
    /// Performs the action, then waits for the page to settle. Returns the URL it navigated to,
    /// if it did.
    pub async fn perform(&self, action: Action) -> Result<Option<String>, String> {
        let page = &self.page;
        let work = async {
            match &action.0 {
                Kind::Hover { uid, object_id } => input::hover(page, object_id)
                    .await
                    .map_err(|error| interaction_failed(uid, &error)),
                Kind::Fill {
                    uid,
                    object_id,
                    value,
                } => input::fill(page, object_id, value)
                    .await
                    .map_err(|error| interaction_failed(uid, &error)),
                Kind::Type { text, submit_key } => {
                    input::type_text(page, text).await?;
                    match submit_key {
                        Some(key) => input::press_named_key(page, key).await,
                        None => Ok(()),
                    }
                }
                Kind::Press { key } => input::press_key(page, key).await,
                Kind::Drag { from, to } => input::drag(page, from, to).await,
                Kind::Upload { object_id, paths } => {
                    input::upload_files(page, object_id, paths).await
                }
                Kind::Click {
                    uid,
                    object_id,
                    count,
                } => input::click_times(page, object_id, *count)
                    .await
                    .map_err(|error| interaction_failed(uid, &error)),
                Kind::ClickAt { uid, point, count } => {
                    let clicked = input::click_at(page, *point, *count).await;
                    match uid {
                        Some(uid) => clicked.map_err(|error| interaction_failed(uid, &error)),
                        None => clicked,
                    }
                }
            }
        };
        let (_, navigated) = settle::after_action(self, work).await?;
        Ok(navigated)
    }
}
