//! The application: its status (a closed set), its stored row, the bodies that create it
//! and move it, and the query of a list.

use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::{
    ApplicationId, JobId, Ts,
    kind::{Email, Enum, Link, Object, Text, Trimmed},
    query,
    query::{QEnum, QId, QInt},
    request, text_enum,
};

text_enum!(
    /// Where an application is in the hiring process, from `new` (on receipt) to `hired`
    /// or `rejected`.
    ApplicationStatus {
        New = "new",
        Reviewing = "reviewing",
        Interviewing = "interviewing",
        Offered = "offered",
        Hired = "hired",
        Rejected = "rejected",
    }
);

/// An application with every stored field.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Application {
    #[schema(value_type = Uuid)]
    pub id: ApplicationId,
    #[schema(value_type = Uuid)]
    pub job_id: JobId,
    /// The job's title when the application was received.
    pub job_title: String,
    pub name: String,
    pub email: String,
    pub resume_url: Option<String>,
    pub cover_letter: Option<String>,
    /// Free-form answers to the job's questions.
    #[schema(value_type = Option<Object>)]
    #[sqlx(json(nullable))]
    pub answers: Option<Map<String, Value>>,
    pub status: ApplicationStatus,
    pub created_at: Ts,
    pub updated_at: Ts,
}

impl Application {
    /// The columns of the row, in field order.
    pub const COLUMNS: &'static str = "id, job_id, job_title, name, email, resume_url, cover_letter, answers, status, created_at, updated_at";
}

request! {
    /// Body of `POST /jobs/{id}/applications`.
    pub struct ApplicationIn {
        /// 1 to 200 characters, stored without surrounding white space.
        pub name: required Trimmed<1, 200>,
        pub email: required Email,
        /// Absolute http(s) URL of the résumé.
        pub resume_url: optional Link,
        /// At most 20,000 characters.
        pub cover_letter: optional Text<0, 20000>,
        /// Answers to the job's questions, free-form.
        pub answers: optional Object,
    }
}

request! {
    /// Body of `PATCH /applications/{id}`.
    pub struct ApplicationPatch {
        pub status: required Enum<ApplicationStatus>,
    }
}

query! {
    /// Query of `GET /applications`.
    pub struct ApplicationListQuery {
        /// Only applications to this job.
        pub job_id: QId<JobId> = optional,
        /// Statuses (any of).
        pub status: QEnum<ApplicationStatus> = list(6),
        /// Page number, from 1.
        pub page: QInt<1, 1_000_000> = default(1),
        /// Applications per page, 1 to 100.
        pub per_page: QInt<1, 100> = default(20),
    }
}

/// A page of applications, newest first, and how many the list matches.
#[derive(Debug, Clone)]
pub struct ApplicationPage {
    pub rows: Vec<Application>,
    pub total: i64,
}
