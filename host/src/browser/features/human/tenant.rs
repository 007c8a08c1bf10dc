//! Live views of a tenant's calls under `serve`: served by the server's own HTTP listener
//! (the tenant's authenticated endpoint), never a port of their own. The URL is one-time and
//! bound to the tenant that asked: the person's browser has no bearer token, so the first
//! `GET /live/<token>/` exchanges the URL for a cookie (256 random bits, `HttpOnly`,
//! `SameSite=Strict`, `Path=/live/<token>/`) and every later request of the view needs that
//! cookie. The URL opened again without it (another browser), a request carrying another
//! tenant's bearer token, and an ended view all get the same 404 as a wrong token.

use super::views::{self, Answer, Owner};
use http::{HeaderMap, Method, Request, StatusCode, header};
use hyper::body::Incoming;
use sha2::{Digest, Sha256};
use std::sync::{Mutex, PoisonError};

/// The cookie that holds a view once its URL was opened (its path names the view).
const COOKIE: &str = "devtools_live";

/// Where the live views of the call running in this task are served: the endpoint of the
/// tenant it runs for, at the server's public address (`Err`: why that is unknown).
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub tenant: String,
    pub base: Result<String, String>,
}

tokio::task_local! {
    static ENDPOINT: Endpoint;
}

/// Runs `call` with its live views served at `endpoint` (`None`: on the loopback listener,
/// as on stdio).
pub async fn serving<F: Future>(endpoint: Option<Endpoint>, call: F) -> F::Output {
    match endpoint {
        Some(endpoint) => ENDPOINT.scope(endpoint, call).await,
        None => call.await,
    }
}

/// The endpoint of the call running in this task, if it runs for a tenant.
pub fn current() -> Option<Endpoint> {
    ENDPOINT.try_with(Clone::clone).ok()
}

/// What binds a view to its tenant and, once opened, to one browser.
pub struct Binding {
    tenant: String,
    /// The origin the viewer's own requests come from.
    origin: String,
    secure: bool,
    /// SHA-256 of the cookie given to the browser that opened the URL first.
    claimed: Mutex<Option<[u8; 32]>>,
}

impl Binding {
    pub fn new(tenant: &str, base: &str) -> Binding {
        let origin = url::Url::parse(base)
            .map(|url| url.origin().ascii_serialization())
            .unwrap_or_else(|_| base.trim_end_matches('/').to_string());
        Binding {
            tenant: tenant.to_string(),
            secure: origin.starts_with("https://"),
            origin,
            claimed: Mutex::new(None),
        }
    }

    fn claimed(&self) -> std::sync::MutexGuard<'_, Option<[u8; 32]>> {
        self.claimed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `cookie` is the one this view gave.
    fn admits(&self, cookie: Option<&str>) -> bool {
        let (Some(cookie), Some(expected)) = (cookie, *self.claimed()) else {
            return false;
        };
        let given: [u8; 32] = Sha256::digest(cookie.as_bytes()).into();
        given
            .iter()
            .zip(expected)
            .fold(0u8, |difference, (a, b)| difference | (a ^ b))
            == 0
    }

    /// The cookie for the first browser to open the URL; `None` once one has.
    fn claim(&self) -> Result<Option<String>, String> {
        let mut claimed = self.claimed();
        if claimed.is_some() {
            return Ok(None);
        }
        let secret = views::new_token()?;
        *claimed = Some(Sha256::digest(secret.as_bytes()).into());
        Ok(Some(secret))
    }
}

/// Who a request to a view says it is, by its `Authorization` header.
pub enum Bearer {
    /// No `Authorization` header (a person's browser).
    None,
    /// The bearer token of this tenant.
    Tenant(String),
    /// A token that names no tenant, or a header that is not a bearer token.
    Unknown,
}

/// One request to `/live/...` on the server's HTTP listener.
pub async fn serve(request: Request<Incoming>, bearer: Bearer) -> Answer {
    let path = request.uri().path().to_string();
    let Some((token, rest)) = views::split_path(&path) else {
        return views::no_view();
    };
    let Some(view) = views::get(token) else {
        return views::no_view();
    };
    let Owner::Tenant(binding) = &*view.owner else {
        return views::no_view();
    };
    match &bearer {
        Bearer::None => {}
        Bearer::Tenant(name) if *name == binding.tenant => {}
        Bearer::Tenant(_) | Bearer::Unknown => {
            tracing::warn!(tenant = %binding.tenant, "a live view was asked for with another tenant's or an unknown token");
            return views::no_view();
        }
    }
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|value| value.to_str().ok());
    if origin.is_some_and(|origin| origin != binding.origin) {
        return views::text(
            StatusCode::FORBIDDEN,
            "Only the live view's own page may send it input.",
        );
    }
    let mut given = None;
    if !binding.admits(cookie(request.headers())) {
        if request.method() != Method::GET || !rest.is_empty() {
            return views::no_view();
        }
        given = match binding.claim() {
            Ok(Some(secret)) => Some(secret),
            Ok(None) => {
                tracing::warn!(tenant = %binding.tenant, "a live view's URL was opened again without its cookie");
                return views::no_view();
            }
            Err(error) => return views::text(StatusCode::SERVICE_UNAVAILABLE, &error),
        };
    }
    let mut response = views::route(&view.state, request, rest).await;
    if let Some(secret) = given {
        let secure = if binding.secure { "; Secure" } else { "" };
        let value =
            format!("{COOKIE}={secret}; Path=/live/{token}/; HttpOnly; SameSite=Strict{secure}");
        if let Ok(value) = header::HeaderValue::from_str(&value) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response
}

/// The view's cookie of the request, if it sent one.
fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find_map(|(name, value)| (name == COOKIE).then_some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_is_claimed_once_and_then_admits_only_its_cookie() {
        let binding = Binding::new("alice", "https://mcp.example.com/");
        assert!(binding.secure);
        assert_eq!(binding.origin, "https://mcp.example.com");
        assert!(!binding.admits(None));
        let secret = binding.claim().expect("random").expect("the first claim");
        assert!(binding.claim().expect("random").is_none());
        assert!(binding.admits(Some(&secret)));
        assert!(!binding.admits(Some("0")));
        assert!(!binding.admits(None));
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            header::HeaderValue::from_static("a=1; devtools_live=abc; b=2"),
        );
        assert_eq!(cookie(&headers), Some("abc"));
        assert_eq!(cookie(&HeaderMap::new()), None);
    }
}
