//! jobboard: the Job Board Service API server.
//!
//! The server: the JSON API (`api`), the pages (`pages`), the delivery of webhooks and
//! mail (`delivery`), the scheduler and the command line, over the domain operations of
//! `jobboard_domain`.
//! Data flows one way: HTTP → validated input → a domain operation (one transaction per
//! change, events and mail in their outboxes) → response.

#![forbid(unsafe_code)]

pub mod api;
pub mod app;
pub mod config;
pub mod delivery;
pub mod domain_check;
pub mod error;
pub mod metrics;
pub mod net;
pub mod pages;
pub mod periodic;
pub mod scheduler;
pub mod server;

/// Installs the TLS crypto provider (ring) used by outgoing HTTPS; safe to call repeatedly.
pub fn init_tls() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
