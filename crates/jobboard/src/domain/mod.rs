//! The domain layer: one model per resource and the operations every front door calls.
//!
//! The JSON API (`crate::http`), the public board and the dashboard are front doors onto
//! the same operations: each extracts its input, calls an operation here, and renders
//! the typed result or [`Error`]. Operations validate (request types built with
//! [`crate::request!`]), apply the rules, and call their resource's storage code, which
//! writes the change and its events in one transaction. Nothing here knows HTTP.

pub mod alerts;
pub mod analytics;
pub mod applications;
pub mod audit;
pub mod categories;
pub mod cms;
pub mod error;
pub mod events;
pub mod html;
pub mod input;
pub mod integer;
pub mod jobs;
pub mod keys;
pub mod kind;
pub mod links;
pub mod members;
pub mod model;
pub mod orgs;
pub mod plans;
pub mod query;
pub mod request;
pub mod sessions;
pub mod two_factor;
pub mod users;
pub mod values;
pub mod webhooks;

pub use error::{Error, FieldError, Result};
pub use input::{Field, Input, Mode, QueryInput};
pub use values::{JsonDoc, Money, TextEnum, Ts};
