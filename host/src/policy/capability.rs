//! Host capabilities: the groups of host functions a plugin may be granted, and the check each
//! host function makes before it acts.

use super::plugin_urls::{UrlRule, parse_target, runs_script};
use std::collections::BTreeSet;
use std::fmt;

/// A group of host functions. Response declarations (lines, pages, snapshots, lists) need no
/// grant: they only shape the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Capability {
    /// Read the selected page, page handles, URLs, dialogs, wait for text, screenshots.
    PagesRead,
    /// Select, open and close pages.
    PagesManage,
    /// Navigate (and open pages at a URL), limited by the URL patterns granted.
    Navigate,
    /// Click, hover, fill, type, press keys, drag, answer dialogs.
    Input,
    /// Evaluate JavaScript in the page.
    Script,
    /// Emulation and viewport size.
    Emulate,
    /// Write files (through the sandbox) and temporary files.
    FilesWrite,
    /// Hand local files to the page (file inputs).
    FilesRead,
    /// Performance traces and their insights.
    Performance,
    /// Heap snapshots.
    Memory,
    /// Read an element's CSS cascade (`get-css-styles`).
    Styles,
    /// Record videos of a page.
    Screencast,
    /// Run Lighthouse (a Node.js process the host starts) against a page.
    Lighthouse,
    /// List and run the tools a page offers (third-party developer tools, WebMCP): they run
    /// the page's own code with arguments the agent chose.
    PageTools,
    /// Install (or reload) a browser extension from a folder: code from disk runs in the whole
    /// browser. Never part of a default grant.
    ExtensionsInstall,
    /// List, uninstall and trigger installed extensions.
    Extensions,
    /// Install, uninstall and launch web apps, and read their OS state: apps belong to the
    /// whole browser profile.
    Pwa,
    /// Save and restore named sessions (beyond 1.11.0, `--sessionStore`): a session's
    /// cookies and local storage, sealed with the operator's key. Whoever holds it can sign
    /// the browser in as any saved login of the session's tenant.
    Sessions,
    /// Keep what a call started running after it returns (a performance trace, a screencast
    /// stopped by a later call). Without it, such effects end with the call that started them.
    LongLived,
    /// Show a page to a person through a live view and wait for them (`request_human`): the
    /// person's input reaches the page, and the call waits on them.
    Human,
}

impl Capability {
    pub const ALL: [Capability; 20] = [
        Capability::PagesRead,
        Capability::PagesManage,
        Capability::Navigate,
        Capability::Input,
        Capability::Script,
        Capability::Emulate,
        Capability::FilesWrite,
        Capability::FilesRead,
        Capability::Performance,
        Capability::Memory,
        Capability::Styles,
        Capability::Screencast,
        Capability::Lighthouse,
        Capability::PageTools,
        Capability::ExtensionsInstall,
        Capability::Extensions,
        Capability::Pwa,
        Capability::Sessions,
        Capability::LongLived,
        Capability::Human,
    ];

