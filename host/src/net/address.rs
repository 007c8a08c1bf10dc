//! Which IP addresses a tenant's browser may reach by default: the special-purpose ranges of the
//! IANA registries (loopback, private, link-local with the cloud metadata address, CGNAT,
//! multicast, documentation...) are not the public internet and are refused unless the tenants
//! file lets a tenant in. Decided on the canonical address, so `::ffff:127.0.0.1` is 127.0.0.1.
//! `Ipv4Addr::is_global` is unstable, hence the explicit table.

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether a URL's host is this machine: `localhost` or a loopback address, decided on the
/// canonical address (`::ffff:127.0.0.1` is 127.0.0.1). Plain HTTP is accepted only there.
pub fn is_loopback_host(host: Option<url::Host<&str>>) -> bool {
    match host {
        Some(url::Host::Domain(name)) => name == "localhost",
        Some(url::Host::Ipv4(address)) => address.is_loopback(),
        Some(url::Host::Ipv6(address)) => IpAddr::V6(address).to_canonical().is_loopback(),
        None => false,
    }
}

/// A default-deny range and why it is refused.
struct Range {
    net: IpNet,
    why: &'static str,
}

const fn v4(
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    prefix: u8,
    why: &'static str,
) -> (Ipv4Addr, u8, &'static str) {
    (Ipv4Addr::new(a, b, c, d), prefix, why)
}

const V4_DENIED: [(Ipv4Addr, u8, &str); 16] = [
    v4(0, 0, 0, 0, 8, "\"this network\" (0.0.0.0/8)"),
    v4(10, 0, 0, 0, 8, "private (10.0.0.0/8)"),
    v4(
        100,
        64,
        0,
        0,
        10,
        "shared carrier-grade NAT (100.64.0.0/10)",
    ),
    v4(127, 0, 0, 0, 8, "loopback (127.0.0.0/8)"),
    v4(
        169,
        254,
        0,
        0,
        16,
        "link-local, cloud metadata included (169.254.0.0/16)",
    ),
    v4(172, 16, 0, 0, 12, "private (172.16.0.0/12)"),
    v4(192, 0, 0, 0, 24, "IETF protocol assignments (192.0.0.0/24)"),
    v4(192, 0, 2, 0, 24, "documentation (192.0.2.0/24)"),
    v4(192, 88, 99, 0, 24, "6to4 relay anycast (192.88.99.0/24)"),
    v4(192, 168, 0, 0, 16, "private (192.168.0.0/16)"),
    v4(198, 18, 0, 0, 15, "benchmarking (198.18.0.0/15)"),
    v4(198, 51, 100, 0, 24, "documentation (198.51.100.0/24)"),
    v4(203, 0, 113, 0, 24, "documentation (203.0.113.0/24)"),
    v4(224, 0, 0, 0, 4, "multicast (224.0.0.0/4)"),
    v4(240, 0, 0, 0, 4, "reserved (240.0.0.0/4)"),
    v4(255, 255, 255, 255, 32, "broadcast (255.255.255.255/32)"),
];

/// Inside global unicast (2000::/3), the blocks that are not the public internet.
const V6_DENIED_IN_GLOBAL: [(Ipv6Addr, u8, &str); 4] = [
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        23,
        "IETF protocol assignments, Teredo included (2001::/23)",
    ),
    (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        "documentation (2001:db8::/32)",
    ),
    (
        Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0),
        16,
        "6to4 (2002::/16)",
    ),
    (
        Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        "documentation (3fff::/20)",
    ),
];

fn v4_ranges() -> impl Iterator<Item = Range> {
    V4_DENIED.iter().filter_map(|(address, prefix, why)| {
        Some(Range {
            net: IpNet::V4(Ipv4Net::new(*address, *prefix).ok()?),
            why,
        })
    })
}

fn v6_ranges() -> impl Iterator<Item = Range> {
    V6_DENIED_IN_GLOBAL
        .iter()
        .filter_map(|(address, prefix, why)| {
            Some(Range {
                net: IpNet::V6(Ipv6Net::new(*address, *prefix).ok()?),
                why,
            })
        })
}

/// The address as the operating system will dial it: an IPv4-mapped IPv6 address is its IPv4.
pub fn canonical(address: IpAddr) -> IpAddr {
    address.to_canonical()
}

/// Why `address` is not on the public internet (and so refused by default); `None` when it is.
pub fn special_purpose(address: IpAddr) -> Option<&'static str> {
    match canonical(address) {
        IpAddr::V4(v4) => v4_ranges()
            .find(|range| range.net.contains(&IpAddr::V4(v4)))
            .map(|range| range.why),
        IpAddr::V6(v6) => {
            let global_unicast = (v6.segments()[0] & 0xe000) == 0x2000;
            if !global_unicast {
                return Some(v6_outside_global_reason(v6));
            }
            v6_ranges()
                .find(|range| range.net.contains(&IpAddr::V6(v6)))
                .map(|range| range.why)
        }
    }
}

fn v6_outside_global_reason(v6: Ipv6Addr) -> &'static str {
    let first = v6.segments()[0];
    if v6 == Ipv6Addr::LOCALHOST {
        "loopback (::1)"
    } else if v6 == Ipv6Addr::UNSPECIFIED {
        "unspecified (::)"
    } else if (first & 0xfe00) == 0xfc00 {
        "unique local, private (fc00::/7)"
    } else if (first & 0xffc0) == 0xfe80 {
        "link-local (fe80::/10)"
    } else if (first & 0xff00) == 0xff00 {
        "multicast (ff00::/8)"
    } else if first == 0x64 && v6.segments()[1] == 0xff9b {
        "NAT64, embeds an IPv4 address (64:ff9b::/96)"
    } else {
        "not global unicast (outside 2000::/3)"
    }
}

/// Whether `address` is a loopback or unspecified address (how a local port is reached).
pub fn is_local(address: IpAddr) -> bool {
    let address = canonical(address);
    address.is_loopback() || address.is_unspecified()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denied(text: &str) -> bool {
        let address: IpAddr = text.parse().expect("an address");
        special_purpose(address).is_some()
    }

    #[test]
    fn loopback_private_link_local_and_reserved_addresses_are_denied() {
        for address in [
            "127.0.0.1",
            "127.255.255.254",
            "0.0.0.0",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "198.18.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "fd00::1",
            "fe80::1",
            "ff02::1",
            "64:ff9b::7f00:1",
            "2001:db8::1",
            "2002:7f00:1::",
            "2001::1",
        ] {
            assert!(denied(address), "{address} must be denied");
        }
    }

    #[test]
    fn public_addresses_are_not() {
        for address in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "192.169.0.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(!denied(address), "{address} is public");
        }
    }

    #[test]
    fn the_reason_names_the_range() {
        let reason = special_purpose("::ffff:127.0.0.1".parse().expect("an address"));
        assert_eq!(reason, Some("loopback (127.0.0.0/8)"));
    }

    #[test]
    fn loopback_hosts_are_localhost_and_loopback_addresses_however_written() {
        let host = |url: &str| url::Url::parse(url).map(|url| is_loopback_host(url.host()));
        for url in [
            "http://localhost/",
            "http://127.0.0.2:8/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://0x7f.1/",
        ] {
            assert_eq!(host(url), Ok(true), "{url}");
        }
        for url in [
            "http://example.com/",
            "http://10.0.0.1/",
            "http://localhost.example/",
            "http://[::ffff:10.0.0.1]/",
        ] {
            assert_eq!(host(url), Ok(false), "{url}");
        }
    }
}
