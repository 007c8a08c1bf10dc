//! `install_pwa`: installs a web app through the browser's PWA domain (no install dialog).

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum DisplayMode {
    Standalone,
    Browser,
}

impl DisplayMode {
    fn as_str(&self) -> &'static str {
        match self {
            DisplayMode::Standalone => "standalone",
            DisplayMode::Browser => "browser",
        }
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The manifest ID of the web app: the resolved `id` member of its manifest. If `id` is omitted, it defaults to the resolved `start_url` (e.g. "https://example.com/"). See https://w3c.github.io/manifest/#id-member.
    manifest_id: String,
    /// The location of the app or bundle. For a normal site this is the page URL; for an Isolated Web App it can be a file:// or http(s):// signed web bundle.
    install_url_or_bundle_url: String,
    /// Optional user display mode preference applied after install. "standalone" opens the app in its own window; "browser" opens it as a tab. Installs via the PWA CDP domain default to "browser" because they do not simulate the install dialog, so pass "standalone" to get an app-window experience.
    display_mode: Option<DisplayMode>,
}

struct InstallPwa;

impl GlobalTool for InstallPwa {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "install_pwa",
            Category::Pwa,
            "Installs a Progressive Web App (PWA) identified by its manifest ID. This installs through the PWA CDP domain without a user gesture or install dialog. DevTools installs default to browser display mode.",
        )
        // A file:// bundle or a local path is checked against the sandbox; http(s) URLs pass.
        .file_param("installUrlOrBundleUrl")
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let mode = params.display_mode.as_ref().map(DisplayMode::as_str);
        let wit_mode = params.display_mode.as_ref().map(|mode| match mode {
            DisplayMode::Standalone => devtools_tool::pwa::DisplayMode::Standalone,
            DisplayMode::Browser => devtools_tool::pwa::DisplayMode::Browser,
        });
        devtools_tool::pwa::install(
            &params.manifest_id,
            &params.install_url_or_bundle_url,
            wit_mode,
        )?;
        response.line(format!(
            "Installed PWA with manifest ID: {}",
            params.manifest_id
        ));
        if let Some(mode) = mode {
            response.line(format!("Display mode set to: {mode}"));
        }
        Ok(())
    }
}

devtools_tool::register_global_tool!(InstallPwa);
