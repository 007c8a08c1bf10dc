//! `--blockedUrlPattern` and `--allowedUrlPattern`: the reference 1.11.0's restriction of the
//! browser's network by URL patterns (https://urlpattern.spec.whatwg.org/). The patterns are
//! checked here when the server starts, with the reference's messages, and refused when Chrome
//! could not enforce them on redirects or subresources; a navigation a tool asks for is refused
//! before it starts ([`UrlPatterns::check_navigation`]), and the browser enforces the rest on
//! every request of every target (`browser::cdp::url_guard`, with the rules
//! [`UrlPatterns::network_conditions`] gives, as Puppeteer's `blocklist`/`allowlist` do).

use serde_json::{Value, json};
use urlpattern::{UrlPattern, UrlPatternInit, UrlPatternMatchInput};

/// Which of the two flags the patterns came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restriction {
    /// `--blockedUrlPattern`: what matches is refused, the rest loads.
    Blocked,
    /// `--allowedUrlPattern`: only what matches loads.
    Allowed,
}

impl Restriction {
    pub fn flag(self) -> &'static str {
        match self {
            Restriction::Blocked => "--blockedUrlPattern",
            Restriction::Allowed => "--allowedUrlPattern",
        }
    }
}

/// The validated patterns of one of the flags (the reference refuses both together).
#[derive(Debug)]
pub struct UrlPatterns {
    pub restriction: Restriction,
    rules: Vec<(String, UrlPattern)>,
}

/// The reference's text for a navigation the patterns refuse (Puppeteer's `goto`).
pub fn blocked_navigation(url: &str) -> String {
    format!("Navigation to {url} is blocked by blocklist/allowlist rules")
}

/// The reference's refusal of `emulate`'s `networkConditions` under a restriction: the
/// browser's rules are network conditions too, and throttling would replace them.
pub const NO_THROTTLING: &str = "Network throttling is not supported when network blocking (allowlist/blocklist) is configured.";

impl UrlPatterns {
    /// Validates every pattern as the reference's `validateUrlPatterns` does, with its
    /// messages; `None` when no pattern was given (empty values are no patterns).
    pub fn parse(restriction: Restriction, raw: &[String]) -> Result<Option<UrlPatterns>, String> {
        let given: Vec<&String> = raw.iter().filter(|text| !text.is_empty()).collect();
        if given.is_empty() {
            return match (restriction, raw.is_empty()) {
                (Restriction::Allowed, false) => Err(
                    "Invalid --allowedUrlPattern: at least one pattern is required.".to_string(),
                ),
                _ => Ok(None),
            };
        }
        let rules = given
            .into_iter()
            .map(|text| Ok((text.clone(), compile(restriction.flag(), text)?)))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Some(UrlPatterns { restriction, rules }))
    }

    /// The patterns as given.
    pub fn patterns(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|(text, _)| text.as_str())
    }

    /// Puppeteer's `isUrlAllowed`: an empty URL and `about:blank` always are; a URL that does
    /// not parse matches no pattern.
    pub fn is_url_allowed(&self, url: &str) -> bool {
        if url.is_empty() || url == "about:blank" {
            return true;
        }
        let matched = match url::Url::parse(url) {
            Ok(parsed) => self.rules.iter().any(|(_, pattern)| {
                pattern
                    .test(UrlPatternMatchInput::Url(parsed.clone()))
                    .unwrap_or(false)
            }),
            Err(_) => false,
        };
        match self.restriction {
            Restriction::Blocked => !matched,
            Restriction::Allowed => matched,
        }
    }

    /// A navigation a tool asks for, refused before it starts.
    pub fn check_navigation(&self, url: &str) -> Result<(), String> {
        match self.is_url_allowed(url) {
            true => Ok(()),
            false => Err(blocked_navigation(url)),
        }
    }

    /// The parameters of `Network.emulateNetworkConditionsByRule` Puppeteer sends every
    /// target: each blocked pattern offline; or each allowed pattern online, then everything
    /// else offline (the first matching rule wins).
    pub fn network_conditions(&self) -> Value {
        let rule = |pattern: &str, offline: bool| {
            json!({ "urlPattern": pattern, "offline": offline, "latency": 0,
                "downloadThroughput": -1, "uploadThroughput": -1 })
        };
        match self.restriction {
            Restriction::Blocked => json!({
                "offline": true,
                "matchedNetworkConditions":
                    self.patterns().map(|pattern| rule(pattern, true)).collect::<Vec<_>>(),
            }),
            Restriction::Allowed => {
                let mut rules: Vec<Value> = self
                    .patterns()
                    .map(|pattern| rule(pattern, false))
                    .collect();
                rules.push(rule("", true));
                json!({ "matchedNetworkConditions": rules })
            }
        }
    }
}