    /// The name used in policy files.
    pub fn name(self) -> &'static str {
        match self {
            Capability::PagesRead => "pages.read",
            Capability::PagesManage => "pages.manage",
            Capability::Navigate => "navigate",
            Capability::Input => "input",
            Capability::Script => "script",
            Capability::Emulate => "emulate",
            Capability::FilesWrite => "files.write",
            Capability::FilesRead => "files.read",
            Capability::Performance => "performance",
            Capability::Memory => "memory",
            Capability::Styles => "styles",
            Capability::Screencast => "screencast",
            Capability::Lighthouse => "lighthouse",
            Capability::PageTools => "page-tools",
            Capability::ExtensionsInstall => "extensions.install",
            Capability::Extensions => "extensions",
            Capability::Pwa => "pwa",
            Capability::Sessions => "sessions",
            Capability::LongLived => "long-lived",
            Capability::Human => "human",
        }
    }

    pub fn from_name(name: &str) -> Option<Capability> {
        Capability::ALL
            .into_iter()
            .find(|capability| capability.name() == name)
    }

    pub fn all_names() -> String {
        Capability::ALL
            .iter()
            .map(|capability| capability.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

include!(concat!(env!("OUT_DIR"), "/interface_capabilities.rs"));

impl Capability {
    /// The capability an interface of the newest contract is (its WIT's `Capability:` line);
    /// `None` for the interfaces that need none (`types`, `response`, `tool`). An interface the
    /// contract does not have is `Err`.
    pub fn of_interface(interface: &str) -> Result<Option<Capability>, String> {
        let (_, name) = INTERFACE_CAPABILITIES
            .iter()
            .find(|(known, _)| *known == interface)
            .ok_or_else(|| format!("the contract has no interface {interface}"))?;
        match *name {
            "none" => Ok(None),
            name => Capability::from_name(name)
                .map(Some)
                .ok_or_else(|| format!("interface {interface} names an unknown capability {name}")),
        }
    }

    /// The interface of the newest contract that is this capability, if one is.
    pub fn interface(self) -> Option<&'static str> {
        INTERFACE_CAPABILITIES
            .iter()
            .find(|(_, name)| *name == self.name())
            .map(|(interface, _)| *interface)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// A call used a capability its policy does not grant. A trap, so the plugin cannot carry on
/// as if nothing happened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    #[error(
        "it called {function}, which needs the capability `{capability}`, and its policy does not grant it (add \"{capability}\" to `capabilities` under [plugins.{tool}] in the policy file)"
    )]
    Capability {
        tool: String,
        capability: Capability,
        function: &'static str,
    },
    #[error(
        "it tried to navigate to {url}, which matches none of the URL patterns its policy grants (`navigate` under [plugins.{tool}] in the policy file)"
    )]
    Url { tool: String, url: String },
    #[error(
        "it tried to navigate to {url}, which cannot be checked against the URL patterns its policy grants: {reason}"
    )]
    UncheckableUrl {
        tool: String,
        url: String,
        reason: String,
    },
    /// A host function broke its own declaration (a bug in the server, never the plugin's).
    #[error("the server refused an undeclared effect: {0}")]
    Internal(String),
    #[error(
        "its page went to {url} during the call (a redirect, or a navigation the page started), which matches none of the URL patterns its policy grants ({patterns}; `navigate` under [plugins.{tool}] in the policy file); the page was sent to about:blank"
    )]
    LeftAllowedUrls {
        tool: String,
        url: String,
        patterns: String,
    },
    /// A page the call was about to read or act on stands outside the patterns (moved before
    /// the call, or by the page itself after an earlier call): nothing of it was read, and the
    /// page is left where it is (the move may be the client's own).
    #[error(
        "it would act on the page at {url}, which matches none of the URL patterns its policy grants ({patterns}); a plugin reads and acts only on pages inside them: select or open a page inside them, or add a pattern to `navigate` under [plugins.{tool}] in the policy file"
    )]
    OutsidePatterns {
        tool: String,
        url: String,
        patterns: String,
    },
}

/// What one plugin may do: its capabilities and the URLs it may navigate to.
#[derive(Debug, Clone)]
pub struct Grants {
    tool: String,
    /// A built-in tool under its default grants (no policy rule names it).
    builtin: bool,
    capabilities: BTreeSet<Capability>,
    /// `None`: any URL (when `navigate` is granted).
    urls: Option<Vec<UrlRule>>,
    /// The patterns as the policy spells them, for refusals.
    patterns: String,
}

impl Grants {
    /// Everything: the built-in tools.
    pub fn all(tool: &str) -> Grants {
        Grants {
            tool: tool.to_string(),
            builtin: true,
            capabilities: Capability::ALL.into_iter().collect(),
            urls: None,
            patterns: String::new(),
        }
    }

