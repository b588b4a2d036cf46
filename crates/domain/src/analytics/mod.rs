//! Analytics: the operations the API, the board and the dashboard call to record events
//! (job views, apply clicks, page views) and to read the figures of the site and of jobs
//! over a period, and the upgrade that builds the visitor sketches of earlier days.
//!
//! Events are rolled up per day as they arrive ([`store`]): a report reads one row per
//! day. Distinct visitors over a window are counted exactly up to a bound and estimated
//! from daily HyperLogLog sketches ([`hll`]) beyond it ([`visitors`]).

pub mod hll;
mod ingest;
mod jobs;
pub mod model;
mod site;
mod store;
mod upgrade;
pub mod visitors;

pub use ingest::{View, ingest, record_views};
pub use jobs::jobs;
pub use model::*;
pub use site::{TopJob, site, site_window, top_jobs};
pub use upgrade::{finish_upgrade, rebuild_sketches};
pub use visitors::{EXACT_VISITOR_ROWS, SKETCH_WORTHWHILE};
