//! The proof of a claimed board domain: this installation asks
//! `http://<domain>/.well-known/jobboard-domain/<token>` (then `https://`) and the claim
//! is proven when the answer is `200` with the claim's token as its body, i.e. the name
//! reaches this installation, which serves the token of every pending claim.
//!
//! The request follows the webhook rules (`webhooks::ssrf`): loopback, private and other
//! special addresses are refused unless `allow_private_targets` (or the CIDR allow-list)
//! lets them, checked when the name is resolved; no redirect is followed; it takes at most
//! [`TIMEOUT`] and reads at most [`MAX_BODY`] bytes.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use jobboard_domain::orgs::{Claim, domains::WELL_KNOWN};

use jobboard_delivery::webhooks::ssrf::{Policy, Resolver};

use crate::config::Config;

/// Time one attempt (connection, request and answer) may take.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// Bytes of the answer read at most (a token is 43).
pub const MAX_BODY: usize = 1024;

/// Resolves the names of `overrides` to their addresses (checked by the policy too),
/// others through [`Resolver`].
struct Resolve {
    overrides: Vec<(String, SocketAddr)>,
    policy: Arc<Policy>,
}

impl reqwest::dns::Resolve for Resolve {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let fixed: Vec<SocketAddr> = self
            .overrides
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name.as_str()))
            .map(|(_, a)| *a)
            .collect();
        if fixed.is_empty() {
            return Resolver(self.policy.clone()).resolve(name);
        }
        let allowed: Vec<SocketAddr> = fixed
            .into_iter()
            .filter(|a| self.policy.allows(a.ip()))
            .collect();
        let host = name.as_str().to_string();
        Box::pin(async move {
            if allowed.is_empty() {
                return Err(format!("refused: {host} resolves to no public address").into());
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Asks the claimed domain for the claim's token. `Err` says, for staff, why the proof
/// failed.
pub async fn prove(config: &Config, claim: &Claim) -> Result<(), String> {
    jobboard_delivery::init_tls();
    let policy = Arc::new(Policy::new(&config.webhooks));
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .connect_timeout(TIMEOUT)
        .user_agent(concat!("jobboard-domain-check/", env!("CARGO_PKG_VERSION")))
        .dns_resolver(Arc::new(Resolve {
            overrides: config.domain_check_resolve.clone(),
            policy,
        }))
        .build()
        .map_err(|_| "The check could not be started; try again.".to_string())?;
    let mut failures = Vec::new();
    for scheme in ["http", "https"] {
        let url = format!("{scheme}://{}{WELL_KNOWN}{}", claim.domain, claim.token);
        match attempt(&client, &url, &claim.token).await {
            Ok(()) => return Ok(()),
            Err(why) => failures.push(format!("{scheme}: {why}")),
        }
    }
    Err(failures.join("; "))
}

/// True when the resolver refused every address of the name (see [`Resolve`]).
fn refused_address(e: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.to_string().starts_with("refused:") {
            return true;
        }
        source = s.source();
    }
    false
}

async fn attempt(client: &reqwest::Client, url: &str, token: &str) -> Result<(), String> {
    let mut res = client.get(url).send().await.map_err(|e| {
        if e.is_timeout() {
            "no answer in time".to_string()
        } else if refused_address(&e) {
            "the name resolves to a loopback, private or other non-public address".to_string()
        } else {
            "could not connect".to_string()
        }
    })?;
    if !res.status().is_success() {
        return Err(format!("answered {}", res.status().as_u16()));
    }
    let mut body = Vec::new();
    while body.len() <= MAX_BODY {
        match res.chunk().await {
            Ok(Some(c)) => body.extend_from_slice(&c),
            Ok(None) => break,
            Err(_) => return Err("the answer broke off".into()),
        }
    }
    if body.len() > MAX_BODY {
        return Err("the answer is not the token".into());
    }
    let text = String::from_utf8_lossy(&body);
    let given = text.trim().as_bytes();
    let ok: bool = subtle::ConstantTimeEq::ct_eq(given, token.as_bytes()).into();
    if ok {
        Ok(())
    } else {
        Err("the answer is not the token".into())
    }
}
