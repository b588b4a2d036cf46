//! Delivering what the outboxes hold: one worker loop ([`outbox`]) and its uses,
//! signed webhook deliveries ([`webhooks`]) and mail handed to an SMTP server ([`mail`]).
//! What is delivered is written by the domain, in the transaction of the change that
//! caused it (`jobboard_domain::webhooks`, `jobboard_domain::mail`).

#![forbid(unsafe_code)]

pub mod imports;
pub mod indexing;
pub mod mail;
pub mod outbox;
pub mod processor;
pub mod webhooks;

/// Installs the TLS crypto provider (ring) used by outgoing HTTPS; safe to call repeatedly.
pub fn init_tls() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A client of an outside service's documented API (the card processor, the search
/// engines): no proxy, no redirect followed, `timeout` per request, our user agent.
pub(crate) fn api_client(timeout: std::time::Duration) -> reqwest::Result<reqwest::Client> {
    init_tls();
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .user_agent(concat!("jobboard/", env!("CARGO_PKG_VERSION")))
        .build()
}
