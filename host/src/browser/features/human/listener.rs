//! The loopback listener of live views (stdio): one per server, bound on first use to
//! 127.0.0.1 on a port the system picks, serving each loopback view under `/live/<token>/`
//! ([`super::views`]). Requests must name the listener itself as their `Host` (a rebound DNS
//! name cannot reach it) and, when they say where they come from, come from the viewer's own
//! origin. A tenant's view is never served here.

use super::views::{self, Answer, Owner};
use http::{Request, StatusCode, header};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::time::Duration;
use tokio::sync::OnceCell;

const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

static LISTENER: OnceCell<Listener> = OnceCell::const_new();

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

    /// The URL of the view registered under `token`.
    pub fn url(&self, token: &str) -> String {
        format!("http://127.0.0.1:{}/live/{token}/", self.port)
    }
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

/// One request: checked, then routed to its view.
async fn serve(request: Request<Incoming>, port: u16) -> Answer {
    let own = format!("127.0.0.1:{port}");
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok());
    if host != Some(own.as_str()) {
        return views::text(
            StatusCode::FORBIDDEN,
            "Open the live view at the exact address the agent gave (http://127.0.0.1:PORT/...).",
        );
    }
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|value| value.to_str().ok());
    if origin.is_some_and(|origin| origin != format!("http://{own}")) {
        return views::text(
            StatusCode::FORBIDDEN,
            "Only the live view's own page may send it input.",
        );
    }
    let path = request.uri().path().to_string();
    let Some((token, rest)) = views::split_path(&path) else {
        return views::no_view();
    };
    let Some(view) = views::get(token) else {
        return views::no_view();
    };
    if !matches!(*view.owner, Owner::Loopback) {
        return views::no_view();
    }
    views::route(&view.state, request, rest).await
}
