//! The open live views, by token, and what each answers: the viewer page, its frames, the
//! person's input, Done. Served by the loopback listener (stdio, [`super::listener`]) and by a
//! tenant's endpoint under `serve` ([`super::tenant`]), each after its own checks. A token is
//! 256 random bits, registered for one request and taken off when it ends: a wrong, stale or
//! ended token gets the same 404.

use super::{Input, MAX_TEXT, ViewState};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

/// The viewer: one page, its script inline.
const VIEWER: &str = include_str!("viewer.html");
/// How long the viewer's request for a newer frame may wait.
const FRAME_WAIT: Duration = Duration::from_secs(10);
/// The largest input message.
const MAX_BODY: usize = 4 * MAX_TEXT + 1024;
/// What a wrong, stale, ended or foreign URL is told (the same, so a guess learns nothing).
pub const NO_VIEW: &str = "No live view here: the link is wrong, its view has ended (Done was pressed or the time ran out), or it was opened in another browser already. Ask the agent for a new one.";

/// Who may open a view.
pub enum Owner {
    /// Anyone who reaches the server's loopback listener with the token (stdio's one user).
    Loopback,
    /// The person a tenant's agent sent the URL to (`serve`).
    Tenant(super::tenant::Binding),
}

/// One registered view.
#[derive(Clone)]
pub struct Registered {
    pub state: Arc<ViewState>,
    pub owner: Arc<Owner>,
}

static VIEWS: LazyLock<Mutex<HashMap<String, Registered>>> = LazyLock::new(Default::default);

fn views() -> std::sync::MutexGuard<'static, HashMap<String, Registered>> {
    VIEWS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Serves `state` under `token` for `owner` until [`unregister`].
pub fn register(token: &str, state: Arc<ViewState>, owner: Owner) {
    views().insert(
        token.to_string(),
        Registered {
            state,
            owner: Arc::new(owner),
        },
    );
}

/// Takes a view off: its URL is refused from now on.
pub fn unregister(token: &str) {
    views().remove(token);
}

/// The view registered under `token`, if any.
pub fn get(token: &str) -> Option<Registered> {
    views().get(token).cloned()
}

/// A fresh token: 32 random bytes, hex.
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| format!("No randomness for a token: {error}"))?;
    Ok(hex::encode(bytes))
}

/// The token and the rest of a `/live/<token>/<rest>` path.
pub fn split_path(path: &str) -> Option<(&str, &str)> {
    path.strip_prefix("/live/")
        .and_then(|tail| tail.split_once('/'))
}

pub type Answer = Response<Full<Bytes>>;

pub fn answer(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Answer {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    let mut set = |name: header::HeaderName, value: &str| {
        if let Ok(value) = header::HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    };
    set(header::CONTENT_TYPE, content_type);
    set(header::CACHE_CONTROL, "no-store");
    set(header::REFERRER_POLICY, "no-referrer");
    set(header::X_FRAME_OPTIONS, "DENY");
    set(
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; img-src blob:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; form-action 'none'",
    );
    response
}

pub fn text(status: StatusCode, body: &str) -> Answer {
    answer(status, "text/plain; charset=utf-8", body.to_string())
}

pub fn no_view() -> Answer {
    text(StatusCode::NOT_FOUND, NO_VIEW)
}

/// One checked request for `view`: `rest` is what follows `/live/<token>/`.
pub async fn route(view: &ViewState, request: Request<Incoming>, rest: &str) -> Answer {
    match (request.method().clone(), rest) {
        (Method::GET, "") => answer(
            StatusCode::OK,
            "text/html; charset=utf-8",
            VIEWER.replace("{{REASON}}", &escape_html(view.reason())),
        ),
        (Method::GET, "frame") => {
            let after = request
                .uri()
                .query()
                .and_then(|query| query.strip_prefix("after="))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            match view.frame_after(after, FRAME_WAIT).await {
                Some(frame) => {
                    let mut response = answer(StatusCode::OK, "image/jpeg", frame.jpeg);
                    let headers = response.headers_mut();
                    for (name, value) in [
                        ("x-frame-seq", frame.seq.to_string()),
                        ("x-viewport", format!("{}x{}", frame.width, frame.height)),
                    ] {
                        if let Ok(value) = header::HeaderValue::from_str(&value) {
                            headers.insert(name, value);
                        }
                    }
                    response
                }
                None => text(StatusCode::NO_CONTENT, ""),
            }
        }
        (Method::POST, "input") => {
            let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
                Ok(body) => body.to_bytes(),
                Err(_) => return text(StatusCode::PAYLOAD_TOO_LARGE, "Input too large."),
            };
            let input: Input = match serde_json::from_slice(&body) {
                Ok(input) => input,
                Err(error) => {
                    return text(StatusCode::BAD_REQUEST, &format!("Unknown input: {error}"));
                }
            };
            match view.dispatch(input).await {
                Ok(()) => text(StatusCode::NO_CONTENT, ""),
                Err(error) => text(StatusCode::BAD_GATEWAY, &error),
            }
        }
        (Method::POST, "done") => {
            view.press_done();
            text(
                StatusCode::OK,
                "Done: the agent goes on. You can close this tab.",
            )
        }
        _ => no_view(),
    }
}

fn escape_html(text: &str) -> String {
    text.chars()
        .map(|character| match character {
            '<' => "&lt;".to_string(),
            '>' => "&gt;".to_string(),
            '&' => "&amp;".to_string(),
            '"' => "&quot;".to_string(),
            '\'' => "&#39;".to_string(),
            other => other.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_long() {
        let first = new_token().expect("token");
        assert_eq!(first.len(), 64);
        assert_ne!(first, new_token().expect("token"));
    }

    #[test]
    fn the_reason_cannot_write_markup() {
        assert_eq!(
            escape_html("<script>'\"&"),
            "&lt;script&gt;&#39;&quot;&amp;"
        );
    }

    #[test]
    fn paths_name_a_token_and_what_follows() {
        assert_eq!(split_path("/live/abc/frame"), Some(("abc", "frame")));
        assert_eq!(split_path("/live/abc/"), Some(("abc", "")));
        assert_eq!(split_path("/live/abc"), None);
        assert_eq!(split_path("/mcp"), None);
    }
}
