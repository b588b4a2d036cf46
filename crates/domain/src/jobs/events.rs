//! The events of jobs and their payloads (field order is the delivered JSON's order).

use serde::Serialize;

use super::model::{Job, JobStatus, url_of};
use crate::{JobId, events::Event};

/// `job.approved`, `job.expired`, `job.deleted`: the job and its status.
#[derive(Debug, Serialize)]
pub struct JobBrief {
    #[serde(skip)]
    event: &'static str,
    pub job_id: JobId,
    pub title: String,
    pub company_name: String,
    pub status: JobStatus,
}

/// `job.created` (and, with `changed`, `job.updated`): the job, where it is and its URL.
#[derive(Debug, Serialize)]
pub struct JobDetail {
    /// The fields of [`JobBrief`], first.
    #[serde(flatten)]
    pub brief: JobBrief,
    pub location: Option<String>,
    pub slug: String,
    pub url: String,
    /// The names of the fields an update changed (`job.updated` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed: Option<Vec<&'static str>>,
}

/// `job.status_changed`: the move.
#[derive(Debug, Serialize)]
pub struct StatusChanged {
    pub job_id: JobId,
    pub title: String,
    pub company_name: String,
    pub previous_status: JobStatus,
    pub status: JobStatus,
}

impl Event for JobBrief {
    fn event_type(&self) -> &'static str {
        self.event
    }
}

impl Event for JobDetail {
    fn event_type(&self) -> &'static str {
        self.brief.event
    }
}

impl Event for StatusChanged {
    fn event_type(&self) -> &'static str {
        "job.status_changed"
    }
}

fn brief(event: &'static str, job: &Job) -> JobBrief {
    JobBrief {
        event,
        job_id: job.id,
        title: job.title.clone(),
        company_name: job.company_name.clone(),
        status: job.status,
    }
}

fn detail(event: &'static str, job: &Job, changed: Option<Vec<&'static str>>) -> JobDetail {
    JobDetail {
        brief: brief(event, job),
        location: job.location.clone(),
        slug: job.slug.clone(),
        url: url_of(&job.slug),
        changed,
    }
}

/// The events of a job's lifetime, as one list to write in the change's transaction.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum JobEvent {
    Brief(JobBrief),
    Detail(JobDetail),
    StatusChanged(StatusChanged),
}

impl Event for JobEvent {
    fn event_type(&self) -> &'static str {
        match self {
            JobEvent::Brief(e) => e.event_type(),
            JobEvent::Detail(e) => e.event_type(),
            JobEvent::StatusChanged(e) => e.event_type(),
        }
    }
}

/// `job.created`.
pub fn created(job: &Job) -> Vec<JobEvent> {
    vec![created_one(job)]
}

/// `job.created`, the one event of a creation.
pub fn created_one(job: &Job) -> JobEvent {
    JobEvent::Detail(detail("job.created", job, None))
}

/// `job.deleted`.
pub fn deleted(job: &Job) -> Vec<JobEvent> {
    vec![JobEvent::Brief(brief("job.deleted", job))]
}

/// `job.updated` with the changed fields, then the events of a status move.
pub fn updated(before: &Job, after: &Job, changed: Vec<&'static str>) -> Vec<JobEvent> {
    let mut out = vec![JobEvent::Detail(detail(
        "job.updated",
        after,
        Some(changed),
    ))];
    out.extend(status_moved(before.status, after));
    out
}

/// On a status move: `job.status_changed`, and `job.approved` or `job.expired` when the
/// job became active or expired.
pub fn status_moved(previous: JobStatus, job: &Job) -> Vec<JobEvent> {
    if previous == job.status {
        return Vec::new();
    }
    let mut out = vec![JobEvent::StatusChanged(StatusChanged {
        job_id: job.id,
        title: job.title.clone(),
        company_name: job.company_name.clone(),
        previous_status: previous,
        status: job.status,
    })];
    match job.status {
        JobStatus::Active => out.push(JobEvent::Brief(brief("job.approved", job))),
        JobStatus::Expired => out.push(JobEvent::Brief(brief("job.expired", job))),
        _ => {}
    }
    out
}
