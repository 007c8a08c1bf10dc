//! MCP over streamable HTTP for several tenants: `/mcp` (rmcp's streamable HTTP service,
//! behind bearer-token authentication), `/healthz`, Prometheus `/metrics` (behind its own
//! token) and the live views of tenants that opted in (`/live/<token>/`, [`live_view`]). rmcp checks `Host` and `Origin` against DNS rebinding and caps request bodies.
//! Connections are capped in total and per client address and timed out while their headers
//! or body arrive; the accept loop waits on nothing but a free place and signals. SIGHUP
//! re-reads the tenants file (in the background); SIGTERM or SIGINT drains in-flight calls,
//! then closes every tenant's browser context and the browser.

mod auth;
mod body;
mod capacity;
mod connections;
mod descriptors;
mod disconnect;
mod handler;
mod live_view;
mod metrics;
pub mod oauth;
mod sessions;

use crate::pipeline::Pipeline;
use crate::serve::tenants::registry::Registry;
use auth::{AuthenticatedTenant, TokenVerifier};
use bytes::Bytes;
pub use connections::DEFAULT_MAX_CONNECTIONS_PER_IP;
use connections::{ConnectionLimits, ConnectionState, RateLimitedLog, accept_backoff};
use handler::TenantServer;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Either, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use metrics::Metrics;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use sessions::{Ownership, SESSION_HEADER, SessionOwners};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

type Body = BoxBody<Bytes, Infallible>;
type McpService = StreamableHttpService<TenantServer, LocalSessionManager>;

/// How often idle tenants are looked for.
const IDLE_SWEEP_INTERVAL: Duration = Duration::from_secs(5);
/// Time given to open connections to close after the calls were drained.
const CONNECTION_CLOSE_BUDGET: Duration = Duration::from_secs(2);
/// Time a client has to send a request's headers (also how long an idle connection stays).
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to send a request's body.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// How often abandoned MCP sessions are looked for.
const SESSION_SWEEP_INTERVAL: Duration = Duration::from_secs(1);
/// At most one log line per interval for a recurring accept error.
const ACCEPT_ERROR_LOG_INTERVAL: Duration = Duration::from_secs(5);

/// What `serve --http` was told.
pub struct HttpOptions {
    pub address: SocketAddr,
    /// `Host` values accepted besides the loopback names (DNS-rebinding defence).
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed to call; any other `Origin` is refused.
    pub allowed_origins: Vec<String>,
    pub max_body_bytes: usize,
    /// How long in-flight calls may run on after a shutdown signal before they are cancelled.
    pub shutdown_grace: Duration,
    /// Connections open at once (`None`: derived from the descriptor limit), and from one
    /// client address.
    pub max_connections: Option<usize>,
    pub max_connections_per_ip: usize,
    pub header_read_timeout: Duration,
    pub body_read_timeout: Duration,
}

#[derive(Clone)]
struct App {
    tenants: Arc<Registry>,
    metrics: Arc<Metrics>,
    mcp: McpService,
    manager: Arc<LocalSessionManager>,
    sessions: SessionOwners,
    body_read_timeout: Duration,
    oauth: Arc<oauth::ResourceServer>,
}

