//! Progressive Web Apps (`--categoryPwa`): install, uninstall, launch and read the OS state of
//! a web app through the browser's `PWA` domain, which Chromium offers only on the DevTools
//! pipe of a browser launched with one (see `pipe`), as the reference's Puppeteer does.

use crate::browser::cdp::pipe::PipeLink;
use serde_json::{Value, json};

/// The browser's first attempt can fail before the page that declares the manifest has loaded
/// it; the reference tries once more on this message.
const NOT_READY: &str = "Couldn't fetch install info";

/// One browser-level `PWA.*` command; errors read as the reference's Puppeteer puts them.
async fn command(pipe: &PipeLink, method: &'static str, params: Value) -> Result<Value, String> {
    pipe.call(method, params)
        .await
        .map_err(|error| format!("Protocol error ({method}): {error}"))
}

/// Installs the app `manifest_id` from `install_url` (a page URL or a signed web bundle), then
/// sets its display mode if one is given.
pub async fn install(
    pipe: &PipeLink,
    manifest_id: &str,
    install_url: &str,
    display_mode: Option<&str>,
) -> Result<(), String> {
    let params = json!({ "manifestId": manifest_id, "installUrlOrBundleUrl": install_url });
    let first = command(pipe, "PWA.install", params.clone()).await;
    match first {
        Err(error) if error.contains(NOT_READY) => {
            command(pipe, "PWA.install", params).await?;
        }
        other => {
            other?;
        }
    }
    if let Some(mode) = display_mode {
        command(
            pipe,
            "PWA.changeAppUserSettings",
            json!({ "manifestId": manifest_id, "displayMode": mode }),
        )
        .await?;
    }
    Ok(())
}

/// Uninstalls the app (the browser closes its windows). Unknown ids are not an error, in the
/// browser as in the reference.
pub async fn uninstall(pipe: &PipeLink, manifest_id: &str) -> Result<(), String> {
    command(pipe, "PWA.uninstall", json!({ "manifestId": manifest_id }))
        .await
        .map(drop)
}

/// Launches the app (at `url` inside it, or its start URL); returns the id of the tab target
/// the browser opened for it.
pub async fn launch(
    pipe: &PipeLink,
    manifest_id: &str,
    url: Option<&str>,
) -> Result<String, String> {
    let mut params = json!({ "manifestId": manifest_id });
    if let Some(url) = url {
        params["url"] = json!(url);
    }
    let answer = command(pipe, "PWA.launch", params).await?;
    answer["targetId"]
        .as_str()
        .map(String::from)
        .ok_or_else(|| "The browser did not say which tab it opened for the PWA.".to_string())
}

/// The badge count and the JSON text of the file handlers of an installed app.
pub async fn os_app_state(pipe: &PipeLink, manifest_id: &str) -> Result<(u32, String), String> {
    let answer = command(
        pipe,
        "PWA.getOsAppState",
        json!({ "manifestId": manifest_id }),
    )
    .await?;
    let badge_count = answer["badgeCount"]
        .as_u64()
        .and_then(|count| u32::try_from(count).ok())
        .unwrap_or(0);
    let handlers = match &answer["fileHandlers"] {
        Value::Null => Value::Array(Vec::new()),
        handlers => handlers.clone(),
    };
    Ok((badge_count, handlers.to_string()))
}
