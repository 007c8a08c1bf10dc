//! A person in the loop (`request_human`, beyond 1.11.0): a live view of one page that a
//! person opens in their own browser. The page's screencast (`Page.startScreencast` JPEG
//! frames) goes to the viewer, and the person's clicks, keys and scrolls come back as CDP input
//! (`Input.dispatchMouseEvent`, `Input.dispatchKeyEvent`, `Input.insertText`), scaled to the
//! page's viewport. The view lives at a one-time URL ([`views`]): on a loopback listener
//! ([`listener`]) on stdio, on the server's own HTTP listener for a tenant under `serve`
//! ([`tenant`]). An unguessable token, valid for this request only; once the person presses
//! Done or the time runs out, the URL answers 404 like any wrong one.

mod listener;
pub mod tenant;
mod views;

use crate::browser::cdp::{cdp, send, timeouts};
use crate::browser::page::{PageLink, settle};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chromiumoxide::cdp::browser_protocol::page::{EventScreencastFrame, ScreencastFrameAckParams};
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The largest frame the screencast sends, in device pixels (either side).
const MAX_FRAME_SIDE: u32 = 1600;
/// JPEG quality of the frames: enough to read a form, small enough to stream.
const FRAME_QUALITY: u32 = 70;

/// One screencast frame as the viewer gets it.
#[derive(Clone)]
pub struct Frame {
    /// Counts up from 1; the viewer asks for the first frame after the one it has.
    pub seq: u64,
    pub jpeg: bytes::Bytes,
    /// The page's viewport in CSS pixels, which input coordinates are scaled to.
    pub width: f64,
    pub height: f64,
}

/// What one live view shares with the listener that serves it.
pub struct ViewState {
    /// The page; each input is an action settled as the tools' are (a submit's navigation
    /// has loaded before the viewer sends the next input, or Done).
    link: PageLink,
    reason: String,
    frames: watch::Sender<Option<Frame>>,
    done: watch::Sender<bool>,
}

/// How a wait for a person ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The person pressed Done, after this long.
    Done(Duration),
    /// No one pressed Done within the limit.
    TimedOut(Duration),
}

/// An open live view; closed (its URL refused from then on, the screencast stopped) by
/// [`LiveView::close`], or by dropping it.
pub struct LiveView {
    token: String,
    url: String,
    state: Arc<ViewState>,
    pump: tokio::task::JoinHandle<()>,
}

impl LiveView {
    /// Opens a live view of `page` for `reason`: registers a fresh token on the tenant's
    /// endpoint when the call runs for one ([`tenant::current`]), else on the loopback
    /// listener (bound on first use), and starts the page's screencast.
    pub async fn open(link: PageLink, reason: &str) -> Result<LiveView, String> {
        let page = link.cdp().clone();
        let token = views::new_token()?;
        let (url, owner) = match tenant::current() {
            Some(endpoint) => {
                let base = endpoint.base?;
                let url = format!("{}/live/{token}/", base.trim_end_matches('/'));
                let binding = tenant::Binding::new(&endpoint.tenant, &base);
                (url, views::Owner::Tenant(binding))
            }
            None => (
                listener::Listener::get().await?.url(&token),
                views::Owner::Loopback,
            ),
        };
        let frames = page
            .event_listener::<EventScreencastFrame>()
            .await
            .map_err(|error| format!("Could not follow the page's screencast: {error}"))?;
        send(
            &page,
            cdp(
                "Page.startScreencast",
                json!({
                    "format": "jpeg",
                    "quality": FRAME_QUALITY,
                    "maxWidth": MAX_FRAME_SIDE,
                    "maxHeight": MAX_FRAME_SIDE,
                    "everyNthFrame": 1,
                }),
            ),
            timeouts::COMMAND,
        )
        .await
        .map_err(|error| format!("Could not start the page's screencast: {error}"))?;
        let state = Arc::new(ViewState {
            link,
            reason: reason.to_string(),
            frames: watch::channel(None).0,
            done: watch::channel(false).0,
        });
        let pump = tokio::spawn(pump_frames(page, frames, state.clone()));
        views::register(&token, state.clone(), owner);
        Ok(LiveView {
            token,
            url,
            state,
            pump,
        })
    }