/// One pattern, refused (with the reference's message) when it does not parse or uses a
/// construct Chrome does not enforce on redirects or subresources.
fn compile(flag: &str, raw: &str) -> Result<UrlPattern, String> {
    if has_partial_ipv4_hostname(raw) {
        return Err(format!(
            "Invalid {flag} \"{raw}\": a partial IPv4 wildcard is not enforced on redirects or subresources. Use an exact IPv4 address or a \"*\" wildcard instead."
        ));
    }
    let constructed = UrlPatternInit::parse_constructor_string::<regex::Regex>(raw, None)
        .and_then(|init| UrlPattern::parse(init, Default::default()));
    let pattern = constructed.map_err(|error| {
        let why = match error {
            urlpattern::Error::BaseUrlRequired => {
                "A base URL must be provided for a relative constructor string.".to_string()
            }
            other => other.to_string(),
        };
        format!("Invalid {flag} \"{raw}\": Failed to construct 'URLPattern': {why}")
    })?;
    if pattern.has_regexp_groups() {
        return Err(format!(
            "Invalid {flag} \"{raw}\": a regexp group is not enforced on redirects or subresources. Use an exact value or a \"*\" wildcard instead."
        ));
    }
    let components = [
        pattern.protocol(),
        pattern.username(),
        pattern.password(),
        pattern.hostname(),
        pattern.port(),
        pattern.pathname(),
        pattern.search(),
        pattern.hash(),
    ];
    if components.into_iter().any(has_named_group) {
        return Err(format!(
            "Invalid {flag} \"{raw}\": a \":name\" named group is not enforced on redirects or subresources. Use an exact value or a \"*\" wildcard instead."
        ));
    }
    Ok(pattern)
}

/// An unescaped `:` in a compiled component is always a `:name` group.
fn has_named_group(component: &str) -> bool {
    component
        .replace("\\\\", "")
        .replace("\\:", "")
        .contains(':')
}

