//! Which URLs a tenant may ask the browser to open, decided on the URL the browser will load:
//! the text is parsed once with the WHATWG parser the browser follows (the `url` crate strips
//! leading controls and spaces and deletes tabs and newlines anywhere, exactly as Chromium
//! does), the parsed value is checked, and its serialization (the string that was checked) is
//! what the browser is sent. A string test would let `fi\tle:` or ` \x01chrome:` through.

use url::{Host, Url};

/// What a tenant's URL may be.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    /// `javascript:` and `data:` URLs run script of the caller's making: only for tenants
    /// that may run script anyway.
    pub script: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlRefusal {
    #[error(
        "{0:?} is not a valid absolute URL ({1}); pass an http(s) URL such as https://example.com/"
    )]
    Invalid(String, String),
    #[error(
        "{scheme}: URLs are not available to tenants of this server: they reach the server's files or the browser's internals. Use an http(s) URL (or about:blank)."
    )]
    Scheme { scheme: String },
    #[error(
        "{scheme}: URLs run script and this tenant may not run script (evaluate_script is not allowed for it)."
    )]
    Script { scheme: String },
    #[error(
        "URLs with a user name or password ({0}) are refused: the part before '@' is not the host the browser would open."
    )]
    Userinfo(String),
    #[error("{0} has no host.")]
    NoHost(String),
}

impl UrlPolicy {
    /// The parsed URL when `raw` may be opened by a tenant; send the browser `url.as_str()`.
    pub fn check(&self, raw: &str) -> Result<Url, UrlRefusal> {
        let url = Url::parse(raw)
            .map_err(|error| UrlRefusal::Invalid(raw.to_string(), error.to_string()))?;
        match url.scheme() {
            "http" | "https" => {
                if !url.username().is_empty() || url.password().is_some() {
                    return Err(UrlRefusal::Userinfo(redacted(&url)));
                }
                if url.host().is_none() {
                    return Err(UrlRefusal::NoHost(url.to_string()));
                }
                Ok(url)
            }
            "about" if url.path() == "blank" => Ok(url),
            "javascript" | "data" if self.script => Ok(url),
            "javascript" | "data" => Err(UrlRefusal::Script {
                scheme: url.scheme().to_string(),
            }),
            other => Err(UrlRefusal::Scheme {
                scheme: other.to_string(),
            }),
        }
    }
}

/// The URL with its password hidden, for messages.
fn redacted(url: &Url) -> String {
    let mut shown = url.clone();
    if shown.password().is_some() {
        let _ignored = shown.set_password(Some("***"));
    }
    shown.to_string()
}

/// The host of an http(s) URL as the proxy and the policy compare it: a domain in lowercase
/// ASCII without its one trailing dot, or an IP address in canonical form.
pub fn host_key(host: &Host<&str>) -> String {
    match host {
        Host::Domain(domain) => domain.strip_suffix('.').unwrap_or(domain).to_string(),
        Host::Ipv4(address) => address.to_string(),
        Host::Ipv6(address) => std::net::IpAddr::V6(*address).to_canonical().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TENANT: UrlPolicy = UrlPolicy { script: false };

    fn refused(raw: &str) -> bool {
        TENANT.check(raw).is_err()
    }

    #[test]
    fn the_browser_parser_tricks_do_not_reach_local_or_internal_schemes() {
        for raw in [
            "file:///etc/passwd",
            "fi\tle:///etc/passwd",
            "fi\nle:///etc/passwd",
            "f\ri\tl\ne:///etc/passwd",
            " \u{1}file:///etc/passwd",
            "\u{0}\u{1f} FILE:///etc/passwd",
            "file:/etc/passwd",
            "file://localhost/etc/passwd",
            "chrome://settings",
            "ch\trome://version",
            "\u{7}chrome://version",
            "chrome-untrusted://terms",
            "devtools://devtools/bundled/inspector.html",
            "dev\ntools://devtools/bundled/inspector.html",
            "view-source:http://127.0.0.1/",
            "view-\tsource:file:///etc/passwd",
            "filesystem:http://a/temporary/x",
            "blob:http://a/0b1c",
            "ftp://example.com/",
            "ws://127.0.0.1/",
            "about:settings",
            "javascript:alert(1)",
            "java\tscript:alert(1)",
            "data:text/html,hi",
            "/relative/path",
            "",
        ] {
            assert!(refused(raw), "{raw:?} must be refused");
        }
    }

    #[test]
    fn web_urls_pass_as_their_serialization() {
        let checked = TENANT
            .check(" \thttps://Example.COM/a\tb ")
            .expect("allowed");
        assert_eq!(checked.as_str(), "https://example.com/ab");
        assert_eq!(
            TENANT.check("about:blank").expect("allowed").as_str(),
            "about:blank"
        );
        assert!(TENANT.check("http://127.0.0.1:8080/file:").is_ok());
    }

    #[test]
    fn userinfo_that_looks_like_a_host_is_refused() {
        let refusal = TENANT
            .check("http://127.0.0.1:1@localhost:18930/")
            .expect_err("userinfo");
        assert!(matches!(refusal, UrlRefusal::Userinfo(_)), "{refusal}");
        assert!(!refusal.to_string().contains(":1@"), "password hidden");
        assert!(refused("http://user@example.com/"));
    }

    #[test]
    fn script_only_for_tenants_that_may_run_script() {
        let scripting = UrlPolicy { script: true };
        assert!(scripting.check("javascript:alert(1)").is_ok());
        assert!(scripting.check("data:text/html,<p>hi").is_ok());
        assert!(scripting.check("file:///etc/passwd").is_err());
        let refusal = TENANT.check("data:text/html,hi").expect_err("no script");
        assert!(matches!(refusal, UrlRefusal::Script { .. }));
    }

    #[test]
    fn hosts_compare_in_their_canonical_form() {
        let key = |raw: &str| {
            let url = Url::parse(raw).expect("a URL");
            host_key(&url.host().expect("a host"))
        };
        assert_eq!(key("http://2130706433/"), "127.0.0.1");
        assert_eq!(key("http://0x7f000001/"), "127.0.0.1");
        assert_eq!(key("http://127.1/"), "127.0.0.1");
        assert_eq!(key("http://[::ffff:127.0.0.1]/"), "127.0.0.1");
        assert_eq!(key("http://LOCALHOST./"), "localhost");
        assert_eq!(key("http://%31%32%37.0.0.1/"), "127.0.0.1");
    }
}
