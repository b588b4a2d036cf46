//! Board domains: which host names an organization may hold, and the claims staff make
//! from the dashboard, which route nothing until proven.
//!
//! A claim stores the domain with a random token. The board serves the token at
//! `/.well-known/jobboard-domain/<token>` on any host; once a request to the claimed
//! host returns it (the host reaches this installation), [`activate`] makes the domain
//! the organization's. Several organizations may claim one domain: the first to prove it
//! wins, and the others' claims of it are withdrawn then. An operator sets a domain
//! directly (`jobboard orgs update ID --domain D`, [`super::update_reserving`]).

use base64::Engine as _;
use rand::RngCore;

use super::{Claim, Org, store};
use crate::{Error, OrgId, Result};

/// The path under which the board serves a claim's token.
pub const WELL_KNOWN: &str = "/.well-known/jobboard-domain/";

/// Host names no organization but 1 (the default board) may hold: the service's own
/// (the host of `public_url`, the listen address), loopback names, and addresses.
#[derive(Debug, Clone, Default)]
pub struct Reserved {
    hosts: Vec<String>,
}

impl Reserved {
    /// The rules that need no settings: loopback names and addresses.
    pub fn builtin() -> Reserved {
        Reserved::default()
    }

    /// Every rule, with the service's own host names: the address it listens on and the
    /// host of its public URL.
    pub fn of(listen: std::net::IpAddr, public_url: &str) -> Reserved {
        let mut hosts = vec![listen.to_string()];
        if let Some(host) = public_url
            .split_once("://")
            .map(|(_, rest)| rest.split(['/', '?', '#']).next().unwrap_or(""))
            .and_then(|authority| authority.rsplit('@').next())
        {
            let host = match host.strip_prefix('[') {
                Some(v6) => v6.split(']').next().unwrap_or(""),
                None => host.split(':').next().unwrap_or(""),
            };
            hosts.push(host.trim_end_matches('.').to_ascii_lowercase());
        }
        Reserved { hosts }
    }

    /// Why organization `org_id` may not hold `host` (lower-case), when it may not.
    pub fn refusal(&self, org_id: OrgId, host: &str) -> Option<&'static str> {
        if org_id == OrgId(1) {
            return None;
        }
        if is_address(host) {
            Some("Must be a host name such as jobs.example.com, not an address.")
        } else if is_loopback_name(host) {
            Some(
                "This name is this machine's own (loopback); use a public host name such as jobs.example.com.",
            )
        } else if self.hosts.iter().any(|h| h == host) {
            Some(
                "This is the service's own address, where the default board answers; use a host name of your own.",
            )
        } else {
            None
        }
    }

    /// `Err` (a field error on `domain`) when organization `org_id` may not hold `host`.
    pub fn check(&self, org_id: OrgId, host: &str) -> Result<()> {
        match self.refusal(org_id, host) {
            Some(why) => Err(Error::field("domain", "reserved", why)),
            None => Ok(()),
        }
    }
}

/// True for a host that browsers and resolvers read as an IP address: an IPv6 literal,
/// or a name whose last label is a number (`127.0.0.1`, `127.1`, `2130706433`,
/// `0x7f.1`), as the URL standard parses hosts.
pub fn is_address(host: &str) -> bool {
    if host.contains(':') || host.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    let last = host.trim_end_matches('.').rsplit('.').next().unwrap_or("");
    let hex = last
        .strip_prefix("0x")
        .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
    !last.is_empty() && (last.bytes().all(|b| b.is_ascii_digit()) || hex)
}

/// True for names that resolve to this machine: `localhost` and its subdomains (RFC
/// 6761) and the usual aliases of loopback.
pub fn is_loopback_name(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || matches!(
            host,
            "localhost.localdomain" | "ip6-localhost" | "ip6-loopback" | "loopback"
        )
}

/// What saving the domain field of the dashboard does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainChange {
    /// The organization keeps its domain (a pending claim of another is withdrawn).
    Keep,
    /// The domain and any pending claim are removed.
    Remove,
    /// `host` is claimed (pending until proven); the domain in use stays meanwhile.
    Claim(String),
}