pub async fn serve(
    pipeline: Arc<Pipeline>,
    tenants: Arc<Registry>,
    options: HttpOptions,
) -> Result<(), String> {
    let listener = TcpListener::bind(options.address)
        .await
        .map_err(|error| format!("cannot listen on {}: {error}", options.address))?;
    let bound = listener
        .local_addr()
        .map_err(|error| format!("cannot read the bound address: {error}"))?;
    // A tenant's browser must not call this server (or its /metrics) from inside.
    crate::net::egress::protect(bound, "this server's own HTTP port");
    let metrics = Arc::new(Metrics::new());
    let cancel = CancellationToken::new();
    let mut hosts = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    hosts.extend(options.allowed_hosts.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(cancel.child_token());
    let factory = {
        let (pipeline, tenants, metrics) = (pipeline.clone(), tenants.clone(), metrics.clone());
        move || {
            Ok(TenantServer::new(
                pipeline.clone(),
                tenants.clone(),
                metrics.clone(),
            ))
        }
    };
    let manager = Arc::new(LocalSessionManager::default());
    let app = App {
        oauth: Arc::new(oauth::ResourceServer::new(
            pipeline.clone(),
            options.max_body_bytes,
        )),
        tenants: tenants.clone(),
        metrics,
        mcp: StreamableHttpService::new(factory, manager.clone(), config),
        manager,
        sessions: SessionOwners::default(),
        body_read_timeout: options.body_read_timeout,
    };
    // Tests and scripts read this line for the port when ADDR ends in `:0`. One write: a
    // reader polling the log must never see the line cut after `http://`.
    let line = format!("devtools-mcp: serving MCP over HTTP at http://{bound}/mcp\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
    tracing::info!(%bound, "serving MCP over HTTP");

    let reaper = tokio::spawn(close_idle_tenants(tenants.clone()));
    let sweeper = tokio::spawn(close_abandoned_sessions(app.clone()));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut signals = Signals::new()?;
    let descriptors = descriptors::raise_to_hard_limit();
    let max_connections = match options.max_connections {
        Some(explicit) => {
            if let Some(warning) = descriptors::check_explicit(explicit, descriptors) {
                tracing::warn!("{warning}");
            }
            explicit
        }
        None => descriptors::default_max_connections(descriptors),
    };
    tracing::info!(max_connections, descriptors, "connection cap");
    let limits = ConnectionLimits::new(max_connections, options.max_connections_per_ip);
    let mut accept_errors = RateLimitedLog::new(ACCEPT_ERROR_LOG_INTERVAL);
    loop {
        tokio::select! {
            accepted = accept(&listener, &limits, &mut accept_errors) => {
                let Some((stream, peer, place)) = accepted else { continue };
                let Some(admitted) = limits.admit(peer.ip(), place) else {
                    tokio::spawn(refuse_connection(stream, peer));
                    continue;
                };
                let app = app.clone();
                let state = admitted.state.clone();
                let service = hyper::service::service_fn(move |request| {
                    let app = app.clone();
                    let state = state.clone();
                    async move {
                        let _busy = state.busy();
                        Ok::<_, Infallible>(app.route(request, &state).await)
                    }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(options.header_read_timeout)
                    .max_buf_size(256 << 10)
                    .serve_connection(TokioIo::new(stream), service);
                let connection = graceful.watch(connection);
                tokio::spawn(async move {
                    // Dropping the connection closes it: room for a newer one at the cap.
                    tokio::select! {
                        ended = connection => if let Err(error) = ended {
                            tracing::debug!(%error, "connection ended with an error");
                        },
                        () = admitted.state.evicted() => {}
                    }
                    drop(admitted);
                });
            }
            signal = signals.next() => match signal {
                // Revoking closes browser contexts, which must not hold up accepting.
                Signal::Reload => {
                    let tenants = tenants.clone();
                    tokio::spawn(async move {
                        match tenants.reload().await {
                            Ok(count) => tracing::info!(count, "tenants file re-read"),
                            Err(error) => tracing::error!(%error, "keeping the previous tenants"),
                        }
                    });
                }
                Signal::Stop => break,
            },
        }
    }
    drop(listener);
    reaper.abort();
    sweeper.abort();
    tracing::info!("shutting down: draining in-flight calls");
    let drained = drain(&tenants, options.shutdown_grace).await;
    if !drained {
        tracing::warn!("cancelling the calls still in flight");
    }
    cancel.cancel();
    if tokio::time::timeout(CONNECTION_CLOSE_BUDGET, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("some connections did not close in time");
    }
    tenants.shutdown().await;
    Ok(())
}

/// Waits until no call is in flight or `grace` has passed; `true` when drained.
async fn drain(tenants: &Registry, grace: Duration) -> bool {
    let deadline = Instant::now() + grace;
    while tenants.in_flight() > 0 {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    true
}

/// Accepts one connection once a place is free. An error is logged (at a bounded rate) and
/// backed off here, inside the caller's `select!`, so signals are still served meanwhile.
async fn accept(
    listener: &TcpListener,
    limits: &ConnectionLimits,
    errors: &mut RateLimitedLog,
) -> Option<(
    tokio::net::TcpStream,
    SocketAddr,
    tokio::sync::OwnedSemaphorePermit,
)> {
    let place = limits.reserve().await?;
    match listener.accept().await {
        Ok((stream, peer)) => Some((stream, peer, place)),
        Err(error) => {
            drop(place);
            if let Some(pause) = accept_backoff(&error) {
                if let Some(suppressed) = errors.allow() {
                    tracing::warn!(%error, suppressed, "accept failed; pausing");
                }
                tokio::time::sleep(pause).await;
            }
            None
        }
    }
}

/// Answers a connection over its address's cap with 503 and closes it.
async fn refuse_connection(mut stream: tokio::net::TcpStream, peer: SocketAddr) {
    use tokio::io::AsyncWriteExt;
    tracing::debug!(%peer, "too many connections from this address");
    let body = "Too many connections from your address; close some and retry.\n";
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let _sent =
        tokio::time::timeout(Duration::from_secs(1), stream.write_all(answer.as_bytes())).await;
}

/// Closes MCP sessions their clients abandoned (idle past the tenant's `session_idle_secs`)
/// and those of tenants that are gone; each frees its tenant's `max_sessions` place.
async fn close_abandoned_sessions(app: App) {
    loop {
        tokio::time::sleep(SESSION_SWEEP_INTERVAL).await;
        let expired = app.sessions.take_expired(|name| {
            app.tenants
                .tenant(name)
                .map(|tenant| tenant.quotas.session_idle)
        });
        for id in expired {
            tracing::info!(session = %id, "closing an abandoned MCP session");
            if let Err(error) = app.manager.close_session(&id.as_str().into()).await {
                tracing::debug!(%error, "closing a session");
            }
        }
    }
}

async fn close_idle_tenants(tenants: Arc<Registry>) {
    let shortest = tenants
        .discard_after()
        .map_or(tenants.idle_timeout(), |after| {
            after.min(tenants.idle_timeout())
        });
    let interval = IDLE_SWEEP_INTERVAL
        .min(shortest)
        .max(Duration::from_millis(100));
    loop {
        tokio::time::sleep(interval).await;
        tenants.close_idle().await;
        tenants.discard_idle().await;
    }
}

impl App {
    async fn route(
        &self,
        request: Request<Incoming>,
        connection: &Arc<ConnectionState>,
    ) -> Response<Body> {
        match request.uri().path() {
            "/healthz" => text(StatusCode::OK, "text/plain; charset=utf-8", "ok\n".into()),
            "/readyz" => capacity::readiness(&self.tenants),
            "/metrics" => self.serve_metrics(&request, connection),
            "/mcp" => self.mcp(request, connection).await,
            path if path.starts_with("/live/") => {
                let bearer = live_view::bearer(&self.tenants, request.headers());
                crate::browser::features::human::tenant::serve(request, bearer)
                    .await
                    .map(BodyExt::boxed)
            }
            path if path.starts_with(oauth::METADATA_PATH) => {
                match self.oauth.metadata(&self.tenants, path) {
                    Some(metadata) => metadata,
                    None => text(
                        StatusCode::NOT_FOUND,
                        "text/plain; charset=utf-8",
                        "No OAuth protected-resource metadata here.\n".into(),
                    ),
                }
            }
            _ => text(
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                "Not found. MCP is served at /mcp.\n".into(),
            ),
        }
    }

    /// `/metrics` names every tenant: only for the metrics token of the tenants file.
    fn serve_metrics(
        &self,
        request: &Request<Incoming>,
        connection: &Arc<ConnectionState>,
    ) -> Response<Body> {
        let token = auth::bearer(request.headers()).unwrap_or_default();
        match self.tenants.authenticate_metrics(token) {
            Some(true) => {
                connection.mark_authenticated("metrics");
                text(
                    StatusCode::OK,
                    "text/plain; version=0.0.4; charset=utf-8",
                    self.metrics.render(&self.tenants),
                )
            }
            Some(false) => {
                self.metrics.record_unauthorized();
                let mut response = text(
                    StatusCode::UNAUTHORIZED,
                    "text/plain; charset=utf-8",
                    "/metrics needs `Authorization: Bearer <the metrics token>`.\n".into(),
                );
                response.headers_mut().insert(
                    http::header::WWW_AUTHENTICATE,
                    http::HeaderValue::from_static("Bearer realm=\"devtools-mcp metrics\""),
                );
                response
            }
            None => text(
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                "/metrics is off: set metrics_token_sha256 in the tenants file to turn it on.\n"
                    .into(),
            ),
        }
    }

    async fn mcp(
        &self,
        request: Request<Incoming>,
        connection: &Arc<ConnectionState>,
    ) -> Response<Body> {
        // A client that sends its headers and then withholds the body is cut off, whichever
        // verifier reads the body.
        let request = request.map(|body| body::Deadline::new(body, self.body_read_timeout));
        let verifiers: [&dyn TokenVerifier; 1] = [self.tenants.as_ref()];
        let (mut request, tenant) = match auth::authenticate(request.headers(), &verifiers) {
            Ok(tenant) => (request.map(Either::Left), tenant),
            // Not a token of the tenants file: the second verifier (OAuth access tokens) has
            // the last word, and answers the refusal when there is one.
            Err(error) => match self.oauth.admit(request, &self.tenants, &error).await {
                Ok((request, tenant)) => (request.map(Either::Right), tenant),
                Err(refusal) => {
                    self.metrics.record_unauthorized();
                    return refusal;
                }
            },
        };
        connection.mark_authenticated(&tenant.name);
        // Every request counts, with or without a session.
        if let Err(message) = self.tenants.admit(&tenant) {
            let mut response = json_error(StatusCode::TOO_MANY_REQUESTS, -32002, &message);
            response.headers_mut().insert(
                http::header::RETRY_AFTER,
                http::HeaderValue::from_static("5"),
            );
            return response;
        }
        if request.method() != http::Method::DELETE
            && let Some(refusal) = capacity::refusal(&self.tenants, &tenant)
        {
            self.metrics.record_refused_full();
            return refusal;
        }
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(String::from);
        if let Some(id) = &session
            && self.sessions.check(id, &tenant.name) == Ownership::Foreign
        {
            tracing::warn!(tenant = %tenant.name, "a request named another tenant's MCP session");
            // The same answer as for a session that does not exist: nothing to learn.
            return text(
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                "Not Found: Session not found".into(),
            );
        }
        let activity = session.as_deref().and_then(|id| self.sessions.begin(id));
        let deleting = request.method() == http::Method::DELETE;
        let request_is_get = request.method() == http::Method::GET;
        let (watch, disconnected) = disconnect::watch();
        request
            .extensions_mut()
            .insert(AuthenticatedTenant(tenant.clone()));
        request.extensions_mut().insert(disconnected);
        let mut response = self.mcp.handle(request).await;
        match &session {
            None => {
                if let Some(opened) = response
                    .headers()
                    .get(SESSION_HEADER)
                    .and_then(|value| value.to_str().ok())
                {
                    self.sessions.bind(opened, &tenant.name);
                }
            }
            Some(id) if deleting && response.status().is_success() => {
                self.sessions.forget(id);
                // rmcp answers 202, which clients read as "not done yet" (the Python SDK logs
                // `Session termination failed: 202`); the session is closed: 204.
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            Some(_) => {}
        }
        // An event stream (a session's `GET`) is sent for as long as the body lives.
        let streaming = (response.status().is_success()
            && response
                .headers()
                .get(http::header::CONTENT_TYPE)
                .is_some_and(|kind| kind.as_bytes().starts_with(b"text/event-stream"))
            && request_is_get)
            .then(|| connection.streaming());
        response.map(|body| watch.wrap(body, Some((activity, streaming))))
    }
}

fn json_error(status: StatusCode, code: i64, message: &str) -> Response<Body> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message },
    });
    text(status, "application/json", body.to_string())
}

fn text(status: StatusCode, content_type: &'static str, body: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    response
}

enum Signal {
    Reload,
    Stop,
}

/// SIGHUP reloads the tenants file; SIGTERM and SIGINT stop the server.
struct Signals {
    hangup: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Signals, String> {
        use tokio::signal::unix::{SignalKind, signal};
        let listen = |kind: SignalKind| {
            signal(kind).map_err(|error| format!("cannot listen for signals: {error}"))
        };
        Ok(Signals {
            hangup: listen(SignalKind::hangup())?,
            terminate: listen(SignalKind::terminate())?,
            interrupt: listen(SignalKind::interrupt())?,
        })
    }

    async fn next(&mut self) -> Signal {
        tokio::select! {
            _ = self.hangup.recv() => Signal::Reload,
            _ = self.terminate.recv() => Signal::Stop,
            _ = self.interrupt.recv() => Signal::Stop,
        }
    }
}
