//! A tenant's egress policy: where its browser context may connect. Decided by the proxy on
//! the host name as requested (the deny-list's names) and then on every address that name
//! resolves to (the deny-list's ranges, the default table of special-purpose ranges, the
//! allow-list's exceptions), so a DNS name pointing inside is refused like the address itself.
//! Some local ports are refused whatever the lists say: the browser's remote-debugging port,
//! this server's own port and the egress proxies themselves.

use super::address::{canonical, is_local, special_purpose};
use ipnet::IpNet;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::RwLock;

/// One entry of an `egress_allow` or `egress_deny` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// An address range, e.g. `10.0.0.0/8` or `127.0.0.1` (a /32).
    Net(IpNet),
    /// A host name, exactly (`intranet.example.com`).
    Host(String),
    /// Every name under a domain (`*.example.com`; not `example.com` itself).
    Suffix(String),
}

impl Rule {
    /// Parses an entry as written in the tenants file.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let text = text.trim();
        if let Ok(net) = text.parse::<IpNet>() {
            return Ok(Rule::Net(normalize_net(net)));
        }
        if let Ok(address) = text.parse::<IpAddr>() {
            return Ok(Rule::Net(IpNet::from(canonical(address))));
        }
        if text.contains("://") || text.contains('/') || text.contains(':') {
            return Err(format!(
                "{text:?} is neither an address range (10.0.0.0/8, 127.0.0.1) nor a host name (example.com, *.example.com); URLs and ports are not supported"
            ));
        }
        let (wildcard, name) = match text.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        // The host as the browser's URL parser would write it (lowercase, punycode).
        let parsed = url::Url::parse(&format!("http://{name}/"))
            .ok()
            .and_then(|url| url.host_str().map(String::from))
            .filter(|host| !host.is_empty() && !host.contains('*'))
            .ok_or_else(|| format!("{text:?} is not a valid host name"))?;
        let parsed = parsed.strip_suffix('.').unwrap_or(&parsed).to_string();
        Ok(if wildcard {
            Rule::Suffix(parsed)
        } else {
            Rule::Host(parsed)
        })
    }

    fn matches_host(&self, host: &str) -> bool {
        match self {
            Rule::Host(name) => host == name,
            Rule::Suffix(domain) => host
                .strip_suffix(domain.as_str())
                .is_some_and(|prefix| prefix.ends_with('.')),
            Rule::Net(_) => false,
        }
    }

    fn matches_address(&self, address: IpAddr) -> bool {
        match self {
            Rule::Net(net) => net.contains(&canonical(address)),
            _ => false,
        }
    }

    pub fn text(&self) -> String {
        match self {
            Rule::Net(net) => net.to_string(),
            Rule::Host(name) => name.clone(),
            Rule::Suffix(domain) => format!("*.{domain}"),
        }
    }
}

/// `::ffff:10.0.0.0/104` means `10.0.0.0/8`.
fn normalize_net(net: IpNet) -> IpNet {
    match net {
        IpNet::V6(v6) => match v6.addr().to_ipv4_mapped() {
            Some(v4) if v6.prefix_len() >= 96 => {
                IpNet::new(IpAddr::V4(v4), v6.prefix_len() - 96).unwrap_or(net)
            }
            _ => net,
        },
        IpNet::V4(_) => net,
    }
}

/// What a tenant may reach besides the public internet, and what not even that.
#[derive(Debug, Clone, Default)]
pub struct EgressPolicy {
    pub tenant: String,
    /// Exceptions to the default table: these ranges and names are reachable even when they
    /// are loopback, private or link-local.
    pub allow: Vec<Rule>,
    /// Always refused, checked first.
    pub deny: Vec<Rule>,
    /// `false` (`egress_public = false`): only what `allow` lists is reachable.
    pub public: bool,
}

impl EgressPolicy {
    /// The public internet and nothing else: the default of a tenant.
    pub fn public_only(tenant: &str) -> EgressPolicy {
        EgressPolicy {
            tenant: tenant.to_string(),
            public: true,
            ..EgressPolicy::default()
        }
    }

    /// Nothing at all (the shared browser's own default context, which no tenant works in).
    pub fn nothing() -> EgressPolicy {
        EgressPolicy {
            tenant: "(no tenant)".to_string(),
            public: false,
            ..EgressPolicy::default()
        }
    }

