//! The egress proxy of one tenant: an HTTP proxy on a loopback port of this process that the
//! tenant's browser context is created with (`proxyServer`, with `<-loopback>` so Chromium's
//! implicit loopback bypass is gone). Chromium defers name resolution to an HTTP proxy, so
//! every request of the context (navigations, subresources, workers, WebSockets, redirects,
//! popups) arrives here by name: the proxy resolves it itself, checks every address against
//! the tenant's [`EgressPolicy`], and dials exactly the address it checked (no second lookup a
//! rebinding DNS could answer differently). `CONNECT` tunnels (https, wss) and plain `http`
//! requests are served; a refusal is a 403 whose body names the rule, and is kept for the
//! tenant's next tool answer.

use super::egress::{self, EgressPolicy};
use crate::policy::tenant_urls::host_key;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

/// Time to resolve a name.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);
/// Time to connect to one address.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Time for the browser to send a request's head to the proxy.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections (tunnels included) one tenant's context may hold at once.
const MAX_CONNECTIONS: usize = 256;
/// Refusals kept for the next tool answer.
const REFUSALS_KEPT: usize = 20;

type ProxyBody = BoxBody<Bytes, hyper::Error>;

/// A running proxy; dropping it stops it.
pub struct EgressProxy {
    address: SocketAddr,
    refusals: Arc<Refusals>,
    task: JoinHandle<()>,
}

/// The requests a proxy refused since they were last taken.
#[derive(Default)]
struct Refusals {
    recent: Mutex<VecDeque<String>>,
}

impl Refusals {
    fn record(&self, line: String) {
        tracing::info!(refused = %line, "egress refused");
        if let Ok(mut recent) = self.recent.lock() {
            if recent.contains(&line) {
                return;
            }
            if recent.len() == REFUSALS_KEPT {
                recent.pop_front();
            }
            recent.push_back(line);
        }
    }
}

impl EgressProxy {
    /// Listens on a fresh loopback port, enforcing `policy`. Needs a tokio runtime; does not
    /// wait (callers hold locks).
    pub fn start(policy: EgressPolicy) -> std::io::Result<EgressProxy> {
        let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
        listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(listener)?;
        let address = listener.local_addr()?;
        // A tenant must not chain through its own (or another tenant's) proxy.
        egress::protect(address, "an egress proxy of this server");
        let refusals = Arc::new(Refusals::default());
        let state = Arc::new(ProxyState {
            policy,
            refusals: refusals.clone(),
            lookups: super::lookup::Lookups::new(),
        });
        let task = tokio::spawn(accept_loop(listener, state));
        Ok(EgressProxy {
            address,
            refusals,
            task,
        })
    }

    /// What the browser context is given as its `proxyServer`.
    pub fn proxy_server(&self) -> String {
        format!("http://{}", self.address)
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The refusals since the last call, oldest first.
    pub fn take_refusals(&self) -> Vec<String> {
        self.refusals
            .recent
            .lock()
            .map(|mut recent| recent.drain(..).collect())
            .unwrap_or_default()
    }
}

impl Drop for EgressProxy {
    fn drop(&mut self) {
        self.task.abort();
        egress::unprotect(self.address);
    }
}

struct ProxyState {
    policy: EgressPolicy,
    refusals: Arc<Refusals>,
    /// Its share of the process's name lookups.
    lookups: super::lookup::Lookups,
}

async fn accept_loop(listener: TcpListener, state: Arc<ProxyState>) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!(%error, "egress proxy: accept failed");
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let state = state.clone();
                async move { Ok::<_, std::convert::Infallible>(state.serve(request).await) }
            });
            let served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .max_buf_size(64 << 10)
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
            if let Err(error) = served {
                tracing::debug!(%error, "egress proxy connection ended");
            }
            drop(permit);
        });
    }
}

/// Where a request goes: the host as requested (for names and messages) and its port.
struct Destination {
    host: String,
    port: u16,
}

impl ProxyState {
    async fn serve(&self, request: Request<Incoming>) -> Response<ProxyBody> {
        let shown = format!("{} {}", request.method(), request.uri());
        let destination = match destination(&request) {
            Ok(destination) => destination,
            Err(message) => return self.refuse(&shown, StatusCode::BAD_REQUEST, message),
        };
        let stream = match self.connect(&destination).await {
            Ok(stream) => stream,
            Err(Failure::Refused(message)) => {
                return self.refuse(&shown, StatusCode::FORBIDDEN, message);
            }
            Err(Failure::Unreachable(message)) => {
                return plain(StatusCode::BAD_GATEWAY, message);
            }
        };
        if request.method() == Method::CONNECT {
            tunnel(request, stream)
        } else {
            forward(request, stream).await
        }
    }

