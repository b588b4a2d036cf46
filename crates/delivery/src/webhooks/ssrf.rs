//! SSRF protection: which addresses a webhook may reach.
//!
//! Loopback, private, link-local, multicast, unspecified and the other special-purpose
//! ranges (IPv4 and IPv6, IPv4-mapped and -embedded forms included) are refused unless
//! `allow_private_targets` is set or the address is inside a CIDR of the allow-list. The
//! check runs at registration (after resolving the host) and again at connect time, in
//! the HTTP client's resolver, so a name that resolves differently later (DNS rebinding)
//! still cannot reach a refused address.

use std::{
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    sync::Arc,
    time::Duration,
};

use jobboard_domain::webhooks::TargetPolicy;

use jobboard_core::net::{Cidr, canonical};

use super::WebhookConfig;

/// True for addresses on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    const SPECIAL: &[(u32, u8)] = &[
        (0x0000_0000, 8),  // 0.0.0.0/8 "this network", unspecified
        (0x0a00_0000, 8),  // 10.0.0.0/8 private
        (0x6440_0000, 10), // 100.64.0.0/10 shared address space (CGNAT)
        (0x7f00_0000, 8),  // 127.0.0.0/8 loopback
        (0xa9fe_0000, 16), // 169.254.0.0/16 link-local (cloud metadata)
        (0xac10_0000, 12), // 172.16.0.0/12 private
        (0xc000_0000, 24), // 192.0.0.0/24 IETF protocol assignments
        (0xc000_0200, 24), // 192.0.2.0/24 documentation
        (0xc058_6300, 24), // 192.88.99.0/24 6to4 relay anycast
        (0xc0a8_0000, 16), // 192.168.0.0/16 private
        (0xc612_0000, 15), // 198.18.0.0/15 benchmarking
        (0xc633_6400, 24), // 198.51.100.0/24 documentation
        (0xcb00_7100, 24), // 203.0.113.0/24 documentation
        (0xe000_0000, 4),  // 224.0.0.0/4 multicast
        (0xf000_0000, 4),  // 240.0.0.0/4 reserved, broadcast
    ];
    let n = u32::from(ip);
    !SPECIAL
        .iter()
        .any(|&(net, len)| (n ^ net) >> (32 - u32::from(len)) == 0)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let embedded_v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if ip.is_unspecified() || ip.is_loopback() {
        return false;
    }
    match s[0] {
        // ::/96 IPv4-compatible (deprecated) and the rest of ::/8 reserved
        0x0000 => false,
        // 64:ff9b::/96 NAT64: public only when the embedded IPv4 address is
        0x0064 if s[1] == 0xff9b => s[2..6] == [0; 4] && is_public_v4(embedded_v4(s[6], s[7])),
        // 64:ff9b:1::/48 local-use NAT64
        0x0064 => false,
        // 100::/64 discard
        0x0100 if s[1..4] == [0; 3] => false,
        // 2001::/23 IETF special purpose (Teredo, ORCHID, benchmarking...), 2001:db8::/32 documentation
        0x2001 if s[1] < 0x0200 || s[1] == 0x0db8 => false,
        // 2002::/16 6to4: public only when the embedded IPv4 address is
        0x2002 => is_public_v4(embedded_v4(s[1], s[2])),
        // 3fff::/20 documentation
        0x3fff if s[1] < 0x1000 => false,
        // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local, ff00::/8 multicast
        x if x & 0xfe00 == 0xfc00 || x & 0xffc0 == 0xfe80 || x & 0xffc0 == 0xfec0 => false,
        x if x & 0xff00 == 0xff00 => false,
        _ => true,
    }
}

/// Which target addresses deliveries may reach.
#[derive(Debug, Clone)]
pub struct Policy {
    allow_private: bool,
    allowed: Vec<Cidr>,
}

impl Policy {
    pub fn new(config: &WebhookConfig) -> Policy {
        let mut allowed = Vec::new();
        for c in &config.allowed_cidrs {
            match Cidr::parse(c) {
                Some(cidr) => allowed.push(cidr),
                None => {
                    tracing::warn!(cidr = %c, "ignoring an invalid entry of the webhook CIDR allow-list")
                }
            }
        }
        Policy {
            allow_private: config.allow_private_targets,
            allowed,
        }
    }

    pub fn allows(&self, ip: IpAddr) -> bool {
        self.allow_private || is_public(ip) || self.allowed.iter().any(|c| c.contains(ip))
    }

    /// Checks the host of a URL about to be requested when it is an IP literal (names are
    /// checked by [`Resolver`]).
    pub fn check_literal(&self, url: &reqwest::Url) -> Result<(), String> {
        let Some(ip) = literal_ip(url) else {
            return Ok(());
        };
        if self.allows(ip) {
            Ok(())
        } else {
            Err(format!("refused: {ip} is not a public address"))
        }
    }
}

impl TargetPolicy for Policy {
    /// A target URL at registration: the host must resolve, and only to allowed
    /// addresses. The error is a message for the API user.
    async fn check_url(&self, url: &str) -> Result<(), String> {
        if self.allow_private {
            return Ok(());
        }
        let parsed = reqwest::Url::parse(url).map_err(|_| "Must be an absolute http(s) URL.")?;
        let port = parsed.port_or_known_default().unwrap_or(443);
        let addrs: Vec<IpAddr> = match (literal_ip(&parsed), parsed.host_str()) {
            (Some(ip), _) => vec![ip],
            (None, Some(name)) => {
                let lookup = tokio::net::lookup_host((name, port));
                match tokio::time::timeout(Duration::from_secs(5), lookup).await {
                    Ok(Ok(found)) => found.map(|a| a.ip()).collect(),
                    _ => return Err(format!("The host {name:?} could not be resolved.")),
                }
            }
            (None, None) => return Err("Must be an absolute http(s) URL.".into()),
        };
        if addrs.is_empty() {
            return Err("The host has no address.".into());
        }
        if addrs.iter().all(|ip| self.allows(*ip)) {
            Ok(())
        } else {
            Err("The target resolves to a loopback, private, link-local, multicast or other non-public address, which is not allowed.".into())
        }
    }
}

/// The host of `url` when it is an IP address.
fn literal_ip(url: &reqwest::Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// The HTTP client's resolver: resolves names and drops every address the policy refuses,
/// at connect time.
pub struct Resolver(pub Arc<Policy>);

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.0.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| policy.allows(a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(format!("refused: {host} resolves to no public address").into());
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn special_ranges_are_not_public() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "198.18.0.1",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "fe80::1",
            "fc00::1",
            "fd12:3456::1",
            "ff02::1",
            "2001:db8::1",
            "64:ff9b::a00:1",
            "2002:7f00:1::",
        ] {
            assert!(!is_public(ip(a)), "{a} must not be public");
        }
        for a in [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert!(is_public(ip(a)), "{a} must be public");
        }
    }
}