    /// Refusal by name, before resolving: the deny-list's host names, and, for a tenant that
    /// may reach only its allow-list, every name no name on that list matches. A name of the
    /// page's choosing is never resolved just to be refused: the query itself would carry the
    /// page's data to the resolver. (Address entries admit addresses written as addresses.)
    pub fn check_host(&self, host: &str) -> Result<(), String> {
        if let Some(rule) = self.deny.iter().find(|rule| rule.matches_host(host)) {
            return Err(format!(
                "{host} matches {} on the egress_deny list of tenant {:?}",
                rule.text(),
                self.tenant
            ));
        }
        let is_address = host.parse::<IpAddr>().is_ok();
        if !self.public && !is_address && !self.allow.iter().any(|rule| rule.matches_host(host)) {
            return Err(format!(
                "{host} is not on the egress_allow list of tenant {:?}, which may reach nothing else (it was not resolved: list the name, or *.its-domain, to reach it by name)",
                self.tenant
            ));
        }
        Ok(())
    }

    /// Refusal of one resolved address of `host`.
    pub fn check_address(&self, host: &str, address: SocketAddr) -> Result<(), String> {
        let ip = canonical(address.ip());
        if let Some(what) = protected(ip, address.port()) {
            return Err(format!(
                "{} is {what}, which no tenant may reach",
                SocketAddr::new(ip, address.port())
            ));
        }
        if let Some(rule) = self.deny.iter().find(|rule| rule.matches_address(ip)) {
            return Err(format!(
                "{ip} is in {} on the egress_deny list of tenant {:?}",
                rule.text(),
                self.tenant
            ));
        }
        let allowed = self
            .allow
            .iter()
            .any(|rule| rule.matches_address(ip) || rule.matches_host(host));
        if allowed {
            return Ok(());
        }
        if let Some(why) = special_purpose(ip) {
            let shown = if host == ip.to_string() {
                ip.to_string()
            } else {
                format!("{host} ({ip})")
            };
            return Err(format!(
                "{shown} is a {why} address; tenant {:?} may not reach it unless its egress_allow lists it",
                self.tenant
            ));
        }
        if !self.public {
            return Err(format!(
                "{host} ({ip}) is not on the egress_allow list of tenant {:?}, which may reach nothing else",
                self.tenant
            ));
        }
        Ok(())
    }
}

/// Local endpoints no tenant may reach: what they are, by port (any loopback or unspecified
/// address) or by exact address.
static PROTECTED: RwLock<BTreeMap<(Option<IpAddr>, u16), &'static str>> =
    RwLock::new(BTreeMap::new());

/// Refuses every tenant `address` from now on (a port on `0.0.0.0`/`::` or on loopback is
/// refused on every loopback and unspecified address).
pub fn protect(address: SocketAddr, what: &'static str) {
    let ip = canonical(address.ip());
    let key = if is_local(ip) { None } else { Some(ip) };
    if let Ok(mut protected) = PROTECTED.write() {
        protected.insert((key, address.port()), what);
    }
}

/// Lifts [`protect`] (a proxy that closed, a browser that exited).
pub fn unprotect(address: SocketAddr) {
    let ip = canonical(address.ip());
    let key = if is_local(ip) { None } else { Some(ip) };
    if let Ok(mut protected) = PROTECTED.write() {
        protected.remove(&(key, address.port()));
    }
}

