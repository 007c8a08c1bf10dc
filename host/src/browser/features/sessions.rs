//! Named sessions (beyond 1.11.0, `--sessionStore`), the browser's half: what keeps a browser
//! context signed in, read out and written back. Cookies go through the browser's `Storage`
//! domain for the whole context (HttpOnly ones included: no page script could read them);
//! local storage through a page showing its origin (`DOMStorage` finds an origin's storage by
//! a frame of it). The values travel only between the browser and the sealed file: callers
//! report counts and origins.

use crate::browser::cdp::{self, cdp as command, timeouts};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// What a named session holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StorageState {
    /// `Storage.setCookies` parameters, one object per cookie.
    pub cookies: Vec<Value>,
    /// Local storage, by origin.
    pub origins: Vec<OriginStorage>,
}

/// One origin's local storage.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct OriginStorage {
    /// `https://example.com` (scheme, host and any port).
    pub origin: String,
    pub local_storage: Vec<(String, String)>,
}

impl StorageState {
    /// The sites the cookies belong to (their domains without a leading dot), sorted, once each.
    pub fn cookie_sites(&self) -> Vec<String> {
        let mut sites: Vec<String> = self
            .cookies
            .iter()
            .filter_map(|cookie| cookie["domain"].as_str())
            .map(|domain| domain.trim_start_matches('.').to_string())
            .collect();
        sites.sort();
        sites.dedup();
        sites
    }
}

/// The fields of a cookie `Storage.setCookies` takes back; the rest of what `getCookies`
/// reports (size, session) is derived by the browser.
const COOKIE_FIELDS: &[&str] = &[
    "name",
    "value",
    "domain",
    "path",
    "secure",
    "httpOnly",
    "sameSite",
    "priority",
    "sourceScheme",
    "sourcePort",
    "partitionKey",
];

/// A cookie as `getCookies` reports it, as `setCookies` takes it: a session cookie stays one
/// (no `expires`).
fn settable(cookie: &Value) -> Option<Value> {
    let reported = cookie.as_object()?;
    let mut kept: Map<String, Value> = COOKIE_FIELDS
        .iter()
        .filter_map(|field| Some((field.to_string(), reported.get(*field)?.clone())))
        .collect();
    let session = reported.get("session").and_then(Value::as_bool) == Some(true);
    if !session && let Some(expires) = reported.get("expires") {
        kept.insert("expires".into(), expires.clone());
    }
    kept.contains_key("name").then_some(Value::Object(kept))
}

/// Sends one browser-level command with the ordinary timeout.
async fn browser_command(
    browser: &chromiumoxide::Browser,
    method: &'static str,
    params: Value,
) -> Result<Value, String> {
    match tokio::time::timeout(timeouts::COMMAND, browser.execute(command(method, params))).await {
        Ok(Ok(answer)) => Ok(answer.result),
        Ok(Err(error)) => Err(format!("{method} failed: {error}")),
        Err(_) => Err(format!(
            "The browser did not answer {method} within {} s.",
            timeouts::COMMAND.as_secs()
        )),
    }
}

fn context_params(context: Option<&str>) -> Value {
    match context {
        Some(context) => json!({ "browserContextId": context }),
        None => json!({}),
    }
}

/// Every cookie of the browser context (`None`: the default one).
pub async fn read_cookies(
    browser: &chromiumoxide::Browser,
    context: Option<&str>,
) -> Result<Vec<Value>, String> {
    let answer = browser_command(browser, "Storage.getCookies", context_params(context)).await?;
    Ok(answer["cookies"]
        .as_array()
        .map(|cookies| cookies.iter().filter_map(settable).collect())
        .unwrap_or_default())
}

/// Sets `cookies` in the browser context (`None`: the default one), over any of the same
/// name, domain and path.
pub async fn write_cookies(
    browser: &chromiumoxide::Browser,
    context: Option<&str>,
    cookies: &[Value],
) -> Result<(), String> {
    if cookies.is_empty() {
        return Ok(());
    }
    let mut params = context_params(context);
    params["cookies"] = Value::Array(cookies.to_vec());
    browser_command(browser, "Storage.setCookies", params)
        .await
        .map(|_| ())
}

fn storage_id(origin: &str) -> Value {
    json!({ "securityOrigin": origin, "isLocalStorage": true })
}

