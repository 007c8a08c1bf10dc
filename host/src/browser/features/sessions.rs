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
    /// The origin's IndexedDB databases (JSON text from [`READ_INDEXED_DB`]; empty: none).
    #[serde(default)]
    pub indexed_db: String,
}

impl OriginStorage {
    /// How many IndexedDB databases it holds.
    pub fn database_count(&self) -> usize {
        serde_json::from_str::<Vec<Value>>(&self.indexed_db).map_or(0, |databases| databases.len())
    }
}

/// Reads every IndexedDB database of the page's origin: each store's shape (key path,
/// auto-increment, indexes) and its records as `[key, value]`. Values are kept as JSON, so a
/// `Date` comes back as its string and a `Blob` as `{}`.
const READ_INDEXED_DB: &str = r#"(async () => {
  const request = (r) => new Promise((ok, fail) => { r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
  const out = [];
  for (const { name, version } of await indexedDB.databases()) {
    const db = await request(indexedDB.open(name));
    const stores = [];
    for (const storeName of db.objectStoreNames) {
      const store = db.transaction(storeName, 'readonly').objectStore(storeName);
      const keys = store.getAllKeys();
      const values = await request(store.getAll());
      const indexes = [...store.indexNames].map((n) => { const i = store.index(n); return { name: n, keyPath: i.keyPath, unique: i.unique, multiEntry: i.multiEntry }; });
      stores.push({ name: storeName, keyPath: store.keyPath, autoIncrement: store.autoIncrement, indexes, records: keys.result.map((k, i) => [k, values[i]]) });
    }
    db.close();
    out.push({ name, version, stores });
  }
  return out.length ? JSON.stringify(out) : '';
})()"#;

/// Writes databases read by [`READ_INDEXED_DB`] (the JSON text follows this source as the
/// argument). A database that has the saved stores gets their records in place (its pages may
/// hold it open); one missing or missing a store is made again as it was saved, which waits
/// for no open connection: a page holding it open is named as the way out.
const WRITE_INDEXED_DB: &str = r#"(async (saved) => {
  const request = (r) => new Promise((ok, fail) => { r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); r.onblocked = () => fail(new Error('a page of this origin holds the database open: close or reload it and restore again')); });
  const existing = new Set((await indexedDB.databases()).map((d) => d.name));
  for (const { name, version, stores } of JSON.parse(saved)) {
    let db = existing.has(name) ? await request(indexedDB.open(name)) : null;
    if (db && !stores.every((s) => db.objectStoreNames.contains(s.name))) {
      db.close();
      db = null;
      await request(indexedDB.deleteDatabase(name));
    }
    if (!db) {
      const open = indexedDB.open(name, version);
      open.onupgradeneeded = () => {
        for (const s of stores) {
          const store = open.result.createObjectStore(s.name, { keyPath: s.keyPath, autoIncrement: s.autoIncrement });
          for (const i of s.indexes) store.createIndex(i.name, i.keyPath, { unique: i.unique, multiEntry: i.multiEntry });
        }
      };
      db = await request(open);
    }
    for (const s of stores) {
      const tx = db.transaction(s.name, 'readwrite');
      const store = tx.objectStore(s.name);
      store.clear();
      for (const [key, value] of s.records) s.keyPath === null ? store.put(value, key) : store.put(value);
      await new Promise((ok, fail) => { tx.oncomplete = ok; tx.onerror = () => fail(tx.error); });
    }
    db.close();
  }
})"#;

/// Runs `expression` in `page`'s main world and returns its string result.
async fn evaluate(page: &chromiumoxide::Page, expression: String) -> Result<String, String> {
    let answer = cdp::run(
        page,
        "Runtime.evaluate",
        json!({ "expression": expression, "awaitPromise": true, "returnByValue": true }),
    )
    .await?;
    if let Some(exception) = answer.get("exceptionDetails") {
        let text = exception["exception"]["description"]
            .as_str()
            .or(exception["text"].as_str())
            .unwrap_or("an exception");
        return Err(format!("IndexedDB: {text}"));
    }
    Ok(answer["result"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string())
}

/// The IndexedDB databases of the origin `page` shows (JSON text; empty: none).
pub async fn read_indexed_db(page: &chromiumoxide::Page) -> Result<String, String> {
    evaluate(page, READ_INDEXED_DB.to_string()).await
}

/// Writes saved IndexedDB databases into the origin `page` shows.
async fn write_indexed_db(page: &chromiumoxide::Page, saved: &str) -> Result<(), String> {
    if saved.is_empty() {
        return Ok(());
    }
    let argument = serde_json::to_string(saved).unwrap_or_default();
    evaluate(page, format!("{WRITE_INDEXED_DB}({argument})"))
        .await
        .map(|_| ())
}

/// Writes `origin`'s local storage and IndexedDB through `page`, which shows that origin.
pub async fn write_origin(
    page: &chromiumoxide::Page,
    origin: &OriginStorage,
) -> Result<(), String> {
    write_local_storage(page, &origin.origin, &origin.local_storage).await?;
    write_indexed_db(page, &origin.indexed_db).await
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
async fn write_local_storage(
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

/// Writes `origin`'s local storage and IndexedDB through `page`, a blank page of the session's
/// context made for it: the page loads `origin` with its request answered by the browser itself (`Fetch`
/// fulfils it with an empty document: nothing reaches the network, no site code runs), then
/// takes the items. The caller closes the page.
pub async fn write_origin_elsewhere(
    page: &chromiumoxide::Page,
    storage: &OriginStorage,
) -> Result<(), String> {
    let origin = storage.origin.as_str();
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
    write_origin(page, storage).await
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
