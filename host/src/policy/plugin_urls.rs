//! Where a plugin may navigate: the `navigate` patterns of its policy, compiled once into
//! structural matchers and applied to the URL as the browser parses it (WHATWG, the `url`
//! crate), never to the string. `http://127.0.0.1:1@evil.example/` has the host
//! `evil.example`, `http://2130706433/` is `127.0.0.1`, and the string sent to Chrome is the
//! serialization of the URL that was checked.
//!
//! Pattern syntax: `SCHEME://HOST[:PORT][/PATH]`.
//! - SCHEME: `http`, `https` or `*` (either).
//! - HOST: a domain (`example.com`, IDN allowed, compared in punycode), `*.example.com`
//!   (its subdomains, not itself), `*` (any host), or an IP address (`127.0.0.1`, `[::1]`;
//!   IPv4-mapped IPv6 addresses match their IPv4 form).
//! - PORT: a number or `*`; omitted means the scheme's default port only.
//! - PATH: a glob over the URL's path (`*` matches anything, `/` included); omitted means any
//!   path. Query and fragment are not matched.

use globset::{GlobBuilder, GlobMatcher};
use std::net::IpAddr;
use url::{Host, Url};

#[derive(Debug, Clone)]
enum HostRule {
    Any,
    Domain(String),
    SubdomainOf(String),
    Ip(IpAddr),
}

#[derive(Debug, Clone)]
pub struct UrlRule {
    schemes: &'static [&'static str],
    host: HostRule,
    /// `None`: any port.
    port: Option<u16>,
    path: Option<GlobMatcher>,
}

/// A URL that could be checked: parsed, http(s), no credentials.
pub struct CheckedUrl {
    pub url: Url,
}

impl UrlRule {
    pub fn parse(pattern: &str) -> Result<UrlRule, String> {
        let bad = |why: &str| format!("`{pattern}`: {why} (expected SCHEME://HOST[:PORT][/PATH])");
        let (scheme, rest) = pattern.split_once("://").ok_or_else(|| bad("no `://`"))?;
        let schemes: &'static [&'static str] = match scheme.to_ascii_lowercase().as_str() {
            "http" => &["http"],
            "https" => &["https"],
            "*" => &["http", "https"],
            _ => return Err(bad("the scheme must be http, https or *")),
        };
        let (authority, path) = match rest.find('/') {
            Some(index) => (&rest[..index], Some(&rest[index..])),
            None => (rest, None),
        };
        if authority.contains('@') {
            return Err(bad("user names and passwords are not allowed"));
        }
        let (host, port) = split_port(authority).ok_or_else(|| bad("bad host or port"))?;
        let default_port = if schemes == ["https"] { 443 } else { 80 };
        let port = match port {
            None if schemes.len() == 2 => None,
            None => Some(default_port),
            Some("*") => None,
            Some(number) => Some(number.parse::<u16>().map_err(|_| bad("bad port"))?),
        };
        let host = if host == "*" {
            HostRule::Any
        } else if let Some(suffix) = host.strip_prefix("*.") {
            match Host::parse(suffix).map_err(|_| bad("bad domain"))? {
                Host::Domain(domain) => {
                    HostRule::SubdomainOf(domain.trim_end_matches('.').to_string())
                }
                _ => return Err(bad("`*.` goes before a domain, not an IP address")),
            }
        } else {
            match Host::parse(host).map_err(|_| bad("bad host"))? {
                Host::Domain(domain) => HostRule::Domain(domain.trim_end_matches('.').to_string()),
                Host::Ipv4(ip) => HostRule::Ip(IpAddr::V4(ip)),
                Host::Ipv6(ip) => HostRule::Ip(IpAddr::V6(ip).to_canonical()),
            }
        };
        let path = match path {
            None | Some("/*") => None,
            Some(glob) => Some(
                GlobBuilder::new(glob)
                    .literal_separator(false)
                    .build()
                    .map_err(|error| bad(&format!("bad path glob: {error}")))?
                    .compile_matcher(),
            ),
        };
        Ok(UrlRule {
            schemes,
            host,
            port,
            path,
        })
    }

    pub fn matches(&self, url: &Url) -> bool {
        if !self.schemes.contains(&url.scheme()) {
            return false;
        }
        let host_ok = match (&self.host, url.host()) {
            (HostRule::Any, Some(_)) => true,
            (HostRule::Domain(rule), Some(Host::Domain(domain))) => {
                domain.trim_end_matches('.') == rule
            }
            (HostRule::SubdomainOf(rule), Some(Host::Domain(domain))) => domain
                .trim_end_matches('.')
                .strip_suffix(rule.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (HostRule::Ip(rule), Some(Host::Ipv4(ip))) => *rule == IpAddr::V4(ip),
            (HostRule::Ip(rule), Some(Host::Ipv6(ip))) => *rule == IpAddr::V6(ip).to_canonical(),
            _ => false,
        };
        let port_ok = self
            .port
            .is_none_or(|port| url.port_or_known_default() == Some(port));
        let path_ok = self
            .path
            .as_ref()
            .is_none_or(|glob| glob.is_match(url.path()));
        host_ok && port_ok && path_ok
    }
}