    /// The one-time URL a person opens.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Waits until the person presses Done, at most `limit`.
    pub async fn wait(&self, limit: Duration) -> Ended {
        let started = Instant::now();
        let mut done = self.state.done.subscribe();
        match tokio::time::timeout(limit, done.wait_for(|pressed| *pressed)).await {
            Ok(Ok(_)) => Ended::Done(started.elapsed()),
            _ => Ended::TimedOut(limit),
        }
    }

    /// Refuses the URL from now on and stops the screencast.
    pub async fn close(self) {
        views::unregister(&self.token);
        self.pump.abort();
        let _stopped = send(
            self.state.link.cdp(),
            cdp("Page.stopScreencast", json!({})),
            timeouts::COMMAND,
        )
        .await;
    }
}

impl Drop for LiveView {
    /// A call that ends without [`LiveView::close`] (its wall clock ran out) still takes its
    /// URL off the listener at once.
    fn drop(&mut self) {
        views::unregister(&self.token);
        self.pump.abort();
    }
}

/// Keeps the newest frame for the viewer and acknowledges each (Chrome sends the next only
/// after an acknowledgement).
async fn pump_frames(
    page: chromiumoxide::Page,
    mut frames: chromiumoxide::listeners::EventStream<EventScreencastFrame>,
    state: Arc<ViewState>,
) {
    let mut seq = 0;
    while let Some(frame) = frames.next().await {
        let _acked = page
            .execute(ScreencastFrameAckParams::new(frame.session_id))
            .await;
        let data: &str = frame.data.as_ref();
        let Ok(jpeg) = STANDARD.decode(data) else {
            continue;
        };
        seq += 1;
        state.frames.send_replace(Some(Frame {
            seq,
            jpeg: jpeg.into(),
            width: frame.metadata.device_width,
            height: frame.metadata.device_height,
        }));
    }
}

/// What the viewer sends: positions as fractions (0 to 1) of the frame it shows, so the host
/// alone scales them to the page's viewport.
#[derive(Debug, serde::Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Input {
    Click { x: f64, y: f64 },
    Key { key: String },
    Text { text: String },
    Wheel { x: f64, y: f64, dx: f64, dy: f64 },
}

/// The most text one input message may carry (a paste).
pub const MAX_TEXT: usize = 10_000;

impl ViewState {
    /// Presses Done: the waiting call returns.
    pub fn press_done(&self) {
        self.done.send_replace(true);
    }

    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The first frame newer than `after`, waiting at most `limit` for one.
    pub async fn frame_after(&self, after: u64, limit: Duration) -> Option<Frame> {
        let mut frames = self.frames.subscribe();
        let newer = frames.wait_for(|frame| frame.as_ref().is_some_and(|f| f.seq > after));
        match tokio::time::timeout(limit, newer).await {
            Ok(Ok(frame)) => frame.clone(),
            // Nothing newer: the newest there is, if any, so the viewer keeps its picture.
            _ => self.frames.borrow().clone(),
        }
    }

    /// Forwards one input of the person's to the page, and waits for what it caused.
    pub async fn dispatch(&self, input: Input) -> Result<(), String> {
        settle::after_action(&self.link, self.send_input(input))
            .await
            .map(drop)
    }