/// What the dashboard's domain field `raw` asks of organization `org`, checked: a host
/// name, not reserved, not another organization's domain. Stores nothing.
pub async fn plan(
    db: &crate::db::Db,
    org: &Org,
    raw: Option<&str>,
    reserved: &Reserved,
) -> Result<DomainChange> {
    let raw = raw.map(str::trim).unwrap_or("");
    if raw.is_empty() {
        return Ok(DomainChange::Remove);
    }
    let host = raw.trim_end_matches('.').to_ascii_lowercase();
    if !super::is_host_name(&host) {
        return Err(Error::field(
            "domain",
            "invalid_format",
            "Must be a host name such as jobs.example.com (letters, digits, dots and dashes).",
        ));
    }
    reserved.check(org.id, &host)?;
    if org.domain.as_deref() == Some(host.as_str()) {
        return Ok(DomainChange::Keep);
    }
    if store::domain_holder(db, &host).await?.is_some() {
        return Err(super::domain_taken());
    }
    Ok(DomainChange::Claim(host))
}

/// Applies a checked [`DomainChange`] to organization `org_id`; the pending claim after it.
/// A claim of the domain already claimed keeps its token.
pub async fn apply(
    db: &crate::db::Db,
    org_id: OrgId,
    change: &DomainChange,
) -> Result<Option<Claim>> {
    match change {
        DomainChange::Keep => {
            store::withdraw_claim(db, org_id).await?;
            Ok(None)
        }
        DomainChange::Remove => {
            store::remove_domain(db, org_id).await?;
            Ok(None)
        }
        DomainChange::Claim(host) => {
            if let Some(c) = store::claim_of(db, org_id).await?
                && &c.domain == host
            {
                return Ok(Some(c));
            }
            let claim = Claim {
                org_id,
                domain: host.clone(),
                token: new_token(),
                created_at: db.now(),
            };
            store::put_claim(db, &claim).await?;
            Ok(Some(claim))
        }
    }
}

/// The pending claim of organization `org_id`, if any.
pub async fn pending(db: &crate::db::Db, org_id: OrgId) -> Result<Option<Claim>> {
    Ok(store::claim_of(db, org_id).await?)
}

/// The pending claim whose token is `token`, if any (what the well-known path serves).
pub async fn claim_with_token(db: &crate::db::Db, token: &str) -> Result<Option<Claim>> {
    if token.is_empty() || token.len() > 64 {
        return Ok(None);
    }
    Ok(store::claim_with_token(db, token).await?)
}

/// Makes the proven `claim` the organization's domain, in one transaction: the claim
/// must still be pending, and no other organization may hold the domain (else
/// `409 conflict` on `domain`); every claim of the domain is withdrawn.
pub async fn activate(db: &crate::db::Db, claim: &Claim, reserved: &Reserved) -> Result<Org> {
    reserved.check(claim.org_id, &claim.domain)?;
    match store::activate(db, claim).await {
        Ok(Some(org)) => Ok(org),
        Ok(None) => Err(Error::conflict(
            "This claim was replaced or withdrawn; verify the domain shown now.",
            serde_json::json!({ "field": "domain" }),
        )),
        Err(e) if e.is_unique() => Err(super::domain_taken()),
        Err(e) => Err(e.into()),
    }
}

/// 32 random bytes, URL-safe.
fn new_token() -> String {
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_loopback_names_are_reserved() {
        for a in [
            "127.0.0.1",
            "127.1",
            "2130706433",
            "0x7f.1",
            "10.0.0.5",
            "::1",
        ] {
            assert!(is_address(a), "{a}");
        }
        for n in ["jobs.example.com", "1password.com", "x.0xzz"] {
            assert!(!is_address(n), "{n}");
        }
        let r = Reserved::builtin();
        for h in ["localhost", "app.localhost", "127.0.0.1", "ip6-localhost"] {
            assert!(r.refusal(OrgId(2), h).is_some(), "{h}");
            assert!(r.refusal(OrgId(1), h).is_none(), "organization 1 may: {h}");
        }
        assert!(r.refusal(OrgId(2), "jobs.example.com").is_none());
    }

    #[test]
    fn the_service_s_own_hosts_are_reserved() {
        let r = Reserved::of(
            "192.0.2.7".parse().unwrap(),
            "https://Board.Example:8443/base",
        );
        assert!(r.refusal(OrgId(2), "board.example").is_some());
        assert!(r.refusal(OrgId(2), "192.0.2.7").is_some());
        assert!(r.refusal(OrgId(2), "jobs.example.com").is_none());
    }

    #[test]
    fn tokens_are_long_and_url_safe() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
    }
}
