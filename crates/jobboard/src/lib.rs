//! jobboard: the Job Board Service API server.
//!
//! Data flows one way: HTTP (`http`) → validated input → storage (`db`, one transaction
//! per change, events and mail in their outboxes) → response. Background roles (webhook
//! and mail workers, scheduler) use the same storage functions.

#![forbid(unsafe_code)]

pub mod app;
pub mod auth;
pub mod cache;
pub mod clock;
pub mod coalesce;
pub mod config;
pub mod db;
pub mod domain;
pub mod domain_check;
pub mod error;
pub mod http;
pub mod mail;
pub mod metrics;
pub mod net;
pub mod periodic;
pub mod ratelimit;
pub mod scheduler;
pub mod server;
pub mod text;
pub mod web;
pub mod webhooks;

/// Installs the TLS crypto provider (ring) used by outgoing HTTPS; safe to call repeatedly.
pub fn init_tls() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
