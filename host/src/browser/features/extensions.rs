//! Chrome extensions (`--categoryExtensions`): install an unpacked folder, uninstall, list,
//! reload and trigger an action, through the browser's `Extensions` domain on a side
//! connection. A launched browser has extension debugging on when the category is (see
//! `launch_args`); a connected one needs `--enable-unsafe-extension-debugging` itself.

use super::page_tools::untrusted;
use crate::browser::cdp::side::with_connection;
use crate::browser::page::tab::tab_of;
use serde::Deserialize;
use serde_json::json;
use std::time::Duration;

/// The reference's bound on installing and uninstalling.
const EXTENSION_TIMEOUT: Duration = Duration::from_secs(30);
/// A script in a service worker, as a page evaluation is bounded.
const WORKER_EVALUATION_TIMEOUT: Duration = Duration::from_secs(60);

/// One installed extension, as `Extensions.getExtensions` reports it.
#[derive(Debug, Clone, Deserialize)]
pub struct Extension {
    pub id: String,
    pub name: String,
    pub version: String,
    pub path: String,
    pub enabled: bool,
}

/// A protocol error with what to do about the usual cause.
fn explained(error: String) -> String {
    if error.contains("not found") && error.contains("Extensions.")
        || error.contains("wasn't found")
    {
        format!(
            "{error}. The browser does not allow extension debugging: launch it with --enable-unsafe-extension-debugging (devtools-mcp does when it launches the browser with --categoryExtensions)."
        )
    } else {
        error
    }
}

/// Installs the unpacked extension in `path` (already checked against the sandbox) and returns
/// its id.
pub async fn install(ws_endpoint: &str, path: &str) -> Result<String, String> {
    let path = path.to_string();
    with_connection(
        ws_endpoint,
        EXTENSION_TIMEOUT,
        "installing extension",
        |mut cdp| async move {
            let result = cdp
                .browser(
                    "Extensions.loadUnpacked",
                    json!({ "path": path, "enableInIncognito": false }),
                )
                .await
                .map_err(explained)
                .and_then(|answer| {
                    answer["id"]
                        .as_str()
                        .map(String::from)
                        .ok_or_else(|| "The browser did not return the extension's id.".to_string())
                });
            (cdp, result)
        },
    )
    .await
}

pub async fn uninstall(ws_endpoint: &str, id: &str) -> Result<(), String> {
    let id = id.to_string();
    with_connection(
        ws_endpoint,
        EXTENSION_TIMEOUT,
        "uninstalling extension",
        |mut cdp| async move {
            let result = cdp
                .browser("Extensions.uninstall", json!({ "id": id }))
                .await
                .map(drop)
                .map_err(explained);
            (cdp, result)
        },
    )
    .await
}

pub async fn list(ws_endpoint: &str) -> Result<Vec<Extension>, String> {
    with_connection(
        ws_endpoint,
        EXTENSION_TIMEOUT,
        "listing extensions",
        |mut cdp| async move {
            let result = cdp
                .browser("Extensions.getExtensions", json!({}))
                .await
                .map_err(explained)
                .and_then(|answer| {
                    serde_json::from_value::<Vec<Extension>>(answer["extensions"].clone()).map_err(
                        |error| format!("The browser's extension list is malformed: {error}"),
                    )
                });
            (cdp, result)
        },
    )
    .await
}

/// Loads the extension's folder again (the reference's reload: install from its path).
pub async fn reload(ws_endpoint: &str, id: &str) -> Result<(), String> {
    let extension = find(ws_endpoint, id).await?;
    install(ws_endpoint, &extension.path).await.map(drop)
}

/// Runs the extension's default action on the tab of the page `page_target_id`.
pub async fn trigger_action(
    ws_endpoint: &str,
    id: &str,
    page_target_id: &str,
) -> Result<(), String> {
    find(ws_endpoint, id).await?;
    let (id, page) = (id.to_string(), page_target_id.to_string());
    with_connection(
        ws_endpoint,
        EXTENSION_TIMEOUT,
        "triggering the extension action",
        |mut cdp| async move {
            let result = async {
                let tab = tab_of(&mut cdp, &page).await?;
                cdp.browser(
                    "Extensions.triggerAction",
                    json!({ "id": id, "targetId": tab }),
                )
                .await
                .map(drop)
                .map_err(explained)
            }
            .await;
            (cdp, result)
        },
    )
    .await
}

async fn find(ws_endpoint: &str, id: &str) -> Result<Extension, String> {
    list(ws_endpoint)
        .await?
        .into_iter()
        .find(|extension| extension.id == id)
        .ok_or_else(|| format!("Extension with ID {id} not found."))
}

/// Runs `function` (a function declaration, no arguments) in the service worker target
/// `target_id` and returns the JSON text of its awaited result, as a page evaluation does.
pub async fn evaluate_in_worker(
    ws_endpoint: &str,
    target_id: &str,
    function: &str,
) -> Result<String, String> {
    let target = target_id.to_string();
    let expression =
        format!("(async function() {{ return JSON.stringify(await ({function})()); }})()");
    with_connection(
        ws_endpoint,
        WORKER_EVALUATION_TIMEOUT,
        "evaluating in the service worker",
        |mut cdp| async move {
            let result = async {
                let attached = cdp
                    .browser(
                        "Target.attachToTarget",
                        json!({ "targetId": target, "flatten": true }),
                    )
                    .await
                    .map_err(|_| "Service worker target not found.".to_string())?;
                let session = attached["sessionId"]
                    .as_str()
                    .ok_or("Service worker target not found.")?
                    .to_string();
                let evaluated = cdp
                    .call(
                        Some(&session),
                        "Runtime.evaluate",
                        json!({ "expression": expression, "awaitPromise": true, "returnByValue": true }),
                    )
                    .await
                    .map(|(result, _)| result);
                let _detached = cdp
                    .browser("Target.detachFromTarget", json!({ "sessionId": session }))
                    .await;
                let evaluated = evaluated?;
                if let Some(exception) = evaluated.get("exceptionDetails") {
                    return Err(crate::browser::page::actions::exception_message(exception));
                }
                Ok(match &evaluated["result"]["value"] {
                    serde_json::Value::String(json) => json.clone(),
                    _ => "undefined".to_string(),
                })
            }
            .await;
            (cdp, result)
        },
    )
    .await
}

/// The `## Extensions` section; names come from the extensions' manifests and are printed
/// escaped.
pub fn lines(extensions: &[Extension]) -> Vec<String> {
    let mut lines = vec!["## Extensions".to_string()];
    if extensions.is_empty() {
        lines.push("No extensions installed.".to_string());
    }
    for extension in extensions {
        lines.push(format!(
            "id={} {} v{} {}",
            extension.id,
            untrusted::quoted(&extension.name),
            untrusted::quoted(&extension.version).trim_matches('"'),
            if extension.enabled {
                "Enabled"
            } else {
                "Disabled"
            }
        ));
    }
    lines
}
