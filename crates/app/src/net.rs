//! The request's client address behind trusted proxies (the address ranges are
//! [`jobboard_core::net`]) and its host name.

use jobboard_core::net::Cidr;

/// The client's address: the TCP peer; or, when the peer is a trusted proxy, the
/// right-most address of `X-Forwarded-For` that is not itself a trusted proxy (the
/// addresses left of it could be written by anyone). An entry that is not an address
/// stops the walk at the last trusted hop.
pub fn client_ip(
    extensions: &axum::http::Extensions,
    headers: &axum::http::HeaderMap,
    trusted: &[Cidr],
) -> Option<std::net::IpAddr> {
    let peer = extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip())?;
    let is_trusted = |ip: std::net::IpAddr| trusted.iter().any(|c| c.contains(ip));
    if !is_trusted(peer) {
        return Some(peer);
    }
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    let mut client = peer;
    for hop in hops.into_iter().rev() {
        let Some(ip) = parse_hop(hop) else { break };
        client = ip;
        if !is_trusted(ip) {
            break;
        }
    }
    Some(client)
}

/// `1.2.3.4`, `1.2.3.4:80`, `::1` or `[::1]:80`.
fn parse_hop(s: &str) -> Option<std::net::IpAddr> {
    if let Ok(ip) = s.parse() {
        return Some(ip);
    }
    s.parse::<std::net::SocketAddr>().ok().map(|a| a.ip())
}

/// The host name of a request: `Host` without its port, lower-case.
pub fn host_of(headers: &axum::http::HeaderMap) -> String {
    let raw = headers
        .get(axum::http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let host = if let Some(rest) = raw.strip_prefix('[') {
        // [::1]:8080
        rest.split(']').next().unwrap_or("")
    } else {
        raw.rsplit_once(':')
            .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
            .map_or(raw, |(h, _)| h)
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, header};

    #[test]
    fn hosts_lose_their_port_and_case() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::HOST, v.parse().unwrap());
            host_of(&m)
        };
        assert_eq!(h("Jobs.Example.com:8080"), "jobs.example.com");
        assert_eq!(h("jobs.example.com."), "jobs.example.com");
        assert_eq!(h("[::1]:8080"), "::1");
        assert_eq!(h("127.0.0.1"), "127.0.0.1");
    }
}
