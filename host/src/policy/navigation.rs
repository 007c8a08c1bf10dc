//! Where tools may navigate, as the reference 1.11.0's `validateUrl` decides it: on the parsed
//! URL, before any page is created or loaded.

/// The flags that restrict navigations.
#[derive(Debug, Clone, Copy)]
pub struct NavigationPolicy {
    /// `--javascriptEvaluation` (on by default): off refuses `javascript:`, `data:` and
    /// `vbscript:` URLs.
    pub javascript_evaluation: bool,
    /// `--fileNavigations` (on by default): off refuses `file:` URLs, `view-source:` ones
    /// included.
    pub file_navigations: bool,
    /// `--categoryExtensions`: allows `chrome-extension:` URLs.
    pub extensions: bool,
}

impl Default for NavigationPolicy {
    fn default() -> Self {
        NavigationPolicy {
            javascript_evaluation: true,
            file_navigations: true,
            extensions: false,
        }
    }
}

impl NavigationPolicy {
    /// `Ok` when a tool may navigate to `url`; otherwise the reference's message, which starts
    /// with `Navigating to ` or `Invalid URL: ` (navigate_page tells refusals from failed
    /// navigations by that).
    pub fn check(&self, url: &str) -> Result<(), String> {
        let parsed = url::Url::parse(url).map_err(|_| {
            format!("Invalid URL: \"{url}\". URLs must be valid according to the URL standard.")
        })?;
        let scheme = parsed.scheme();
        if !self.javascript_evaluation && matches!(scheme, "javascript" | "data" | "vbscript") {
            return Err(format!(
                "Navigating to {scheme}: URLs is not allowed when JavaScript evaluation is disabled."
            ));
        }
        if !self.file_navigations && targets_file(&parsed) {
            return Err(
                "Navigating to file: URLs is not allowed when --file-navigations is disabled."
                    .into(),
            );
        }
        match scheme {
            "chrome" if allowed_chrome_page(&parsed) => Ok(()),
            "chrome" | "chrome-untrusted" => {
                Err(format!("Navigating to {scheme}: URLs is not allowed."))
            }
            "chrome-extension" if !self.extensions => Err(
                "Navigating to chrome-extension: URLs is not allowed without --categoryExtensions."
                    .into(),
            ),
            _ => Ok(()),
        }
    }
}

/// The new-tab page and `chrome://inspect` stay reachable, as in the reference.
fn allowed_chrome_page(url: &url::Url) -> bool {
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let path = url.path().to_ascii_lowercase();
    matches!(host.as_str(), "newtab" | "new-tab-page" | "inspect")
        || (host.is_empty()
            && (path == "newtab" || path == "new-tab-page" || path.starts_with("inspect")))
}

/// Whether the URL ends up on `file:` once `view-source:` wrappers are taken off (at most 5,
/// in case of a pathological chain); the inner URL is parsed again, never string-matched.
fn targets_file(url: &url::Url) -> bool {
    let mut current = url.clone();
    for _ in 0..5 {
        if current.scheme() != "view-source" {
            break;
        }
        match url::Url::parse(current.path()) {
            Ok(inner) => current = inner,
            Err(_) => return false,
        }
    }
    current.scheme() == "file"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict() -> NavigationPolicy {
        NavigationPolicy {
            javascript_evaluation: false,
            file_navigations: false,
            extensions: false,
        }
    }

    #[test]
    fn defaults_refuse_only_browser_internal_pages_and_invalid_urls() {
        let policy = NavigationPolicy::default();
        assert!(policy.check("http://127.0.0.1:8080/").is_ok());
        assert!(policy.check("data:text/html,hi").is_ok());
        assert!(policy.check("file:///etc/hostname").is_ok());
        assert!(policy.check("chrome://newtab").is_ok());
        assert_eq!(
            policy.check("chrome://settings"),
            Err("Navigating to chrome: URLs is not allowed.".into())
        );
        assert_eq!(
            policy.check("example.com"),
            Err(
                "Invalid URL: \"example.com\". URLs must be valid according to the URL standard."
                    .into()
            )
        );
        assert!(policy.check("chrome-extension://abc/x.html").is_err());
    }

    #[test]
    fn flags_refuse_script_and_file_urls_on_the_parsed_scheme() {
        let policy = strict();
        assert_eq!(
            policy.check("JavaScript:alert(1)"),
            Err("Navigating to javascript: URLs is not allowed when JavaScript evaluation is disabled.".into())
        );
        assert!(policy.check("data:text/html,x").is_err());
        for file in [
            "file:///etc/passwd",
            "view-source:file:///etc/passwd",
            "view-source:FILE:///etc/passwd",
            "view-source:view-source:file:///x",
        ] {
            assert_eq!(
                policy.check(file),
                Err(
                    "Navigating to file: URLs is not allowed when --file-navigations is disabled."
                        .into()
                ),
                "{file}"
            );
        }
        assert!(policy.check("view-source:http://127.0.0.1/").is_ok());
    }
}
