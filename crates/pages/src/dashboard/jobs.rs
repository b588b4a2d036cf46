//! Jobs: the list in tabs by status (the pending queue first), searchable and paged, with
//! the moves a job can make (approve, return to draft, expire) and deletion after a
//! confirmation. Each action calls the operation `PATCH` and `DELETE /api/jobs/{id}` call,
//! so it emits the same events and the API and the board see it at once.

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    response::Response,
};

use super::{Nav, Posted, Staff, chrome, count_jobs, params, path_id, render, session::see_other};
use crate::{error::PageError, page::Chrome};
use jobboard_app::app::AppState;
use jobboard_domain::{
    QueryInput,
    jobs::{self, JobListItem, JobStatus, ListQuery},
};

/// Jobs per page of the list.
const PER_PAGE: i64 = 25;

/// The tabs, in order: the pending queue first.
const TABS: &[(&str, &str)] = &[
    ("pending", "Pending approval"),
    ("active", "Active"),
    ("draft", "Drafts"),
    ("expired", "Expired"),
    ("all", "All"),
];

/// A tab as drawn.
struct Tab {
    key: &'static str,
    label: &'static str,
    /// The number of jobs, for the status tabs.
    count: Option<i64>,
    current: bool,
}

/// A job of the list, with the moves it can make.
struct Row {
    id: String,
    title: String,
    company_name: String,
    location: String,
    job_type: String,
    is_remote: bool,
    status: &'static str,
    /// (status to move to, button label): the moves to the other statuses.
    moves: Vec<(&'static str, &'static str)>,
}

fn moves(status: JobStatus) -> Vec<(&'static str, &'static str)> {
    [
        (JobStatus::Active, "Approve"),
        (JobStatus::Draft, "Return to draft"),
        (JobStatus::Expired, "Expire"),
    ]
    .into_iter()
    .filter(|(s, _)| *s != status)
    .map(|(s, label)| (s.as_str(), label))
    .collect()
}

