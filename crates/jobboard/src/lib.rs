//! jobboard: the Job Board Service API server.
//!
//! Data flows one way: HTTP (`http`) → validated input → storage (`db`, one transaction
//! per change, events in the outbox) → response. Background roles (webhook worker,
//! scheduler) use the same storage functions.

#![forbid(unsafe_code)]

pub mod auth;
pub mod cache;
pub mod cms;
pub mod coalesce;
pub mod config;
pub mod db;
pub mod domain;
pub mod error;
pub mod hll;
pub mod http;
pub mod metrics;
pub mod net;
pub mod ratelimit;
pub mod scheduler;
pub mod server;
pub mod text;
pub mod webhooks;

/// Installs the TLS crypto provider (ring) used by outgoing HTTPS; safe to call repeatedly.
pub fn init_tls() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
