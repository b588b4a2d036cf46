//! jobboard: the Job Board Service API server.
//!
//! The server: the JSON API (`jobboard_api`) and the pages (`jobboard_pages`) mounted on
//! one router, the delivery of webhooks and mail (`jobboard_delivery`), the scheduler and
//! the command line, over the shared state of `jobboard_app` and the domain operations of
//! `jobboard_domain`. Each of those crates is re-exported under its old module name.
//! Data flows one way: HTTP → validated input → a domain operation (one transaction per
//! change, events and mail in their outboxes) → response.

#![forbid(unsafe_code)]

pub mod periodic;
pub mod scheduler;
pub mod server;

pub use jobboard_api as api;
pub use jobboard_app::{app, config, domain_check, error, init_tls, metrics, net};
pub use jobboard_delivery as delivery;
pub use jobboard_pages as pages;