    fn refuse(&self, shown: &str, status: StatusCode, reason: String) -> Response<ProxyBody> {
        self.refusals.record(format!("{shown}: {reason}"));
        plain(
            status,
            format!("devtools-mcp egress policy refused {shown}: {reason}.\n"),
        )
    }

    /// Resolves, checks every address, and connects to the first that answers.
    async fn connect(&self, destination: &Destination) -> Result<TcpStream, Failure> {
        let host = &destination.host;
        self.policy.check_host(host).map_err(Failure::Refused)?;
        let addresses: Vec<SocketAddr> = match host.parse::<std::net::IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, destination.port)],
            Err(_) => self
                .lookups
                .resolve(host, destination.port, RESOLVE_TIMEOUT)
                .await
                .map_err(Failure::Unreachable)?,
        };
        if addresses.is_empty() {
            return Err(Failure::Unreachable(format!("{host} has no address")));
        }
        // Every address must pass: a name with one inside address is refused as a whole.
        for address in &addresses {
            self.policy
                .check_address(host, *address)
                .map_err(Failure::Refused)?;
        }
        let mut last_error = String::new();
        for address in addresses {
            let address = SocketAddr::new(address.ip().to_canonical(), address.port());
            match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
                Ok(Ok(stream)) => return Ok(stream),
                Ok(Err(error)) => last_error = format!("connecting to {address}: {error}"),
                Err(_) => last_error = format!("connecting to {address} timed out"),
            }
        }
        Err(Failure::Unreachable(last_error))
    }
}

enum Failure {
    /// The policy says no: 403, remembered for the tenant.
    Refused(String),
    /// Allowed but not reachable: 502.
    Unreachable(String),
}

/// The destination of a proxy request: `CONNECT host:port`, or an absolute `http://` URI.
/// The host is parsed as the browser's URL parser would (so `127.1` is 127.0.0.1).
fn destination(request: &Request<Incoming>) -> Result<Destination, String> {
    let (text, port) = if request.method() == Method::CONNECT {
        let authority = request.uri().authority().ok_or("CONNECT needs host:port")?;
        let port = authority.port_u16().ok_or("CONNECT needs host:port")?;
        (format!("http://{}/", authority.host()), Some(port))
    } else {
        if request.uri().scheme_str() != Some("http") {
            return Err(format!(
                "only http:// requests and CONNECT are proxied, not {}",
                request.uri()
            ));
        }
        (request.uri().to_string(), None)
    };
    let url = url::Url::parse(&text).map_err(|error| format!("bad target: {error}"))?;
    let host = url.host().ok_or("the target has no host")?;
    let port = port
        .or_else(|| url.port_or_known_default())
        .ok_or("the target has no port")?;
    Ok(Destination {
        host: host_key(&host),
        port,
    })
}

/// Answers `200` and splices the browser's connection to the checked one.
fn tunnel(request: Request<Incoming>, mut upstream: TcpStream) -> Response<ProxyBody> {
    tokio::spawn(async move {
        match hyper::upgrade::on(request).await {
            Ok(upgraded) => {
                let mut upgraded = TokioIo::new(upgraded);
                let _copied = tokio::io::copy_bidirectional(&mut upgraded, &mut upstream).await;
            }
            Err(error) => tracing::debug!(%error, "egress proxy: the tunnel was not upgraded"),
        }
    });
    Response::new(empty())
}

/// Sends a plain-http request over the checked connection and streams the answer back.
async fn forward(request: Request<Incoming>, upstream: TcpStream) -> Response<ProxyBody> {
    let (mut parts, body) = request.into_parts();
    let origin_form = parts
        .uri
        .path_and_query()
        .map(|path| path.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    parts.uri = match origin_form.parse() {
        Ok(uri) => uri,
        Err(_) => return plain(StatusCode::BAD_REQUEST, "bad request target".into()),
    };
    for hop in [
        "proxy-connection",
        "proxy-authorization",
        "connection",
        "keep-alive",
    ] {
        parts.headers.remove(hop);
    }
    let (mut sender, connection) =
        match hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await {
            Ok(pair) => pair,
            Err(error) => return plain(StatusCode::BAD_GATEWAY, error.to_string()),
        };
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!(%error, "egress proxy: upstream connection ended");
        }
    });
    match sender.send_request(Request::from_parts(parts, body)).await {
        Ok(response) => response.map(|body| body.boxed()),
        Err(error) => plain(StatusCode::BAD_GATEWAY, error.to_string()),
    }
}

fn empty() -> ProxyBody {
    Full::new(Bytes::new())
        .map_err(|never| match never {})
        .boxed()
}

fn plain(status: StatusCode, body: String) -> Response<ProxyBody> {
    let mut response = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
