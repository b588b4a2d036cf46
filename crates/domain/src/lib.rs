//! The domain layer: one model per resource and the operations every front door calls.
//!
//! The JSON API, the public board and the dashboard are front doors onto
//! the same operations: each extracts its input, calls an operation here, and renders
//! the typed result or [`Error`]. Operations validate (request types built with
//! [`crate::request!`]), apply the rules, and call their resource's storage code, which
//! writes the change and its events in one transaction. Nothing here knows HTTP.

pub mod accounts;
pub mod alerts;
pub mod analytics;
pub mod applications;
pub mod audit;
pub mod categories;
pub mod cms;
pub mod error;
pub mod events;
pub mod form;
pub mod html;
pub mod ids;
pub mod imports;
pub mod indexing;
pub mod input;
pub mod integer;
pub mod jobs;
pub mod keys;
pub mod kind;
pub mod links;
pub mod mail;
pub mod members;
pub mod model;
pub mod orgs;
pub mod payments;
pub mod plans;
pub mod query;
pub mod request;
pub mod retention;
pub mod sessions;
pub mod two_factor;
pub mod users;
pub mod webhooks;

pub use error::{Error, FieldError, Result};
pub use ids::{ApplicationId, CategoryId, JobId, MemberId, OrgId, UserId, WebhookId};
pub use input::{Field, Input, Mode, QueryInput};
pub use jobboard_core::{Countries, JsonDoc, Money, TextEnum, Ts, countries, values};

// The layers below, under the names the operations use for them.
use jobboard_core::{cache, text, text_enum};
use jobboard_store as db;
use jobboard_store::{dispatch, dispatch_tx, ratelimit, save_row};

/// The SQL of an organization's job list version, for the organization id in column
/// `$org` of the statement: the sum of its shards (kept by triggers; on PostgreSQL one
/// shard per server process, migration 0027), 0 before its first change. A string
/// literal, so statements that read it stay literals.
macro_rules! job_list_version {
    ($org:literal) => {
        concat!(
            "CAST(COALESCE((SELECT SUM(v.version) FROM job_list_versions v WHERE v.org_id = ",
            $org,
            "), 0) AS BIGINT)"
        )
    };
}
pub(crate) use job_list_version;
