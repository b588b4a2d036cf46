//! The typed ids of the records operations take (defined in `jobboard-core`, so that the
//! storage layer names them too): an organization's id is an [`OrgId`], a job's a
//! [`JobId`], and so on. One kind of id passed where another is expected does not
//! compile:
//!
//! ```
//! # async fn read(db: &jobboard_store::Db) -> jobboard_domain::Result<()> {
//! use jobboard_domain::{JobId, OrgId, jobs};
//! let (org, job) = (OrgId(1), JobId(uuid::Uuid::nil()));
//! let _ = jobs::get(db, org, job).await;
//! # Ok(()) }
//! ```
//!
//! ```compile_fail,E0308
//! # async fn read(db: &jobboard_store::Db) -> jobboard_domain::Result<()> {
//! use jobboard_domain::{JobId, OrgId, jobs};
//! let (org, job) = (OrgId(1), JobId(uuid::Uuid::nil()));
//! // The organization's id where the job's is expected.
//! let _ = jobs::get(db, org, org).await;
//! # Ok(()) }
//! ```

pub use jobboard_core::ids::{
    ApplicationId, CategoryId, JobId, MemberId, OrgId, UserId, WebhookId,
};
