//! Creating and editing a job: every field the API takes, sent as the same body
//! (`POST /api/jobs`, `PATCH /api/jobs/{id}`) to the same operations, so the same rules
//! apply and the API's message for each refused field is shown beside it.

use std::collections::HashMap;

use askama::Template;
use axum::{
    extract::{Path, State},
    http::StatusCode,
    response::Response,
};

use super::{
    Nav, Notice, Posted, Staff, chrome,
    fields::{Choice, FieldView, Problem, fill, messages_of, values_of},
    path_id, render, render_status,
    session::see_other,
};
use crate::{
    app::AppState,
    web::{
        error::PageError,
        forms::{FieldMessages, FormData, FormValue},
        page::Chrome,
    },
};
use jobboard_domain::{
    categories,
    jobs::{self, ApplyMethod, Job, JobStatus, JobType, SalaryPeriod},
};

/// How each field of the form becomes the body of the operation.
const SPEC: &[(&str, FormValue)] = &[
    ("title", FormValue::Required),
    ("company_name", FormValue::Required),
    ("description", FormValue::Required),
    ("status", FormValue::Text),
    ("job_type", FormValue::Clearable),
    ("category_id", FormValue::Clearable),
    ("location", FormValue::Clearable),
    ("location_restricted", FormValue::Checkbox),
    ("is_remote", FormValue::Checkbox),
    ("is_highlighted", FormValue::Checkbox),
    ("is_sticky", FormValue::Checkbox),
    ("how_to_apply_method", FormValue::Clearable),
    ("how_to_apply", FormValue::Clearable),
    ("contact_email", FormValue::Clearable),
    ("company_website", FormValue::Clearable),
    ("company_logo_url", FormValue::Clearable),
    ("salary_min", FormValue::ClearableNumber),
    ("salary_max", FormValue::ClearableNumber),
    ("salary_currency", FormValue::Clearable),
    ("salary_period", FormValue::Clearable),
    ("expires_at", FormValue::Clearable),
];

fn enum_choices(none: &str, all: &[&str]) -> Vec<Choice> {
    std::iter::once(Choice::new("", none))
        .chain(all.iter().map(|v| Choice::new(*v, *v)))
        .collect()
}

/// The fields, in the order of the form.
fn fields(categories: &[categories::Category]) -> Vec<FieldView> {
    let category_choices = std::iter::once(Choice::new("", "No category"))
        .chain(
            categories
                .iter()
                .map(|c| Choice::new(c.id.to_string(), c.name.clone())),
        )
        .collect();
    vec![
        FieldView::new("title", "Title", "text").required(),
        FieldView::new("company_name", "Company", "text").required(),
        FieldView::new("description", "Description", "textarea")
            .required()
            .hint("HTML is allowed; scripts, event handlers and unsafe links are removed."),
        FieldView::new("status", "Status", "select")
            .hint("Active jobs are listed on the board; pending ones wait for approval.")
            .choices(
                JobStatus::ALL
                    .iter()
                    .map(|s| Choice::new(*s, *s))
                    .collect(),
            ),
        FieldView::new("job_type", "Type of employment", "select")
            .choices(enum_choices("Not given", JobType::ALL)),
        FieldView::new("category_id", "Category", "select").choices(category_choices),
        FieldView::new("location", "Location", "text"),
        FieldView::new(
            "location_restricted",
            "Only candidates from this location may apply",
            "checkbox",
        ),
        FieldView::new("is_remote", "Remote", "checkbox"),
        FieldView::new("is_highlighted", "Highlighted on the board", "checkbox"),
        FieldView::new("is_sticky", "Sticky (listed first)", "checkbox"),
        FieldView::new("how_to_apply_method", "How to apply", "select")
            .choices(enum_choices("Not given", ApplyMethod::ALL)),
        FieldView::new("how_to_apply", "Where or how to apply", "textarea").hint(
            "A web address for website and form-external, an email address for email, instructions otherwise.",
        ),
        FieldView::new("contact_email", "Contact email", "email"),
        FieldView::new("company_website", "Company website", "url"),
        FieldView::new("company_logo_url", "Company logo URL", "url"),
        FieldView::new("salary_min", "Salary from", "number"),
        FieldView::new("salary_max", "Salary up to", "number"),
        FieldView::new("salary_currency", "Salary currency", "text")
            .hint("Three letters, e.g. EUR."),
        FieldView::new("salary_period", "Salary paid per", "select")
            .choices(enum_choices("Not given", SalaryPeriod::ALL)),
        FieldView::new("expires_at", "Expires at (UTC)", "datetime-local")
            .hint("The job stops being listed then and moves to expired."),
    ]
}

/// The form's values of a stored job.
fn values_of_job(j: &Job) -> HashMap<String, String> {
    let on = |b: bool| if b { "on" } else { "" }.to_string();
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    let num = |v: Option<f64>| v.map(|n| n.to_string()).unwrap_or_default();
    HashMap::from([
        ("title".into(), j.title.clone()),
        ("company_name".into(), j.company_name.clone()),
        ("description".into(), j.description.clone()),
        ("status".into(), j.status.as_str().into()),
        (
            "job_type".into(),
            j.job_type
                .map(|t| t.as_str().to_string())
                .unwrap_or_default(),
        ),
        (
            "category_id".into(),
            j.category_id.map(|c| c.to_string()).unwrap_or_default(),
        ),
        ("location".into(), opt(&j.location)),
        ("location_restricted".into(), on(j.location_restricted)),
        ("is_remote".into(), on(j.is_remote)),
        ("is_highlighted".into(), on(j.is_highlighted)),
        ("is_sticky".into(), on(j.is_sticky)),
        (
            "how_to_apply_method".into(),
            j.how_to_apply_method
                .map(|m| m.as_str().to_string())
                .unwrap_or_default(),
        ),
        ("how_to_apply".into(), opt(&j.how_to_apply)),
        ("contact_email".into(), opt(&j.contact_email)),
        ("company_website".into(), opt(&j.company_website)),
        ("company_logo_url".into(), opt(&j.company_logo_url)),
        ("salary_min".into(), num(j.salary_min)),
        ("salary_max".into(), num(j.salary_max)),
        ("salary_currency".into(), opt(&j.salary_currency)),
        (
            "salary_period".into(),
            j.salary_period
                .map(|p| p.as_str().to_string())
                .unwrap_or_default(),
        ),
        (
            "expires_at".into(),
            j.expires_at
                .map(|t| t.0.format("%Y-%m-%dT%H:%M").to_string())
                .unwrap_or_default(),
        ),
    ])
}

/// The body of the operation: the form's fields as the API takes them. A browser's
/// date and time without a zone (`2026-01-31T12:00`) is read as UTC, as the label says.
fn body_of(form: &FormData) -> jobboard_domain::Input {
    let mut form = form.clone();
    for (k, v) in &mut form.0 {
        if k == "expires_at" {
            let t = v.trim();
            let shaped = |n: usize| t.len() == n && t.as_bytes().get(10) == Some(&b'T');
            if shaped(16) {
                *v = format!("{t}:00Z");
            } else if shaped(19) {
                *v = format!("{t}Z");
            }
        }
    }
    form.to_input(SPEC)
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
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
    job: Option<JobInfo>,
}

fn info(j: &Job) -> JobInfo {
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
        public_path: j
            .is_live(jobboard_domain::Ts::now())
            .then(|| jobs::url_of(&j.slug)),
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
    let mut fields = fields(&cats);
    let problems = fill(&mut fields, values, messages);
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
        fields,
        problems,
        job: job.map(info),
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
