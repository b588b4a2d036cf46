//! Settings > Board look: the board's name, tagline, logo, accent colour, domain and
//! whether visitors may post jobs, changed through the organization's update operation
//! (the one `jobboard orgs update` calls). The board shows a change on its next request.

use std::collections::HashMap;

use askama::Template;
use axum::{
    extract::{RawQuery, State},
    http::StatusCode,
    response::Response,
};

use super::{
    Nav, Posted, Staff, chrome,
    fields::{FieldView, Problem, fill, messages_of, values_of},
    params, render, render_status,
    session::see_other,
};
use crate::{
    app::AppState,
    domain::orgs::{self, Org},
    web::{
        error::PageError,
        forms::{FieldMessages, FormValue},
        page::Chrome,
        site::DEFAULT_ACCENT,
    },
};

const SPEC: &[(&str, FormValue)] = &[
    ("name", FormValue::Required),
    ("tagline", FormValue::Clearable),
    ("logo_url", FormValue::Clearable),
    ("accent_color", FormValue::Clearable),
    ("domain", FormValue::Clearable),
    ("public_posting", FormValue::Checkbox),
    ("mail_job_live", FormValue::Checkbox),
    ("mail_expiry_days", FormValue::Number),
    ("mail_applications", FormValue::Checkbox),
];

fn fields() -> Vec<FieldView> {
    vec![
        FieldView::new("name", "Board name", "text").required(),
        FieldView::new("tagline", "Tagline", "text").hint("A line under the board's name."),
        FieldView::new("logo_url", "Logo URL", "url")
            .hint("An absolute http(s) address of an image."),
        FieldView::new("accent_color", "Accent colour", "text").hint(format!(
            "Written #rrggbb, e.g. #1d4ed8. Empty: the neutral {DEFAULT_ACCENT}."
        )),
        FieldView::new("domain", "Domain", "text").hint(
            "The host name the board answers on, e.g. jobs.example.com (point its DNS here).",
        ),
        FieldView::new(
            "public_posting",
            "Visitors may submit jobs on the board",
            "checkbox",
        ),
        FieldView::new(
            "mail_job_live",
            "Mail a job's contact address when the job goes live",
            "checkbox",
        ),
        FieldView::new("mail_expiry_days", "Expiry reminder, days before", "number").hint(
            "Mail a job's contact address this many days before the job expires (0 to 60; 0: never).",
        ),
        FieldView::new(
            "mail_applications",
            "Mail a job's contact address on each application",
            "checkbox",
        ),
    ]
}

fn values_of_org(o: &Org) -> HashMap<String, String> {
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    HashMap::from([
        ("name".into(), o.name.clone()),
        ("tagline".into(), opt(&o.tagline)),
        ("logo_url".into(), opt(&o.logo_url)),
        ("accent_color".into(), opt(&o.accent_color)),
        ("domain".into(), opt(&o.domain)),
        (
            "public_posting".into(),
            if o.public_posting { "on" } else { "" }.into(),
        ),
        (
            "mail_job_live".into(),
            if o.mail_job_live { "on" } else { "" }.into(),
        ),
        ("mail_expiry_days".into(), o.mail_expiry_days.to_string()),
        (
            "mail_applications".into(),
            if o.mail_applications { "on" } else { "" }.into(),
        ),
    ])
}

#[derive(Template)]
#[template(path = "dashboard/board.html")]
struct BoardPage {
    chrome: Chrome,
    nav: Nav,
    fields: Vec<FieldView>,
    problems: Vec<Problem>,
}

fn page(
    staff: &Staff,
    values: &HashMap<String, String>,
    messages: &FieldMessages,
    notice: Option<&str>,
) -> BoardPage {
    let mut fields = fields();
    let problems = fill(&mut fields, values, messages);
    BoardPage {
        chrome: chrome("Board look"),
        nav: Nav::new(staff, "board").notice(notice),
        fields,
        problems,
    }
}

/// `GET /dashboard/settings/board`
pub async fn page_get(
    staff: Staff,
    State(app): State<AppState>,
    RawQuery(q): RawQuery,
) -> Result<Response, PageError> {
    let org = orgs::get(&app.db, staff.org_id()).await?;
    let notice = params(q.as_deref()).get("notice").cloned();
    render(&page(
        &staff,
        &values_of_org(&org),
        &FieldMessages::default(),
        notice.as_deref(),
    ))
}

/// `POST /dashboard/settings/board`
pub async fn save(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let staff = &posted.staff;
    match orgs::update(&app.db, staff.org_id(), posted.form.to_input(SPEC)).await {
        Ok(_) => {
            tracing::info!(org_id = staff.org_id(), user_id = %staff.session.user_id, "board settings changed in the dashboard");
            Ok(see_other("/dashboard/settings/board?notice=board_saved"))
        }
        Err(e) => {
            let messages = messages_of(e)?;
            render_status(
                &page(staff, &values_of(&posted.form), &messages, None),
                StatusCode::UNPROCESSABLE_ENTITY,
            )
        }
    }
}
