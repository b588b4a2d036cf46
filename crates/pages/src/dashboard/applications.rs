//! Applications: every application, newest first, in tabs by status, overall or to one
//! job; each can be moved to another status, as `PATCH /api/applications/{id}` moves it
//! (with `application.status_changed`).

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    response::Response,
};

use super::{Nav, Posted, Staff, chrome, params, path_id, render, session::see_other, when};
use crate::{error::PageError, page::Chrome};
use jobboard_app::app::AppState;
use jobboard_domain::{
    QueryInput,
    applications::{self, Application, ApplicationListQuery, ApplicationStatus},
    jobs,
};

/// Applications per page.
const PER_PAGE: i64 = 25;

/// The tabs: everything, then each status in its order.
fn tabs() -> Vec<(&'static str, &'static str)> {
    let mut t = vec![("all", "All")];
    t.extend(ApplicationStatus::ALL.iter().map(|s| (*s, label(s))));
    t
}

fn label(status: &str) -> &'static str {
    match status {
        "new" => "New",
        "reviewing" => "Reviewing",
        "interviewing" => "Interviewing",
        "offered" => "Offered",
        "hired" => "Hired",
        "rejected" => "Rejected",
        _ => "All",
    }
}

struct Tab {
    label: &'static str,
    href: String,
    current: bool,
}

struct Row {
    id: String,
    name: String,
    email: String,
    job_id: String,
    job_title: String,
    status: &'static str,
    received: String,
    resume_url: Option<String>,
}

impl Row {
    fn of(a: Application) -> Row {
        Row {
            id: a.id.to_string(),
            name: a.name,
            email: a.email,
            job_id: a.job_id.to_string(),
            job_title: a.job_title,
            status: a.status.as_str(),
            received: when(&a.created_at),
            resume_url: a
                .resume_url
                .filter(|u| u.starts_with("https://") || u.starts_with("http://")),
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/applications.html")]
struct ApplicationsPage {
    chrome: Chrome,
    nav: Nav,
    tabs: Vec<Tab>,
    tab: &'static str,
    /// The job the list is limited to: (id, title).
    job: Option<(String, String)>,
    statuses: Vec<(&'static str, &'static str)>,
    rows: Vec<Row>,
    total: i64,
    page: i64,
    pages: i64,
    /// The list's address without its page.
    base: String,
}

/// The list's address for `tab` and `job`.
fn list_href(tab: &str, job: Option<&str>) -> String {
    let mut q = vec![("status", tab.to_string())];
    if let Some(j) = job {
        q.push(("job", j.to_string()));
    }
    format!(
        "/dashboard/applications?{}",
        serde_urlencoded::to_string(&q).unwrap_or_default()
    )
}

/// `GET /dashboard/applications?status=&job=&page=`
pub async fn list(
    staff: Staff,
    State(app): State<AppState>,
    RawQuery(q): RawQuery,
) -> Result<Response, PageError> {
    let p = params(q.as_deref());
    let org = staff.org_id();
    let tab = tabs()
        .into_iter()
        .map(|(k, _)| k)
        .find(|k| Some(*k) == p.get("status").map(String::as_str))
        .unwrap_or("all");
    // A job of another organization is not found, like an unknown one.
    let job = match p.get("job").filter(|j| !j.is_empty()) {
        Some(raw) => {
            let j = jobs::get(&app.db, org, path_id(raw)?).await?;
            Some((j.id.to_string(), j.title))
        }
        None => None,
    };
    let page = p
        .get("page")
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(1)
        .clamp(1, 1_000_000);
    let mut query = vec![
        ("page", page.to_string()),
        ("per_page", PER_PAGE.to_string()),
    ];
    if tab != "all" {
        query.push(("status", tab.to_string()));
    }
    if let Some((id, _)) = &job {
        query.push(("job_id", id.clone()));
    }
    let mut qi = QueryInput::parse(Some(
        &serde_urlencoded::to_string(&query).unwrap_or_default(),
    ));
    let lq = ApplicationListQuery::read(&mut qi);
    qi.finish()?;
    let listed = applications::list(&app.db, org, &lq).await?;
    let pages = (listed.total + PER_PAGE - 1) / PER_PAGE;
    let job_id = job.as_ref().map(|(id, _)| id.as_str());
    render(&ApplicationsPage {
        chrome: chrome("Applications"),
        nav: Nav::new(&staff, "applications").notice(p.get("notice").map(String::as_str)),
        tabs: tabs()
            .into_iter()
            .map(|(key, label)| Tab {
                label,
                href: list_href(key, job_id),
                current: key == tab,
            })
            .collect(),
        tab,
        statuses: ApplicationStatus::ALL
            .iter()
            .map(|s| (*s, label(s)))
            .collect(),
        rows: listed.rows.into_iter().map(Row::of).collect(),
        total: listed.total,
        page,
        pages,
        base: list_href(tab, job_id),
        job,
    })
}

/// `POST /dashboard/applications/{id}/status` (`status`, and the list to return to:
/// `back_status`, `back_job`): the move `PATCH /api/applications/{id}` makes.
pub async fn set_status(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let status = posted
        .form
        .get("status")
        .and_then(ApplicationStatus::parse)
        .ok_or_else(|| PageError::bad_request("Choose the application's new status."))?;
    let moved = applications::set_status(&app.db, posted.staff.org_id(), id, status).await?;
    tracing::info!(application_id = %id, user_id = %posted.staff.session.user_id, status = status.as_str(), "application moved in the dashboard");
    // Back to the list the form came from (only a tab name and the application's own job).
    let tab = tabs()
        .into_iter()
        .map(|(k, _)| k)
        .find(|k| Some(*k) == posted.form.get("back_status"))
        .unwrap_or("all");
    let job = posted
        .form
        .get("back_job")
        .filter(|j| *j == moved.job_id.to_string());
    Ok(see_other(&format!(
        "{}&notice=application_moved",
        list_href(tab, job)
    )))
}