/// `host[:port]` or `[v6][:port]`.
fn split_port(authority: &str) -> Option<(&str, Option<&str>)> {
    if authority.starts_with('[') {
        let end = authority.find(']')?;
        let host = &authority[..=end];
        return match &authority[end + 1..] {
            "" => Some((host, None)),
            rest => Some((host, Some(rest.strip_prefix(':')?))),
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() => Some((host, Some(port))),
        Some(_) => None,
        None if authority.is_empty() => None,
        None => Some((authority, None)),
    }
}

/// Parses a navigation target as the browser will. `Err` says why it cannot be checked.
pub fn parse_target(raw: &str) -> Result<Url, String> {
    let url = Url::parse(raw).map_err(|error| format!("it is not an absolute URL ({error})"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err("URLs with a user name or password are refused".into());
    }
    Ok(url)
}

/// Schemes whose navigation runs script in the page (§2.6 of the security notes).
pub fn runs_script(url: &Url) -> bool {
    matches!(url.scheme(), "javascript" | "data")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(pattern: &str) -> UrlRule {
        UrlRule::parse(pattern).unwrap_or_else(|error| panic!("{error}"))
    }

    fn allowed(pattern: &str, url: &str) -> bool {
        parse_target(url).is_ok_and(|url| rule(pattern).matches(&url))
    }

    #[test]
    fn userinfo_and_encoded_hosts_cannot_fool_an_ip_rule() {
        let loopback = "http://127.0.0.1:*/*";
        assert!(allowed(loopback, "http://127.0.0.1:8080/a/b"));
        // The classic: the user part looks like the host.
        assert!(!allowed(loopback, "http://127.0.0.1:1@localhost:18930/"));
        assert!(parse_target("http://127.0.0.1:1@localhost:18930/").is_err());
        // The same address in other spellings matches (the browser goes there).
        for spelling in [
            "http://2130706433:9/",
            "http://0x7f000001:9/",
            "http://127.1:9/",
            "http://[::ffff:127.0.0.1]:9/",
        ] {
            assert!(allowed(loopback, spelling), "{spelling}");
        }
        // Tabs and newlines are removed by the parser, as by the browser.
        assert!(allowed(loopback, "http://127.0.\t0.1:80/"));
        assert!(!allowed(loopback, "https://127.0.0.1:443/"));
        assert!(!allowed(loopback, "http://127.0.0.1.evil.example/"));
        assert!(!allowed(loopback, "file:///etc/passwd"));
    }

    #[test]
    fn domains_ports_and_paths_are_structural() {
        assert!(allowed(
            "https://*.example.com/*",
            "https://a.b.example.com/x"
        ));
        assert!(!allowed("https://*.example.com/*", "https://example.com/x"));
        assert!(!allowed(
            "https://*.example.com/*",
            "https://badexample.com/x"
        ));
        assert!(allowed(
            "https://example.com",
            "https://EXAMPLE.com./deep/path"
        ));
        assert!(!allowed("https://example.com", "https://example.com:8443/"));
        assert!(allowed(
            "https://bücher.example",
            "https://xn--bcher-kva.example/"
        ));
        assert!(allowed(
            "http://localhost:*/docs/*",
            "http://localhost:1/docs/a/b"
        ));
        assert!(!allowed(
            "http://localhost:*/docs/*",
            "http://localhost:1/admin"
        ));
        assert!(!allowed(
            "http://localhost:*/docs/*",
            "http://localhost:1/docs/../admin"
        ));
        assert!(allowed("*://[::1]:*", "http://[::1]:5/"));
        for bad in [
            "example.com",
            "ftp://x/",
            "http://u@x/",
            "http://*.1.2.3.4/",
            "http://x:99999/",
        ] {
            assert!(UrlRule::parse(bad).is_err(), "{bad}");
        }
    }
}
