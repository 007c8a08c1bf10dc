//! Progressive Web Apps (`--categoryPwa`): install the fixture app, read its OS state, launch
//! it (its window becomes a page), uninstall it; the errors of unknown apps and of an install
//! URL that declares another app. The same steps run against chrome-devtools-mcp 1.11.0 when
//! Node is here, and every answer must be the same text.

use crate::differential::{normalize, same_tool, tools_by_name};
use crate::support::side_by_side::{SideBySide, Step};
use crate::support::{FixtureServer, Route};
use serde_json::json;
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
fn steps(pages: &FixtureServer) -> Vec<Step> {
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
    let servers = SideBySide::start(&["--categoryPwa"]).await;
    let our_tools = tools_by_name(&servers.ours.list_tools().await);
    for name in PWA_TOOLS {
        assert!(our_tools.contains_key(name), "{name} is not listed");
    }
    if let Some(reference) = &servers.reference {
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

    let answers = servers.run(steps(&pages), &pages).await;
    let said = |label: &str| answers.said(label);
    let app = normalize(&pages.url("/app/"), &pages);
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
    answers.assert_same_as_reference("PWA steps");
}
