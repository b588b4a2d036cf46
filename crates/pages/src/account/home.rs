//! `GET /account`: the member's home: who they are, their plan and the job posts it has
//! left, their jobs (employers), saved jobs and job alerts (with the links that stop
//! them), and their data.

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};

use super::{Member, Posted};
use crate::{
    board::{Frame, checkout},
    error::PageError,
    page::{Chrome, Html},
};
use jobboard_app::app::AppState;
use jobboard_delivery::processor::Line;
use jobboard_domain::{
    Error,
    accounts::{self, posts, saved},
    alerts::{self, AlertStatus},
    members::{self, ApprovalStatus},
    payments::{self, minor_exponent, model::amount_text},
    plans,
};

/// A pack of posts the member can buy.
pub(super) struct PackRow {
    pub id: String,
    pub name: String,
    pub posts: i64,
    pub amount: String,
}

pub(super) struct AlertRow {
    pub described: String,
    pub frequency: &'static str,
    pub status: &'static str,
    pub active: bool,
    pub stop: String,
}

#[derive(Template)]
#[template(path = "account/home.html")]
struct HomePage {
    chrome: Chrome,
    frame: Frame,
    here: &'static str,
    employer: bool,
    csrf: String,
    notice: Option<String>,
    email: String,
    name: String,
    role: &'static str,
    approval: &'static str,
    waiting: Option<&'static str>,
    /// (plan, status, job posts left).
    plans: Vec<(String, &'static str, i64)>,
    job_count: i64,
    /// The newest jobs: (title, status).
    jobs: Vec<(String, &'static str)>,
    saved_count: usize,
    /// The most recently saved: (title, slug).
    saved: Vec<(String, String)>,
    alerts: Vec<AlertRow>,
    /// The packs of posts on sale (employers who may post, on a board that takes
    /// payments).
    packs: Vec<PackRow>,
}

/// `GET /account`
pub async fn show(
    State(app): State<AppState>,
    member: Member,
    RawQuery(raw): RawQuery,
) -> Result<Response, PageError> {
    let (site, m) = (&member.site, &member.session.member);
    let org = site.org.id;
    let employer = m.role.posts_jobs();
    let plan_names: std::collections::HashMap<_, _> = plans::list(&app.db, org)
        .await?
        .into_iter()
        .map(|p| (p.id, p.name))
        .collect();
    let plans = members::access_of(&app.db, org, m.id)
        .await?
        .into_iter()
        .rev()
        .map(|a| {
            (
                plan_names
                    .get(&a.plan_id)
                    .cloned()
                    .unwrap_or_else(|| a.plan_id.to_string()),
                a.status.as_str(),
                a.jobs_remaining,
            )
        })
        .collect();
    let (job_count, jobs) = if employer {
        let (newest, total) = posts::newest(&app.db, org, m, 5).await?;
        let newest = newest
            .into_iter()
            .map(|j| (j.title, j.status.as_str()))
            .collect();
        (total, newest)
    } else {
        (0, Vec::new())
    };
    let all_saved = saved::list(&app.db, org, m).await?;
    let saved_count = all_saved.len();
    let saved = all_saved
        .into_iter()
        .take(5)
        .map(|s| (s.job.title, s.job.slug))
        .collect();
    let mut rows = Vec::new();
    for a in accounts::data::alerts_of(&app.db, org, &m.email).await? {
        rows.push(AlertRow {
            described: alerts::described(&a.query),
            frequency: a.frequency.as_str(),
            status: a.status.as_str(),
            active: a.status != AlertStatus::Unsubscribed,
            stop: alerts::manage_path(&app.db, a.id).await?,
        });
    }
    let waiting = match m.approval_status {
        ApprovalStatus::Approved => None,
        ApprovalStatus::Pending => {
            Some("The board has not approved your account yet. You can post jobs once it has.")
        }
        ApprovalStatus::Rejected => Some("The board did not approve your account."),
    };
    let notice = (raw.as_deref() == Some("welcome=1"))
        .then(|| "Welcome: your account is made and you are signed in.".to_string());
    let account = payments::account(&app.db, org).await?;
    let packs = match &account {
        Some(_) if accounts::may_post(m).is_ok() => payments::packs(&app.db, org)
            .await?
            .into_iter()
            .map(|p| PackRow {
                id: p.id.to_string(),
                amount: amount_text(
                    p.price.minor_units(minor_exponent(&p.currency)),
                    &p.currency,
                ),
                name: p.name,
                posts: p.jobs_included,
            })
            .collect(),
        _ => Vec::new(),
    };
    // A pack's form is answered with a redirect to the processor's checkout page.
    let checkout_origin = match &account {
        Some(a) if !packs.is_empty() => a.checkout_origin(),
        _ => String::new(),
    };
    let tpl = HomePage {
        chrome: Chrome::new(format!("Your account – {}", site.org.name))
            .with_theme(&site.theme.css),
        frame: Frame::of(site, "/account"),
        here: "home",
        employer,
        csrf: member.csrf.clone(),
        notice,
        email: m.email.clone(),
        name: m.name.clone(),
        role: m.role.as_str(),
        approval: m.approval_status.as_str(),
        waiting,
        plans,
        job_count,
        jobs,
        saved_count,
        saved,
        alerts: rows,
        packs,
    };
    Ok(Html::render(&tpl, Some(&site.theme.csp_hash))?
        .allow_form_action(&checkout_origin)
        .cache_control("private, no-store")
        .robots("noindex")
        .into_response())
}

/// `POST /account/packs/{id}`: buys a pack of job posts through the board's checkout
/// (docs/payments.md); once paid, its posts are the member's.
pub async fn buy_pack(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let Posted { member, .. } = posted;
    let plan = raw
        .parse::<uuid::Uuid>()
        .map_err(|_| PageError::not_found())?;
    let account = checkout::account_of(&app, &member.site).await?;
    match payments::start_pack(&app.db, &member.site.org, &member.session.member, plan).await {
        Ok((order, plan)) => {
            let line = Line::Processor {
                price_id: plan.processor_price_id.as_deref().unwrap_or(""),
            };
            checkout::open(&app, &member.site, &account, &order, line).await
        }
        Err(Error::Conflict { message, .. }) => Err(PageError::new(
            StatusCode::CONFLICT,
            "The pack cannot be bought",
            message,
        )),
        Err(Error::Invalid(_)) => Err(PageError::not_found()),
        Err(e) => Err(e.into()),
    }
}