    async fn send_input(&self, input: Input) -> Result<(), String> {
        let (width, height) = self
            .frames
            .borrow()
            .as_ref()
            .map_or((0.0, 0.0), |frame| (frame.width, frame.height));
        let at = |x: f64, y: f64| (x.clamp(0.0, 1.0) * width, y.clamp(0.0, 1.0) * height);
        match input {
            Input::Click { x, y } => {
                let (x, y) = at(x, y);
                self.mouse(json!({ "type": "mouseMoved", "x": x, "y": y }))
                    .await?;
                for kind in ["mousePressed", "mouseReleased"] {
                    self.mouse(json!({
                        "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1,
                    }))
                    .await?;
                }
                Ok(())
            }
            Input::Wheel { x, y, dx, dy } => {
                let (x, y) = at(x, y);
                self.mouse(json!({
                    "type": "mouseWheel", "x": x, "y": y,
                    "deltaX": dx.clamp(-10_000.0, 10_000.0), "deltaY": dy.clamp(-10_000.0, 10_000.0),
                }))
                .await
            }
            Input::Text { text } => {
                let text: String = text.chars().take(MAX_TEXT).collect();
                self.command("Input.insertText", json!({ "text": text }))
                    .await
            }
            Input::Key { key } => {
                let Some(events) = key_events(&key) else {
                    return Ok(());
                };
                for event in events {
                    self.command("Input.dispatchKeyEvent", event).await?;
                }
                Ok(())
            }
        }
    }

    async fn mouse(&self, params: serde_json::Value) -> Result<(), String> {
        self.command("Input.dispatchMouseEvent", params).await
    }

    async fn command(&self, method: &'static str, params: serde_json::Value) -> Result<(), String> {
        send(self.link.cdp(), cdp(method, params), timeouts::COMMAND)
            .await
            .map(drop)
            .map_err(|error| error.to_string())
    }
}

/// The key events for a key as the viewer's browser names it (`KeyboardEvent.key`): one
/// printable character types itself; the named keys a form needs are mapped; others are
/// ignored (`None`).
fn key_events(key: &str) -> Option<Vec<serde_json::Value>> {
    let mut chars = key.chars();
    if let (Some(character), None) = (chars.next(), chars.next()) {
        if character.is_control() {
            return None;
        }
        let text = character.to_string();
        return Some(vec![
            json!({ "type": "keyDown", "key": key, "text": text, "unmodifiedText": text }),
            json!({ "type": "keyUp", "key": key }),
        ]);
    }
    let (code, text) = match key {
        "Enter" => (13, Some("\r")),
        "Backspace" => (8, None),
        "Tab" => (9, None),
        "Escape" => (27, None),
        "Delete" => (46, None),
        "ArrowLeft" => (37, None),
        "ArrowUp" => (38, None),
        "ArrowRight" => (39, None),
        "ArrowDown" => (40, None),
        "Home" => (36, None),
        "End" => (35, None),
        "PageUp" => (33, None),
        "PageDown" => (34, None),
        _ => return None,
    };
    let mut down = json!({
        "type": if text.is_some() { "keyDown" } else { "rawKeyDown" },
        "key": key, "code": key, "windowsVirtualKeyCode": code,
    });
    if let Some(text) = text {
        down["text"] = json!(text);
        down["unmodifiedText"] = json!(text);
    }
    Some(vec![
        down,
        json!({ "type": "keyUp", "key": key, "code": key, "windowsVirtualKeyCode": code }),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_type_characters_and_map_the_keys_a_form_needs() {
        let typed = key_events("a").expect("a character");
        assert_eq!(typed[0]["text"], "a");
        let enter = key_events("Enter").expect("Enter");
        assert_eq!(enter[0]["text"], "\r");
        assert_eq!(enter[0]["windowsVirtualKeyCode"], 13);
        assert_eq!(
            key_events("Backspace").expect("Backspace")[0]["type"],
            "rawKeyDown"
        );
        assert!(key_events("Shift").is_none());
        assert!(key_events("\u{7}").is_none());
    }

    #[test]
    fn input_messages_parse_and_unknown_ones_are_refused() {
        let click: Input =
            serde_json::from_str(r#"{"type":"click","x":0.5,"y":0.25}"#).expect("click");
        assert!(matches!(click, Input::Click { x, y } if x == 0.5 && y == 0.25));
        assert!(serde_json::from_str::<Input>(r#"{"type":"evaluate","code":"1"}"#).is_err());
    }
}
