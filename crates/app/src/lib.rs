//! jobboard's application layer: what every door of the server shares. The state of a
//! running service (`app`: the database, the settings, the limiters, the caches), its
//! settings (`config`), the error envelope of the API (`error`), the metrics, the
//! request's client and host (`net`) and the check of a claimed board domain.
//! The API (`jobboard_api`) and the pages (`jobboard_pages`) are built on it, side by side.

#![forbid(unsafe_code)]

pub mod app;
pub mod config;
pub mod domain_check;
pub mod error;
pub mod metrics;
pub mod net;

pub use app::{App, AppState};
pub use jobboard_delivery::init_tls;

/// The largest form body accepted: the board's and the dashboard's forms, and the API's
/// keyless submissions (the same forms sent as JSON).
pub const MAX_FORM_BYTES: usize = 256 * 1024;