impl Row {
    fn of(j: JobListItem) -> Row {
        Row {
            id: j.id.to_string(),
            title: j.title,
            company_name: j.company_name,
            location: j.location.unwrap_or_default(),
            job_type: j
                .job_type
                .map(|t| t.as_str().to_string())
                .unwrap_or_default(),
            is_remote: j.is_remote,
            status: j.status.as_str(),
            moves: moves(j.status),
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/jobs.html")]
struct JobsPage {
    chrome: Chrome,
    nav: Nav,
    tabs: Vec<Tab>,
    tab: &'static str,
    tab_label: &'static str,
    search: String,
    rows: Vec<Row>,
    total: i64,
    page: i64,
    pages: i64,
    /// The list's address without its page (`/dashboard/jobs?status=pending&search=x`).
    base: String,
    problem: Option<String>,
}

/// The tab named `s` (the pending queue for anything else).
fn tab_of(s: Option<&str>) -> (&'static str, &'static str) {
    TABS.iter()
        .find(|(k, _)| Some(*k) == s)
        .copied()
        .unwrap_or(TABS[0])
}

/// `GET /dashboard/jobs?status=&search=&page=`
pub async fn list(
    staff: Staff,
    State(app): State<AppState>,
    RawQuery(q): RawQuery,
) -> Result<Response, PageError> {
    let p = params(q.as_deref());
    let (tab, tab_label) = tab_of(p.get("status").map(String::as_str));
    let search: String = p
        .get("search")
        .map(|s| s.trim().chars().take(200).collect())
        .unwrap_or_default();
    let page = p
        .get("page")
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(1)
        .clamp(1, 10_000_000);
    let mut query: Vec<(&str, String)> = vec![
        ("status", tab.to_string()),
        ("page", page.to_string()),
        ("per_page", PER_PAGE.to_string()),
    ];
    if !search.is_empty() {
        query.push(("search", search.clone()));
    }
    let qs = serde_urlencoded::to_string(&query).unwrap_or_default();
    let mut qi = QueryInput::parse(Some(&qs));
    let lq = ListQuery::read(&mut qi);
    let org = staff.org_id();
    let (listed, problem) = match qi.finish() {
        Ok(()) => (
            Some(jobs::list(&app.db, org, &lq, app.clock.now()).await?),
            None,
        ),
        Err(e) => (
            None,
            Some(
                crate::fields::messages_of(e)?
                    .0
                    .into_values()
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        ),
    };
    let (pending, active, draft, expired) = tokio::try_join!(
        count_jobs(&app, org, JobStatus::Pending),
        count_jobs(&app, org, JobStatus::Active),
        count_jobs(&app, org, JobStatus::Draft),
        count_jobs(&app, org, JobStatus::Expired),
    )?;
    let counts = [
        Some(pending),
        Some(active),
        Some(draft),
        Some(expired),
        None,
    ];
    let tabs = TABS
        .iter()
        .zip(counts)
        .map(|((key, label), count)| Tab {
            key,
            label,
            count,
            current: *key == tab,
        })
        .collect();
    let (rows, total, pages) = match listed {
        Some(l) => {
            let pages = l.total_pages(PER_PAGE);
            (
                l.rows.into_iter().map(Row::of).collect(),
                l.total.items,
                pages,
            )
        }
        None => (Vec::new(), 0, 0),
    };
    let mut base_q = vec![("status", tab.to_string())];
    if !search.is_empty() {
        base_q.push(("search", search.clone()));
    }
    render(&JobsPage {
        chrome: chrome(&format!("Jobs: {tab_label}")),
        nav: Nav::new(&staff, "jobs").notice(p.get("notice").map(String::as_str)),
        tabs,
        tab,
        tab_label,
        search,
        rows,
        total,
        page,
        pages,
        base: format!(
            "/dashboard/jobs?{}",
            serde_urlencoded::to_string(&base_q).unwrap_or_default()
        ),
        problem,
    })
}

/// Where to go after an action: back to the tab named by the form's `back` field, or to
/// the job's page for `edit` (never an address the form chose).
fn back_to(back: Option<&str>, id: &str, notice: &str) -> String {
    match back {
        Some("edit") => format!("/dashboard/jobs/{id}?notice={notice}"),
        other => format!("/dashboard/jobs?status={}&notice={notice}", tab_of(other).0),
    }
}

/// `POST /dashboard/jobs/{id}/status` (`status`: active, draft, expired or pending): the
/// move `PATCH /api/jobs/{id}` with `{"status": ...}` makes.
pub async fn set_status(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let status = posted
        .form
        .get("status")
        .and_then(JobStatus::parse)
        .ok_or_else(|| PageError::bad_request("Choose what to do with the job."))?;
    jobs::set_status(&app.db, posted.staff.org_id(), id, status).await?;
    tracing::info!(job_id = %id, user_id = %posted.staff.session.user_id, status = status.as_str(), "job moved in the dashboard");
    let notice = match status {
        JobStatus::Active => "approved",
        JobStatus::Draft => "drafted",
        JobStatus::Expired => "expired",
        JobStatus::Pending => "pending",
    };
    Ok(see_other(&back_to(posted.form.get("back"), &raw, notice)))
}

#[derive(Template)]
#[template(path = "dashboard/job_delete.html")]
struct DeletePage {
    chrome: Chrome,
    nav: Nav,
    id: String,
    title: String,
    company_name: String,
    status: &'static str,
}

/// `GET /dashboard/jobs/{id}/delete`: asks before deleting.
pub async fn confirm_delete(
    staff: Staff,
    State(app): State<AppState>,
    Path(raw): Path<String>,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let job = jobs::get(&app.db, staff.org_id(), id).await?;
    render(&DeletePage {
        chrome: chrome(&format!("Delete {}", job.title)),
        nav: Nav::new(&staff, "jobs"),
        id: job.id.to_string(),
        title: job.title,
        company_name: job.company_name,
        status: job.status.as_str(),
    })
}

/// `POST /dashboard/jobs/{id}/delete`: deletes the job, as `DELETE /api/jobs/{id}` does.
pub async fn delete(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id = path_id(&raw)?;
    let job = jobs::delete(&app.db, posted.staff.org_id(), id).await?;
    tracing::info!(job_id = %id, user_id = %posted.staff.session.user_id, "job deleted in the dashboard");
    Ok(see_other(&format!(
        "/dashboard/jobs?status={}&notice=deleted",
        tab_of(Some(job.status.as_str())).0
    )))
}
