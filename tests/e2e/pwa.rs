//! Progressive Web Apps (`--categoryPwa`): install the fixture app, read its OS state, launch
//! it (its window becomes a page), uninstall it; the errors of unknown apps and of an install
//! URL that declares another app. The same steps run against chrome-devtools-mcp 1.11.0 when
//! Node is here, and every answer must be the same text.

use crate::differential::{normalize, render, same_tool, tools_by_name};
use crate::support::reference::{ensure_installed, node_missing, start_reference};
use crate::support::{FixtureServer, McpServer, Route, browser_args};
use serde_json::{Value, json};
use std::path::Path;

const PWA_TOOLS: [&str; 4] = [
    "get_os_app_state",
    "install_pwa",
    "launch_pwa",
    "uninstall_pwa",
];

/// An installable app: a page that links its manifest, the manifest (with an `id`, a start
/// URL and the icon installing requires) and a second page inside the app's scope.
fn app_pages() -> FixtureServer {
    let icon = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/pwa/icon-192.png"),
    )
    .expect("fixture icon");
    FixtureServer::start(vec![
        Route::html(
            "/app/index.html",
            r#"<!doctype html><html><head><link rel="manifest" href="/app/manifest.json"><title>Fixture app</title></head><body>Fixture app</body></html>"#,
        ),
        Route::html(
            "/app/other.html",
            "<!doctype html><title>Inside the app</title><p>Another page of the app</p>",
        ),
        Route::new(
            "/app/manifest.json",
            "application/manifest+json",
            r#"{"name":"Fixture App","short_name":"Fixture","id":"/app/","start_url":"/app/index.html","scope":"/app/","display":"standalone","icons":[{"src":"/app/icon.png","sizes":"192x192","type":"image/png"}]}"#,
        ),
        Route::new("/app/icon.png", "image/png", icon),
        Route::html(
            "/plain.html",
            "<!doctype html><title>Not an app</title><p>No manifest here</p>",
        ),
    ])
}

/// The scenario, as `(label, tool, arguments)`.
fn steps(pages: &FixtureServer) -> Vec<(&'static str, &'static str, Value)> {
    let app = pages.url("/app/");
    let index = pages.url("/app/index.html");
    vec![
        ("new_page", "new_page", json!({ "url": index })),
        (
            "get_os_app_state before install",
            "get_os_app_state",
            json!({ "manifestId": app }),
        ),
        (
            "launch_pwa before install",
            "launch_pwa",
            json!({ "manifestId": app }),
        ),
        (
            "install_pwa from a page without the app",
            "install_pwa",
            json!({ "manifestId": app, "installUrlOrBundleUrl": pages.url("/plain.html") }),
        ),
        (
            "install_pwa",
            "install_pwa",
            json!({ "manifestId": app, "installUrlOrBundleUrl": index, "displayMode": "standalone" }),
        ),
        (
            "get_os_app_state",
            "get_os_app_state",
            json!({ "manifestId": app }),
        ),
        (
            "launch_pwa at its start URL",
            "launch_pwa",
            json!({ "manifestId": app }),
        ),
        (
            "launch_pwa at a URL in the app",
            "launch_pwa",
            json!({ "manifestId": app, "url": pages.url("/app/other.html") }),
        ),
        (
            "uninstall_pwa",
            "uninstall_pwa",
            json!({ "manifestId": app }),
        ),
        (
            "get_os_app_state after uninstall",
            "get_os_app_state",
            json!({ "manifestId": app }),
        ),
    ]
}

#[tokio::test]
async fn pwa_install_state_launch_and_uninstall() {
    let pages = app_pages();
    let mut args = browser_args();
    args.retain(|arg| arg != "--no-page-id-routing");
    args.push("--categoryPwa".into());
    let ours = match McpServer::start_with(args, Vec::new()).await {
        Ok(server) => server,
        Err(message) => panic!("{message}"),
    };
    let reference = match node_missing() {
        Some(reason) => {
            eprintln!(
                "\n!!! PWA steps not compared with chrome-devtools-mcp 1.11.0: {reason}. scripts/test installs Node and the reference.\n"
            );
            None
        }
        None => {
            if let Err(error) = ensure_installed() {
                panic!("{error}");
            }
            Some(start_reference(&["--categoryPwa"]).await)
        }
    };

    let our_tools = tools_by_name(&ours.list_tools().await);
    for name in PWA_TOOLS {
        assert!(our_tools.contains_key(name), "{name} is not listed");
    }
    if let Some(reference) = &reference {
        let their_tools = tools_by_name(&reference.list_tools().await);
        for name in PWA_TOOLS {
            assert!(
                same_tool(&our_tools[name], &their_tools[name]),
                "{name} differs from 1.11.0:\nours: {:#}\n1.11.0: {:#}",
                our_tools[name],
                their_tools[name]
            );
        }
    }

    let app = pages.url("/app/");
    let mut differences = Vec::new();
    let mut answers = Vec::new();
    for (label, tool, arguments) in steps(&pages) {
        let mine = normalize(
            &render(&ours.call_raw(tool, arguments.clone()).await.expect(label)),
            &pages,
        );
        if let Some(reference) = &reference {
            let theirs = normalize(
                &render(&reference.call_raw(tool, arguments).await.expect(label)),
                &pages,
            );
            if mine != theirs {
                differences.push(format!(
                    "--- {label}\n--- ours:\n{mine}\n--- 1.11.0:\n{theirs}"
                ));
            }
        }
        answers.push((label, mine));
    }
    ours.shutdown().await;
    if let Some(reference) = reference {
        reference.shutdown().await;
    }

    // What ours said, whether or not the reference ran.
    let said = |label: &str| {
        answers
            .iter()
            .find(|(step, _)| *step == label)
            .map(|(_, text)| text.clone())
            .unwrap_or_default()
    };
    let app = normalize(&app, &pages);
    assert!(
        said("get_os_app_state before install").contains(&format!(
            "isError=true\nError: Protocol error (PWA.getOsAppState): Unknown web-app manifest id {app}"
        )),
        "{}",
        said("get_os_app_state before install")
    );
    assert!(
        said("install_pwa from a page without the app")
            .contains("Protocol error (PWA.install): Couldn't fetch install info"),
        "{}",
        said("install_pwa from a page without the app")
    );
    assert_eq!(
        said("install_pwa"),
        format!(
            "isError=false\nInstalled PWA with manifest ID: {app}\nDisplay mode set to: standalone"
        )
    );
    assert_eq!(
        said("get_os_app_state"),
        format!(
            "isError=false\nOS app state for manifest ID: {app}\nBadge count: 0\nFile handlers: []"
        )
    );
    let launched = said("launch_pwa at a URL in the app");
    assert!(
        launched.contains(&format!("Launched PWA with manifest ID: {app} (")),
        "{launched}"
    );
    assert!(
        launched.contains("Inside the app (") && launched.contains("/app/other.html)"),
        "the app window is not a page: {launched}"
    );
    assert!(
        said("uninstall_pwa").starts_with(&format!(
            "isError=false\nUninstalled PWA with manifest ID: {app}\n## Pages"
        )),
        "{}",
        said("uninstall_pwa")
    );
    assert!(
        said("get_os_app_state after uninstall").contains("Unknown web-app manifest id"),
        "{}",
        said("get_os_app_state after uninstall")
    );
    assert!(
        differences.is_empty(),
        "PWA steps answer differently from chrome-devtools-mcp 1.11.0:\n{}",
        differences.join("\n")
    );
}