    pub fn new(
        tool: &str,
        capabilities: BTreeSet<Capability>,
        url_patterns: Option<&[String]>,
    ) -> Result<Grants, String> {
        let urls = match url_patterns {
            Some(patterns) => Some(
                patterns
                    .iter()
                    .map(|pattern| UrlRule::parse(pattern))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            None => None,
        };
        let patterns = url_patterns
            .unwrap_or_default()
            .iter()
            .map(|pattern| format!("`{pattern}`"))
            .collect::<Vec<_>>()
            .join(", ");
        Ok(Grants {
            tool: tool.to_string(),
            builtin: false,
            capabilities,
            urls,
            patterns,
        })
    }

    /// Whether these are a built-in tool's default grants (the tool follows the reference
    /// 1.11.0, so e.g. its HTML reports go where the agent asked).
    pub fn is_builtin(&self) -> bool {
        self.builtin
    }

    pub fn grants(&self, capability: Capability) -> bool {
        self.capabilities.contains(&capability)
    }

    /// The check a host function makes first.
    pub fn require(&self, capability: Capability, function: &'static str) -> Result<(), Denied> {
        if self.grants(capability) {
            return Ok(());
        }
        Err(Denied::Capability {
            tool: self.tool.clone(),
            capability,
            function,
        })
    }

    /// Navigation: the capability, then the URL as the browser parses it: `javascript:` and
    /// `data:` URLs run script (they need `script` too), and with URL patterns only a parsed
    /// http(s) URL without credentials that a pattern matches. Returns the string to send to
    /// the browser: the serialization of the URL that was checked. `about:blank` is always
    /// allowed.
    pub fn require_url(&self, raw: &str, function: &'static str) -> Result<String, Denied> {
        self.require(Capability::Navigate, function)?;
        if raw == "about:blank" {
            return Ok(raw.to_string());
        }
        let parsed = parse_target(raw);
        if let Ok(url) = &parsed
            && runs_script(url)
        {
            self.require(Capability::Script, function)?;
        }
        let Some(rules) = &self.urls else {
            // Any URL: the browser gets the checked serialization, or the raw text it will
            // refuse itself.
            return Ok(parsed.map_or_else(|_| raw.to_string(), |url| url.to_string()));
        };
        let url = parsed.map_err(|reason| Denied::UncheckableUrl {
            tool: self.tool.clone(),
            url: raw.to_string(),
            reason,
        })?;
        if rules.iter().any(|rule| rule.matches(&url)) {
            Ok(url.to_string())
        } else {
            Err(Denied::Url {
                tool: self.tool.clone(),
                url: url.to_string(),
            })
        }
    }

    /// Whether the policy restricts navigation to URL patterns (then pages are re-checked
    /// after anything that may have navigated them).
    pub fn restricts_urls(&self) -> bool {
        self.urls.is_some()
    }

    /// The check after a page moved during the call (redirects, page-started navigations).
    pub fn check_landed(&self, current: &str) -> Result<(), Denied> {
        match self.within_patterns(current) {
            true => Ok(()),
            false => Err(Denied::LeftAllowedUrls {
                tool: self.tool.clone(),
                url: current.to_string(),
                patterns: self.patterns.clone(),
            }),
        }
    }

    /// The check before a call reads or acts on a page it has not seen move: the page's scope.
    pub fn check_scope(&self, current: &str) -> Result<(), Denied> {
        match self.within_patterns(current) {
            true => Ok(()),
            false => Err(Denied::OutsidePatterns {
                tool: self.tool.clone(),
                url: current.to_string(),
                patterns: self.patterns.clone(),
            }),
        }
    }

    /// Whether a page at `current` is one this plugin may read and act on (an empty page
    /// always is).
    fn within_patterns(&self, current: &str) -> bool {
        let Some(rules) = &self.urls else {
            return true;
        };
        current.is_empty()
            || current == "about:blank"
            || parse_target(current).is_ok_and(|url| rules.iter().any(|rule| rule.matches(&url)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_capability_round_trips_its_name() {
        for capability in Capability::ALL {
            assert_eq!(Capability::from_name(capability.name()), Some(capability));
        }
        assert_eq!(Capability::from_name("network"), None);
    }

    #[test]
    fn navigation_is_limited_to_the_granted_patterns() {
        let patterns = vec!["http://127.0.0.1:*/*".to_string()];
        let grants = Grants::new(
            "t",
            [Capability::Navigate].into_iter().collect(),
            Some(&patterns),
        )
        .expect("patterns");
        assert_eq!(
            grants
                .require_url("http://127.0.0.1:8080/a/b", "navigate")
                .ok()
                .as_deref(),
            Some("http://127.0.0.1:8080/a/b")
        );
        assert!(matches!(
            grants.require_url("http://127.0.0.1:1@localhost:9/", "navigate"),
            Err(Denied::UncheckableUrl { .. })
        ));
        // A javascript: URL runs script: it needs `script`, whatever the patterns.
        assert!(matches!(
            grants.require_url("javascript:alert(1)", "navigate"),
            Err(Denied::Capability {
                capability: Capability::Script,
                ..
            })
        ));
        let unrestricted = Grants::new("t", [Capability::Navigate].into_iter().collect(), None)
            .expect("no patterns");
        assert!(matches!(
            unrestricted.require_url("data:text/html,<script>x</script>", "navigate"),
            Err(Denied::Capability {
                capability: Capability::Script,
                ..
            })
        ));
        assert!(grants.check_landed("http://127.0.0.1:5/x").is_ok());
        assert!(grants.check_landed("http://localhost:5/x").is_err());
        assert!(grants.require_url("about:blank", "navigate").is_ok());
        let denied = grants.require_url("https://example.com/", "navigate");
        assert!(matches!(denied, Err(Denied::Url { .. })));
        let none = Grants::new("t", BTreeSet::new(), None).expect("no patterns");
        assert!(matches!(
            none.require_url("about:blank", "navigate"),
            Err(Denied::Capability { .. })
        ));
    }
}