/// A wildcard in a hostname whose last label is numeric (`127.0.0.*`, `*.0.0.1`, `{127.0.0.*}`):
/// Chrome cannot enforce it on redirects or subresources. The reference's text test, kept as is.
fn has_partial_ipv4_hostname(pattern: &str) -> bool {
    let authority = pattern
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or_default())
        .unwrap_or_default();
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if host_port.starts_with('[') {
        return false;
    }
    let hostname = host_port.split(':').next().unwrap_or_default();
    if !hostname.contains('*') {
        return false;
    }
    let stripped: String = hostname
        .chars()
        .filter(|c| !matches!(c, '{' | '}' | '*' | '\\'))
        .collect();
    let last_label = stripped
        .trim_end_matches('.')
        .rsplit('.')
        .next()
        .unwrap_or("");
    let hex = last_label
        .strip_prefix("0x")
        .or_else(|| last_label.strip_prefix("0X"))
        .is_some_and(|digits| digits.chars().all(|c| c.is_ascii_hexdigit()));
    hex || (!last_label.is_empty() && last_label.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(restriction: Restriction, raw: &[&str]) -> Result<Option<UrlPatterns>, String> {
        let raw: Vec<String> = raw.iter().map(|text| text.to_string()).collect();
        UrlPatterns::parse(restriction, &raw)
    }

    fn refusal(raw: &str) -> String {
        patterns(Restriction::Blocked, &[raw]).expect_err(raw)
    }

    #[test]
    fn the_reference_refusals_have_its_messages() {
        assert_eq!(
            refusal("http://a/(foo|bar)"),
            "Invalid --blockedUrlPattern \"http://a/(foo|bar)\": a regexp group is not enforced on redirects or subresources. Use an exact value or a \"*\" wildcard instead."
        );
        assert_eq!(
            refusal("*/x"),
            "Invalid --blockedUrlPattern \"*/x\": Failed to construct 'URLPattern': A base URL must be provided for a relative constructor string."
        );
        assert_eq!(
            refusal("http://127.0.0.*/"),
            "Invalid --blockedUrlPattern \"http://127.0.0.*/\": a partial IPv4 wildcard is not enforced on redirects or subresources. Use an exact IPv4 address or a \"*\" wildcard instead."
        );
        assert_eq!(
            refusal("http://a/:id"),
            "Invalid --blockedUrlPattern \"http://a/:id\": a \":name\" named group is not enforced on redirects or subresources. Use an exact value or a \"*\" wildcard instead."
        );
        for raw in [
            "*://127.0.0.1::port/*",
            "*://*.0.0.1/*",
            "*://{127.0.0.*}/*",
            "*://0x7f.*/*",
            // Refused by 1.11.0 too (its URLPattern takes no IPv6 literal in a hostname).
            "http://[::1]:8080/*",
            "*://(127\\.\\d+\\.\\d+\\.\\d+)/*",
            "foo",
        ] {
            assert!(patterns(Restriction::Allowed, &[raw]).is_err(), "{raw}");
        }
        assert_eq!(
            patterns(Restriction::Allowed, &[""]).expect_err("empty"),
            "Invalid --allowedUrlPattern: at least one pattern is required."
        );
        assert!(
            patterns(Restriction::Blocked, &[""])
                .expect("none")
                .is_none()
        );
    }

    #[test]
    fn exact_values_and_wildcards_are_accepted() {
        for raw in [
            "*://*:*/*.css",
            "http://127.0.0.1:*/*",
            "https://*.example.com/*",
            "*://*/secret*",
        ] {
            assert!(
                matches!(patterns(Restriction::Blocked, &[raw]), Ok(Some(_))),
                "{raw}"
            );
        }
    }

    #[test]
    fn blocked_patterns_refuse_what_they_match_and_allowed_ones_the_rest() {
        let blocked = patterns(Restriction::Blocked, &["http://127.0.0.1:*/secret*"])
            .expect("valid")
            .expect("some");
        assert!(!blocked.is_url_allowed("http://127.0.0.1:8080/secret.html"));
        assert!(blocked.is_url_allowed("http://127.0.0.1:8080/public.html"));
        assert!(blocked.is_url_allowed("about:blank"));
        assert_eq!(
            blocked.check_navigation("http://127.0.0.1:1/secret"),
            Err(
                "Navigation to http://127.0.0.1:1/secret is blocked by blocklist/allowlist rules"
                    .into()
            )
        );
        let allowed = patterns(Restriction::Allowed, &["http://localhost:*/*"])
            .expect("valid")
            .expect("some");
        assert!(allowed.is_url_allowed("http://localhost:9/a"));
        assert!(!allowed.is_url_allowed("http://127.0.0.1:9/a"));
        assert!(!allowed.is_url_allowed("not a url"));
        assert!(allowed.is_url_allowed(""));
    }

    #[test]
    fn the_browser_rules_are_puppeteers() {
        let allowed = patterns(Restriction::Allowed, &["http://a/*"])
            .expect("valid")
            .expect("some");
        let rules = allowed.network_conditions();
        let list = rules["matchedNetworkConditions"].as_array().expect("rules");
        assert_eq!(list.len(), 2);
        assert_eq!(list[0]["offline"], false);
        assert_eq!(list[1]["urlPattern"], "");
        assert_eq!(list[1]["offline"], true);
        assert!(rules.get("offline").is_none());
        let blocked = patterns(Restriction::Blocked, &["http://a/*", "http://b/*"])
            .expect("valid")
            .expect("some");
        let rules = blocked.network_conditions();
        assert_eq!(rules["offline"], true);
        assert_eq!(
            rules["matchedNetworkConditions"][1]["urlPattern"],
            "http://b/*"
        );
    }
}
