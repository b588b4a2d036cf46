//! Creating and editing a job: every field the API takes, derived from the job model
//! ([`model_form`]), sent as the same body (`POST /api/jobs`, `PATCH /api/jobs/{id}`) to
//! the same operations, so the same rules apply and the API's message for each refused
//! field is shown beside it.

use std::collections::HashMap;

use askama::Template;
use axum::{
    extract::{Path, State},
    http::StatusCode,
    response::Response,
};

use super::{
    Nav, Notice, Posted, Staff, chrome, path_id, render, render_status, session::see_other,
};
use crate::fields::{Problem, messages_of, values_of};
use crate::{
    error::PageError,
    forms::{FieldMessages, FormData},
    model_form::{self, Door, Fieldset},
    page::Chrome,
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    Ts, categories,
    jobs::{self, Job, JobStatus},
};

/// The form's values of a stored job.
fn values_of_job(j: &Job) -> HashMap<String, String> {
    j.form_values()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// The body of the operation: the form's fields as the API takes them.
fn body_of(form: &FormData) -> jobboard_domain::Input {
    model_form::body_of(&Job::form_fields(), Door::Staff, form)
}

/// What the job's page shows about it besides the form.
struct JobInfo {
    id: String,
    status: &'static str,
    /// The board's page of the job, when it is listed.
    public_path: Option<String>,
    created: String,
    updated: String,
    moves: Vec<(&'static str, &'static str)>,
}

#[derive(Template)]
#[template(path = "dashboard/job_form.html")]
struct FormPage {
    chrome: Chrome,
    nav: Nav,
    heading: String,
    action: String,
    submit: &'static str,
    fieldsets: Vec<Fieldset>,
    problems: Vec<Problem>,
    job: Option<JobInfo>,
}

fn info(j: &Job, now: Ts) -> JobInfo {
    let moves = [
        (JobStatus::Active, "Approve"),
        (JobStatus::Draft, "Return to draft"),
        (JobStatus::Expired, "Expire"),
    ]
    .into_iter()
    .filter(|(s, _)| *s != j.status)
    .map(|(s, l)| (s.as_str(), l))
    .collect();
    JobInfo {
        id: j.id.to_string(),
        status: j.status.as_str(),
        public_path: j.is_live(now).then(|| jobs::url_of(&j.slug)),
        created: super::when(&j.created_at),
        updated: super::when(&j.updated_at),
        moves,
    }
}

async fn page(
    app: &AppState,
    staff: &Staff,
    job: Option<&Job>,
    values: &HashMap<String, String>,
    messages: &FieldMessages,
    notice: Option<&str>,
) -> Result<FormPage, PageError> {
    let cats = categories::list(&app.db, staff.org_id()).await?;
    let (fieldsets, problems) =
        model_form::fieldsets(&Job::form_fields(), Door::Staff, &cats, values, messages);
    let (heading, action, submit) = match job {
        Some(j) => (
            format!("Edit: {}", j.title),
            format!("/dashboard/jobs/{}", j.id),
            "Save changes",
        ),
        None => (
            "New job".to_string(),
            "/dashboard/jobs/new".to_string(),
            "Create the job",
        ),
    };
    Ok(FormPage {
        chrome: chrome(&heading),
        nav: Nav::new(staff, "jobs").notice(notice),
        heading,
        action,
        submit,
        fieldsets,
        problems,
        job: job.map(|j| info(j, app.clock.now())),
    })
}

/// `GET /dashboard/jobs/new`
pub async fn new_form(staff: Staff, State(app): State<AppState>) -> Result<Response, PageError> {
    let values = HashMap::from([("status".to_string(), "pending".to_string())]);
    render(&page(&app, &staff, None, &values, &FieldMessages::default(), None).await?)
}

/// `POST /dashboard/jobs/new`: creates the job as `POST /api/jobs` does.
pub async fn create(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let staff = &posted.staff;
    match jobs::create(&app.db, staff.org_id(), body_of(&posted.form)).await {
        Ok(job) => {
            tracing::info!(job_id = %job.id, user_id = %staff.session.user_id, "job created in the dashboard");
            Ok(see_other(&format!(
                "/dashboard/jobs/{}?notice=created",
                job.id
            )))
        }
        Err(e) => {
            let messages = messages_of(e)?;
            let values = values_of(&posted.form);
            let p = page(&app, staff, None, &values, &messages, None).await?;
            render_status(&p, StatusCode::UNPROCESSABLE_ENTITY)
        }
    }
}

/// `GET /dashboard/jobs/{id}`
pub async fn edit_form(
    staff: Staff,
    State(app): State<AppState>,
    Path(raw): Path<String>,
    Notice(notice): Notice,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let job = jobs::get(&app.db, staff.org_id(), id).await?;
    let p = page(
        &app,
        &staff,
        Some(&job),
        &values_of_job(&job),
        &FieldMessages::default(),
        notice.as_deref(),
    )
    .await?;
    render(&p)
}

/// `POST /dashboard/jobs/{id}`: changes the job as `PATCH /api/jobs/{id}` does (a form
/// that changes nothing emits nothing).
pub async fn update(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let staff = &posted.staff;
    let job = jobs::get(&app.db, staff.org_id(), id).await?;
    match jobs::update(&app.db, staff.org_id(), id, body_of(&posted.form)).await {
        Ok(_) => {
            tracing::info!(job_id = %id, user_id = %staff.session.user_id, "job changed in the dashboard");
            Ok(see_other(&format!("/dashboard/jobs/{id}?notice=saved")))
        }
        Err(e) => {
            let messages = messages_of(e)?;
            let values = values_of(&posted.form);
            let p = page(&app, staff, Some(&job), &values, &messages, None).await?;
            render_status(&p, StatusCode::UNPROCESSABLE_ENTITY)
        }
    }
}
