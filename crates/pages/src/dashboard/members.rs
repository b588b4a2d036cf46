//! Members: the organization's members, newest first, searchable by email or name (as
//! `GET /api/members` searches), and each member's page with its access (subscription)
//! records and payments (as `GET /api/members/{lookup}` reads them).

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    response::Response,
};

use super::{Nav, Posted, Staff, chrome, params, path_id, render, session::see_other, when};
use crate::{error::PageError, page::Chrome};
use jobboard_app::app::AppState;
use jobboard_domain::{
    Input, MemberId, QueryInput, Ts,
    members::{self, Access, ApprovalStatus, Member, MemberListQuery, Payment, opens_paywall},
    plans,
};

/// Members per page.
const PER_PAGE: i64 = 25;

struct Row {
    id: String,
    name: String,
    email: String,
    role: &'static str,
    approval: &'static str,
    joined: String,
}

impl Row {
    fn of(m: Member) -> Row {
        Row {
            id: m.id.to_string(),
            name: m.name,
            email: m.email,
            role: m.role.as_str(),
            approval: m.approval_status.as_str(),
            joined: when(&m.created_at),
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/members.html")]
struct MembersPage {
    chrome: Chrome,
    nav: Nav,
    search: String,
    rows: Vec<Row>,
    total: i64,
    page: i64,
    pages: i64,
    base: String,
    problem: Option<String>,
}

/// `GET /dashboard/members?search=&page=`
pub async fn list(
    staff: Staff,
    State(app): State<AppState>,
    RawQuery(q): RawQuery,
) -> Result<Response, PageError> {
    let p = params(q.as_deref());
    let search: String = p
        .get("search")
        .map(|s| s.trim().chars().take(200).collect())
        .unwrap_or_default();
    let page = p
        .get("page")
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(1)
        .clamp(1, 1_000_000);
    let mut query = vec![
        ("page", page.to_string()),
        ("per_page", PER_PAGE.to_string()),
    ];
    if !search.is_empty() {
        query.push(("search", search.clone()));
    }
    let mut qi = QueryInput::parse(Some(
        &serde_urlencoded::to_string(&query).unwrap_or_default(),
    ));
    let lq = MemberListQuery::read(&mut qi);
    let (listed, problem) = match qi.finish() {
        Ok(()) => (
            Some(members::page(&app.db, staff.org_id(), &lq).await?),
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
    let (rows, total) = listed.map_or((Vec::new(), 0), |l| {
        (l.rows.into_iter().map(Row::of).collect(), l.total)
    });
    let base = if search.is_empty() {
        "/dashboard/members?".to_string()
    } else {
        format!(
            "/dashboard/members?{}",
            serde_urlencoded::to_string([("search", &search)]).unwrap_or_default()
        )
    };
    render(&MembersPage {
        chrome: chrome("Members"),
        nav: Nav::new(&staff, "members"),
        search,
        rows,
        total,
        page,
        pages: (total + PER_PAGE - 1) / PER_PAGE,
        base,
        problem,
    })
}

/// An access record as shown.
struct AccessRow {
    plan: String,
    status: &'static str,
    subscription: String,
    period: String,
    cancel_at: String,
    canceled_at: String,
    jobs_remaining: i64,
    opens: bool,
}

struct PaymentRow {
    when: String,
    amount: String,
    status: &'static str,
    provider: &'static str,
    job_id: Option<String>,
}

#[derive(Template)]
#[template(path = "dashboard/member.html")]
struct MemberPage {
    chrome: Chrome,
    nav: Nav,
    member: Row,
    description: String,
    access: Vec<AccessRow>,
    payments: Vec<PaymentRow>,
    paywall: bool,
}

fn opt_when(t: Option<Ts>) -> String {
    t.map(|t| when(&t)).unwrap_or_default()
}

/// `GET /dashboard/members/{id}`
pub async fn show(
    staff: Staff,
    State(app): State<AppState>,
    Path(raw): Path<String>,
) -> Result<Response, PageError> {
    let id: MemberId = path_id(&raw)?;
    let org = staff.org_id();
    let record = members::lookup(&app.db, org, &id.to_string()).await?;
    let plan_names: std::collections::HashMap<_, _> = plans::list(&app.db, org)
        .await?
        .into_iter()
        .map(|p| (p.id, p.name))
        .collect();
    let now = app.clock.now();
    let access = record
        .subscriptions
        .iter()
        .rev()
        .map(|a: &Access| AccessRow {
            plan: plan_names
                .get(&a.plan_id)
                .cloned()
                .unwrap_or_else(|| a.plan_id.to_string()),
            status: a.status.as_str(),
            subscription: a.processor_subscription_id.clone().unwrap_or_default(),
            period: match (a.current_period_start, a.current_period_end) {
                (None, None) => String::new(),
                (s, e) => format!("{} – {}", opt_when(s), opt_when(e)),
            },
            cancel_at: opt_when(a.cancel_at),
            canceled_at: opt_when(a.canceled_at),
            jobs_remaining: a.jobs_remaining,
            opens: opens_paywall(a, now),
        })
        .collect();
    let payments = record
        .payments
        .iter()
        .rev()
        .map(|p: &Payment| PaymentRow {
            when: when(&p.created_at),
            amount: format!("{} {}", p.amount, p.currency),
            status: p.status.as_str(),
            provider: p.payment_provider.as_str(),
            job_id: p.job_id.map(|j| j.to_string()),
        })
        .collect();
    let m = record.member;
    let description = m.description.clone().unwrap_or_default();
    render(&MemberPage {
        chrome: chrome(&m.name),
        nav: Nav::new(&staff, "members"),
        description,
        member: Row::of(m),
        access,
        payments,
        paywall: record.has_valid_paywall_subscription,
    })
}

/// `POST /dashboard/members/{id}/approval` (`approval_status`: `approved` or
/// `rejected`): staff admit a member who signed up, or turn them away, as a sync that
/// sends `approvalStatus` does (and with what it emits).
pub async fn set_approval(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id: MemberId = path_id(&raw)?;
    let org = posted.staff.org_id();
    let status = posted
        .form
        .get("approval_status")
        .and_then(ApprovalStatus::parse)
        .ok_or_else(|| PageError::bad_request("Choose whether to approve the member."))?;
    let record = members::lookup(&app.db, org, &id.to_string()).await?;
    let mut body = serde_json::Map::new();
    body.insert("email".into(), record.member.email.into());
    body.insert("userId".into(), id.to_string().into());
    body.insert("approvalStatus".into(), status.as_str().into());
    members::sync(&app.db, org, Input::new(body)).await?;
    tracing::info!(member_id = %id, user_id = %posted.staff.session.user_id, status = status.as_str(), "member approval set in the dashboard");
    Ok(see_other(&format!(
        "/dashboard/members/{id}?notice={}",
        status.as_str()
    )))
}
