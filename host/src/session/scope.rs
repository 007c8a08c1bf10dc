//! Which browser a session works in, and which of its targets the session may adopt: all of
//! them in a browser of its own, only those of its own browser contexts in a shared one.

use crate::browser::{BrowserConn, SharedBrowser, cdp};
use std::sync::Arc;

/// The browser a session works in.
pub enum BrowserHandle {
    Owned(Box<BrowserConn>),
    Shared(Arc<BrowserConn>),
}

impl BrowserHandle {
    pub fn connection(&self) -> &BrowserConn {
        match self {
            BrowserHandle::Owned(connection) => connection,
            BrowserHandle::Shared(connection) => connection,
        }
    }
}

/// A session confined to one browser context of a shared browser.
pub struct ContextScope {
    pub shared: Arc<SharedBrowser>,
    /// The session's default browser context, created with the connection.
    pub context: Option<String>,
}

/// What `Target.getTargets` says of one target.
pub struct TargetInfo {
    pub kind: String,
    pub title: String,
    pub url: String,
    pub context: String,
}

/// Whether a live page becomes one of the session's pages. Browser-internal pages (internal
/// schemes, or not of type `page`) never do; DevTools windows only with `devtools`
/// (`--experimentalDevtools`, as 1.11.0 lists them). Confined to some contexts, only a target
/// the browser lists in one of them does: an unknown target is someone else's until proven not.
pub fn adoptable(
    info: Option<&TargetInfo>,
    own_contexts: Option<&[String]>,
    devtools: bool,
) -> bool {
    let internal = |info: &TargetInfo| {
        let devtools_window = devtools && info.url.starts_with("devtools://");
        info.kind != "page"
            || [
                "chrome://",
                "chrome-untrusted://",
                "chrome-extension://",
                "devtools://",
            ]
            .iter()
            .any(|scheme| info.url.starts_with(scheme) && !devtools_window)
    };
    match (info, own_contexts) {
        (Some(info), _) if internal(info) => false,
        (Some(info), Some(own)) => own.contains(&info.context),
        (None, Some(_)) => false,
        (_, None) => true,
    }
}

/// A new browser context; with `proxy_server` (a tenant's egress proxy) every request of the
/// context goes through it, loopback included (`<-loopback>`).
pub async fn create_browser_context(
    browser: &chromiumoxide::Browser,
    proxy_server: Option<&str>,
) -> Result<String, String> {
    let params = match proxy_server {
        Some(proxy) => serde_json::json!({
            "proxyServer": proxy,
            "proxyBypassList": crate::net::PROXY_BYPASS_LIST,
        }),
        None => serde_json::json!({}),
    };
    let created = browser
        .execute(cdp("Target.createBrowserContext", params))
        .await
        .map_err(|error| error.to_string())?;
    created.result["browserContextId"]
        .as_str()
        .map(String::from)
        .ok_or_else(|| "The browser did not create a browser context.".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(kind: &str, url: &str, context: &str) -> TargetInfo {
        TargetInfo {
            kind: kind.into(),
            title: String::new(),
            url: url.into(),
            context: context.into(),
        }
    }

    #[test]
    fn a_confined_session_adopts_only_pages_of_its_own_contexts() {
        let own = vec!["mine".to_string(), "mine-named".to_string()];
        let own = Some(own.as_slice());
        let page = |context| target("page", "http://127.0.0.1/", context);
        assert!(adoptable(Some(&page("mine")), own, false));
        assert!(adoptable(Some(&page("mine-named")), own, false));
        // Another tenant's page, even with the same URL.
        assert!(!adoptable(Some(&page("theirs")), own, false));
        // A target the browser did not list: someone else's until proven not.
        assert!(!adoptable(None, own, false));
        assert!(!adoptable(
            Some(&target("page", "chrome://newtab/", "mine")),
            own,
            false
        ));
        assert!(!adoptable(
            Some(&target("service_worker", "http://a/", "mine")),
            own,
            false
        ));
    }

    #[test]
    fn a_session_with_its_own_browser_adopts_every_user_page() {
        assert!(adoptable(
            Some(&target("page", "http://a/", "any")),
            None,
            false
        ));
        assert!(adoptable(None, None, false));
        assert!(!adoptable(
            Some(&target("page", "devtools://x", "any")),
            None,
            false
        ));
        // `--experimentalDevtools`: DevTools windows are pages too, other internal ones not.
        assert!(adoptable(
            Some(&target("page", "devtools://x", "any")),
            None,
            true
        ));
        assert!(!adoptable(
            Some(&target("page", "chrome://newtab/", "any")),
            None,
            true
        ));
    }
}
