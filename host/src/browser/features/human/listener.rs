//! The loopback listener of live views: one per server, bound on first use to 127.0.0.1 on a
//! port the system picks, serving each open view under `/live/<token>/` (the viewer page, its
//! frames, the person's input, Done). A token is 256 random bits, registered for one request
//! and taken off when it ends: a wrong, stale or ended token gets the same 404. Requests must
//! name the listener itself as their `Host` (a rebound DNS name cannot reach it) and, when they
//! say where they come from, come from the viewer's own origin.

use super::{Input, MAX_TEXT, ViewState};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::OnceCell;

/// The viewer: one page, its script inline.
const VIEWER: &str = include_str!("viewer.html");
/// How long the viewer's request for a newer frame may wait.
const FRAME_WAIT: Duration = Duration::from_secs(10);
/// The largest input message.
const MAX_BODY: usize = 4 * MAX_TEXT + 1024;
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// What a wrong, stale or ended URL is told (the same, so a guess learns nothing).
const NO_VIEW: &str = "No live view here: the link is wrong, or its view has ended (Done was pressed or the time ran out). Ask the agent for a new one.";

static LISTENER: OnceCell<Listener> = OnceCell::const_new();
static VIEWS: LazyLock<Mutex<HashMap<String, Arc<ViewState>>>> = LazyLock::new(Default::default);

pub struct Listener {
    port: u16,
}

impl Listener {
    /// The server's listener, bound now if it is not yet.
    pub async fn get() -> Result<&'static Listener, String> {
        LISTENER
            .get_or_try_init(|| async {
                let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
                    .await
                    .map_err(|error| {
                        format!("Could not open the live view's loopback listener: {error}")
                    })?;
                let port = listener
                    .local_addr()
                    .map_err(|error| error.to_string())?
                    .port();
                tokio::spawn(accept_loop(listener, port));
                Ok(Listener { port })
            })
            .await
    }

    /// Serves `state` under `token` until [`unregister`]; returns its URL.
    pub fn register(&self, token: &str, state: Arc<ViewState>) -> String {
        views().insert(token.to_string(), state);
        format!("http://127.0.0.1:{}/live/{token}/", self.port)
    }
}

fn views() -> std::sync::MutexGuard<'static, HashMap<String, Arc<ViewState>>> {
    VIEWS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes a view off the listener: its URL is refused from now on.
pub fn unregister(token: &str) {
    views().remove(token);
}

/// A fresh token: 32 random bytes, hex.
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| format!("No randomness for a token: {error}"))?;
    Ok(hex::encode(bytes))
}

async fn accept_loop(listener: tokio::net::TcpListener, port: u16) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| async move {
                Ok::<_, std::convert::Infallible>(serve(request, port).await)
            });
            let _served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

type Answer = Response<Full<Bytes>>;

fn answer(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Answer {
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

fn text(status: StatusCode, body: &str) -> Answer {
    answer(status, "text/plain; charset=utf-8", body.to_string())
}

/// One request: checked, then routed to its view.
async fn serve(request: Request<Incoming>, port: u16) -> Answer {
    let own = format!("127.0.0.1:{port}");
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok());
    if host != Some(own.as_str()) {
        return text(
            StatusCode::FORBIDDEN,
            "Open the live view at the exact address the agent gave (http://127.0.0.1:PORT/...).",
        );
    }
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|value| value.to_str().ok());
    if origin.is_some_and(|origin| origin != format!("http://{own}")) {
        return text(
            StatusCode::FORBIDDEN,
            "Only the live view's own page may send it input.",
        );
    }
    let path = request.uri().path().to_string();
    let Some((token, rest)) = path
        .strip_prefix("/live/")
        .and_then(|tail| tail.split_once('/'))
    else {
        return text(StatusCode::NOT_FOUND, NO_VIEW);
    };
    let Some(view) = views().get(token).cloned() else {
        return text(StatusCode::NOT_FOUND, NO_VIEW);
    };
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
        _ => text(StatusCode::NOT_FOUND, NO_VIEW),
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
}
