//! The events of applications and their payloads (field order is the delivered JSON's
//! order).

use serde::Serialize;

use super::model::{Application, ApplicationStatus};
use crate::{ApplicationId, JobId, events::Event};

/// `application.received`: who applied to which job.
#[derive(Debug, Serialize)]
pub struct Received {
    pub application_id: ApplicationId,
    pub job_id: JobId,
    pub job_title: String,
    pub name: String,
    pub email: String,
}

impl Event for Received {
    fn event_type(&self) -> &'static str {
        "application.received"
    }
}

/// `application.status_changed`: the move.
#[derive(Debug, Serialize)]
pub struct StatusChanged {
    pub application_id: ApplicationId,
    pub job_id: JobId,
    pub previous_status: ApplicationStatus,
    pub status: ApplicationStatus,
}

impl Event for StatusChanged {
    fn event_type(&self) -> &'static str {
        "application.status_changed"
    }
}

/// `application.received`.
pub fn received(a: &Application) -> Received {
    Received {
        application_id: a.id,
        job_id: a.job_id,
        job_title: a.job_title.clone(),
        name: a.name.clone(),
        email: a.email.clone(),
    }
}

/// `application.status_changed`, when the status moved.
pub fn status_moved(previous: ApplicationStatus, a: &Application) -> Option<StatusChanged> {
    (previous != a.status).then_some(StatusChanged {
        application_id: a.id,
        job_id: a.job_id,
        previous_status: previous,
        status: a.status,
    })
}