/// The local storage of `origin`, read through `page`, which shows that origin.
pub async fn read_local_storage(
    page: &chromiumoxide::Page,
    origin: &str,
) -> Result<Vec<(String, String)>, String> {
    let answer = cdp::run(
        page,
        "DOMStorage.getDOMStorageItems",
        json!({ "storageId": storage_id(origin) }),
    )
    .await?;
    Ok(answer["entries"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .filter_map(|entry| {
                    let key = entry.get(0)?.as_str()?;
                    let value = entry.get(1)?.as_str()?;
                    Some((key.to_string(), value.to_string()))
                })
                .collect()
        })
        .unwrap_or_default())
}

/// Writes `items` into the local storage of `origin`, through `page`, which shows that origin.
pub async fn write_local_storage(
    page: &chromiumoxide::Page,
    origin: &str,
    items: &[(String, String)],
) -> Result<(), String> {
    for (key, value) in items {
        cdp::run(
            page,
            "DOMStorage.setDOMStorageItem",
            json!({ "storageId": storage_id(origin), "key": key, "value": value }),
        )
        .await?;
    }
    Ok(())
}

/// The empty document the browser is handed for an origin whose storage is written with no
/// page of it open.
const BLANK_DOCUMENT: &str = "<!doctype html><title></title>";

/// Writes `origin`'s local storage through `page`, a blank page of the session's context made
/// for it: the page loads `origin` with its request answered by the browser itself (`Fetch`
/// fulfils it with an empty document: nothing reaches the network, no site code runs), then
/// takes the items. The caller closes the page.
pub async fn write_local_storage_elsewhere(
    page: &chromiumoxide::Page,
    origin: &str,
    items: &[(String, String)],
) -> Result<(), String> {
    use base64::Engine as _;
    use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
    use futures::StreamExt;
    let mut paused = page
        .event_listener::<EventRequestPaused>()
        .await
        .map_err(|error| error.to_string())?;
    cdp::run(
        page,
        "Fetch.enable",
        json!({ "patterns": [{ "urlPattern": "*", "requestStage": "Request" }] }),
    )
    .await?;
    let navigate = cdp::run(
        page,
        "Page.navigate",
        json!({ "url": format!("{origin}/") }),
    );
    let answer = async {
        let request = tokio::time::timeout(timeouts::COMMAND, paused.next())
            .await
            .ok()
            .flatten()
            .ok_or_else(|| format!("The browser did not load {origin} to write its storage."))?;
        let body = base64::engine::general_purpose::STANDARD.encode(BLANK_DOCUMENT);
        cdp::run(
            page,
            "Fetch.fulfillRequest",
            json!({
                "requestId": request.request_id,
                "responseCode": 200,
                "responseHeaders": [{ "name": "Content-Type", "value": "text/html" }],
                "body": body,
            }),
        )
        .await
    };
    let (navigated, answered) = tokio::join!(navigate, answer);
    answered?;
    navigated?;
    write_local_storage(page, origin, items).await
}

/// The origin of a page's URL whose storage a session keeps (http and https only).
pub fn storage_origin(url: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    matches!(url.scheme(), "http" | "https").then(|| url.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reported_cookie_is_set_back_as_it_was() {
        let reported = json!({
            "name": "sid", "value": "v", "domain": ".example.com", "path": "/",
            "expires": 1900000000.0, "size": 4, "httpOnly": true, "secure": true,
            "session": false, "sameSite": "Lax", "priority": "Medium",
            "sourceScheme": "Secure", "sourcePort": 443
        });
        let set = settable(&reported).expect("settable");
        assert_eq!(set["httpOnly"], true);
        assert_eq!(set["expires"], 1900000000.0);
        assert!(set.get("size").is_none() && set.get("session").is_none());
        let session =
            json!({ "name": "s", "value": "v", "domain": "a", "expires": -1, "session": true });
        assert!(
            settable(&session)
                .expect("settable")
                .get("expires")
                .is_none()
        );
        let state = StorageState {
            cookies: vec![reported, json!({ "domain": "example.com" })],
            origins: Vec::new(),
        };
        assert_eq!(state.cookie_sites(), ["example.com"]);
    }

    #[test]
    fn only_web_pages_have_a_storage_origin() {
        assert_eq!(
            storage_origin("http://127.0.0.1:8080/a?b").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(storage_origin("about:blank"), None);
        assert_eq!(storage_origin("file:///tmp/x"), None);
    }
}
