//! MCP over streamable HTTP for several tenants: `/mcp` (rmcp's streamable HTTP service,
//! behind bearer-token authentication), `/healthz` and Prometheus `/metrics`. rmcp checks
//! `Host` and `Origin` against DNS rebinding and caps request bodies. SIGHUP re-reads the
//! tenants file; SIGTERM or SIGINT drains in-flight calls, then closes every tenant's browser
//! context and the browser.

mod auth;
mod disconnect;
mod handler;
mod metrics;
pub mod oauth;

use crate::pipeline::Pipeline;
use crate::tenants::registry::Registry;
use auth::AuthenticatedTenant;
use bytes::Bytes;
use handler::TenantServer;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use metrics::Metrics;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
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
}

#[derive(Clone)]
struct App {
    tenants: Arc<Registry>,
    metrics: Arc<Metrics>,
    mcp: McpService,
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
    let app = App {
        oauth: Arc::new(oauth::ResourceServer::new(
            pipeline.clone(),
            options.max_body_bytes,
        )),
        tenants: tenants.clone(),
        metrics,
        mcp: StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config),
    };
    // Tests and scripts read this line for the port when ADDR ends in `:0`.
    eprintln!("devtools-mcp: serving MCP over HTTP at http://{bound}/mcp");
    tracing::info!(%bound, "serving MCP over HTTP");

    let reaper = tokio::spawn(close_idle_tenants(tenants.clone()));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut signals = Signals::new()?;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        tracing::warn!(%error, "accept failed");
                        continue;
                    }
                };
                let app = app.clone();
                let service = hyper::service::service_fn(move |request| {
                    let app = app.clone();
                    async move { Ok::<_, Infallible>(app.route(request).await) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service);
                let connection = graceful.watch(connection);
                tokio::spawn(async move {
                    if let Err(error) = connection.await {
                        tracing::debug!(%error, "connection ended with an error");
                    }
                });
            }
            signal = signals.next() => match signal {
                Signal::Reload => match tenants.reload().await {
                    Ok(count) => tracing::info!(count, "tenants file re-read"),
                    Err(error) => tracing::error!(%error, "keeping the previous tenants"),
                },
                Signal::Stop => break,
            },
        }
    }
    drop(listener);
    reaper.abort();
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

async fn close_idle_tenants(tenants: Arc<Registry>) {
    let interval = IDLE_SWEEP_INTERVAL
        .min(tenants.idle_timeout())
        .max(Duration::from_millis(100));
    loop {
        tokio::time::sleep(interval).await;
        tenants.close_idle().await;
    }
}

impl App {
    async fn route(&self, request: Request<Incoming>) -> Response<Body> {
        match request.uri().path() {
            "/healthz" => text(StatusCode::OK, "text/plain; charset=utf-8", "ok\n".into()),
            "/metrics" => text(
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
                self.metrics.render(&self.tenants),
            ),
            "/mcp" => self.mcp(request).await,
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

    async fn mcp(&self, request: Request<Incoming>) -> Response<Body> {
        match auth::authenticate(request.headers(), &self.tenants) {
            Ok(tenant) => self.serve_tenant(request, tenant).await,
            // Not a token of the tenants file: the second verifier (OAuth access tokens) has
            // the last word, and answers the refusal when there is one.
            Err(error) => match self.oauth.admit(request, &self.tenants, &error).await {
                Ok((request, tenant)) => self.serve_tenant(request, tenant).await,
                Err(refusal) => {
                    self.metrics.record_unauthorized();
                    refusal
                }
            },
        }
    }

    async fn serve_tenant<B>(
        &self,
        mut request: Request<B>,
        tenant: Arc<crate::tenants::Tenant>,
    ) -> Response<Body>
    where
        B: http_body::Body + Send + 'static,
        B::Error: std::fmt::Display,
    {
        let (watch, disconnected) = disconnect::watch();
        request.extensions_mut().insert(AuthenticatedTenant(tenant));
        request.extensions_mut().insert(disconnected);
        self.mcp.handle(request).await.map(|body| watch.wrap(body))
    }
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