fn protected(ip: IpAddr, port: u16) -> Option<&'static str> {
    let protected = PROTECTED.read().ok()?;
    if is_local(ip)
        && let Some(what) = protected.get(&(None, port))
    {
        return Some(what);
    }
    protected.get(&(Some(ip), port)).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(text: &str) -> SocketAddr {
        text.parse().expect("a socket address")
    }

    fn policy(allow: &[&str], deny: &[&str]) -> EgressPolicy {
        let rules = |list: &[&str]| {
            list.iter()
                .map(|text| Rule::parse(text).expect("a rule"))
                .collect()
        };
        EgressPolicy {
            tenant: "alice".into(),
            allow: rules(allow),
            deny: rules(deny),
            public: true,
        }
    }

    #[test]
    fn rules_parse_ranges_addresses_and_names() {
        assert_eq!(
            Rule::parse("127.0.0.1").expect("rule"),
            Rule::Net("127.0.0.1/32".parse().expect("net"))
        );
        assert_eq!(
            Rule::parse("::ffff:10.0.0.0/104").expect("rule"),
            Rule::Net("10.0.0.0/8".parse().expect("net"))
        );
        assert_eq!(
            Rule::parse("Intranet.Example.COM.").expect("rule"),
            Rule::Host("intranet.example.com".into())
        );
        assert_eq!(
            Rule::parse("*.corp.example").expect("rule"),
            Rule::Suffix("corp.example".into())
        );
        assert!(Rule::parse("http://example.com/").is_err());
        assert!(Rule::parse("example.com:80").is_err());
        assert!(Rule::parse("a*b.example").is_err());
    }

    #[test]
    fn the_default_refuses_inside_addresses_and_allows_public_ones() {
        let default = policy(&[], &[]);
        for inside in [
            "127.0.0.1:80",
            "[::1]:80",
            "[::ffff:127.0.0.1]:80",
            "10.0.0.1:80",
            "169.254.169.254:80",
            "0.0.0.0:80",
        ] {
            let refusal = default
                .check_address("h", address(inside))
                .expect_err(inside);
            assert!(refusal.contains("egress_allow"), "{refusal}");
        }
        assert!(
            default
                .check_address("example.com", address("93.184.216.34:443"))
                .is_ok()
        );
    }

    #[test]
    fn the_allow_list_admits_and_the_deny_list_refuses() {
        let listed = policy(
            &["127.0.0.1/32", "*.corp.example"],
            &["93.184.216.0/24", "ads.example"],
        );
        assert!(
            listed
                .check_address("127.0.0.1", address("127.0.0.1:8080"))
                .is_ok()
        );
        assert!(
            listed
                .check_address("127.0.0.2", address("127.0.0.2:8080"))
                .is_err()
        );
        assert!(
            listed
                .check_address("db.corp.example", address("10.1.1.1:80"))
                .is_ok()
        );
        assert!(
            listed
                .check_address("corp.example", address("10.1.1.1:80"))
                .is_err()
        );
        assert!(
            listed
                .check_address("example.com", address("93.184.216.34:443"))
                .is_err()
        );
        assert!(listed.check_host("ads.example").is_err());
        assert!(listed.check_host("www.ads.example").is_ok());
        let closed = EgressPolicy {
            public: false,
            ..listed
        };
        assert!(
            closed
                .check_address("one.one", address("1.1.1.1:443"))
                .is_err()
        );
        assert!(
            closed
                .check_address("127.0.0.1", address("127.0.0.1:8080"))
                .is_ok()
        );
    }

    /// Finding 11: a closed tenant's names are refused before any lookup unless a name on
    /// its allow-list matches; addresses written as such go on to the address checks.
    #[test]
    fn a_closed_tenant_resolves_only_names_its_allow_list_names() {
        let closed = EgressPolicy {
            public: false,
            ..policy(
                &["127.0.0.1", "10.0.0.5", "*.corp.example", "intra.example"],
                &[],
            )
        };
        for refused in [
            "secret-data.attacker.example",
            "localhost",
            "corp.example",
            "10.0.0.5.nip.io",
        ] {
            assert!(
                closed.check_host(refused).is_err(),
                "{refused} would be resolved"
            );
        }
        for admitted in [
            "db.corp.example",
            "intra.example",
            "127.0.0.1",
            "10.0.0.5",
            "::1",
        ] {
            assert!(closed.check_host(admitted).is_ok(), "{admitted}");
        }
        // An open tenant resolves public names as before.
        assert!(policy(&[], &[]).check_host("example.com").is_ok());
    }

    #[test]
    fn protected_ports_are_refused_even_when_loopback_is_allowed() {
        let listed = policy(&["127.0.0.0/8", "::1/128"], &[]);
        protect(
            address("127.0.0.1:1"),
            "the browser's remote-debugging port",
        );
        for spelled in [
            "127.0.0.1:1",
            "127.0.0.2:1",
            "[::1]:1",
            "0.0.0.0:1",
            "[::ffff:127.0.0.1]:1",
        ] {
            let refusal = listed
                .check_address("x", address(spelled))
                .expect_err(spelled);
            assert!(refusal.contains("remote-debugging"), "{refusal}");
        }
        assert!(listed.check_address("x", address("127.0.0.1:2")).is_ok());
        unprotect(address("127.0.0.1:1"));
        assert!(listed.check_address("x", address("127.0.0.1:1")).is_ok());
    }
}
