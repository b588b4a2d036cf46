//! A job seeker's saved jobs, and every member's data: the export of everything the
//! board keeps about them and the deletion of their account (after a confirmation).
//!
//! A job's page is the same for every visitor (and cached), so it links to
//! `/jobs/<slug>/save`, whose page carries the member's form token; the save is its
//! `POST`.

use askama::Template;
use axum::{
    extract::{Path, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};

use super::{Member, Posted, sign_in::message, with_cookie};
use crate::{
    board::Frame,
    dashboard::session::see_other,
    error::PageError,
    page::{Chrome, Html},
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    JobId,
    accounts::{data, saved},
    jobs::{self, JobStatus},
};

struct SavedRow {
    id: String,
    slug: String,
    title: String,
    company: String,
    live: bool,
    when: String,
}

#[derive(Template)]
#[template(path = "account/saved.html")]
struct SavedPage {
    chrome: Chrome,
    frame: Frame,
    here: &'static str,
    employer: bool,
    csrf: String,
    rows: Vec<SavedRow>,
}

#[derive(Template)]
#[template(path = "account/save.html")]
struct SavePage {
    chrome: Chrome,
    frame: Frame,
    here: &'static str,
    employer: bool,
    csrf: String,
    slug: String,
    title: String,
    company: String,
}

#[derive(Template)]
#[template(path = "account/delete.html")]
struct DeletePage {
    chrome: Chrome,
    frame: Frame,
    here: &'static str,
    employer: bool,
    csrf: String,
    email: String,
    problem: Option<&'static str>,
}

fn private(html: Html) -> Response {
    html.cache_control("private, no-store")
        .robots("noindex")
        .into_response()
}

/// The listed job `slug` of the member's board.
async fn listed(app: &AppState, member: &Member, slug: &str) -> Result<jobs::Job, PageError> {
    match jobs::get_by_slug(&app.db, member.site.org.id, slug).await? {
        Some(job) if job.status == JobStatus::Active => Ok(job),
        _ => Err(PageError::not_found()),
    }
}

/// `GET /jobs/{slug}/save`: asks to save the job (signing in first).
pub async fn save_form(
    State(app): State<AppState>,
    member: Member,
    Path(slug): Path<String>,
) -> Result<Response, PageError> {
    let job = listed(&app, &member, &slug).await?;
    let site = &member.site;
    let tpl = SavePage {
        chrome: Chrome::new(format!("Save {} – {}", job.title, site.org.name))
            .with_theme(&site.theme.css),
        frame: Frame::of(site, &format!("/jobs/{slug}/save")),
        here: "saved",
        employer: member.session.member.role.posts_jobs(),
        csrf: member.csrf.clone(),
        slug,
        title: job.title,
        company: job.company_name,
    };
    Ok(private(Html::render(&tpl, Some(&site.theme.csp_hash))?))
}

/// `POST /jobs/{slug}/save`
pub async fn save(
    State(app): State<AppState>,
    Path(slug): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let m = &posted.member;
    let job = listed(&app, m, &slug).await?;
    saved::save(&app.db, m.site.org.id, &m.session.member, job.id).await?;
    Ok(see_other("/account/saved"))
}

/// `GET /account/saved`
pub async fn saved(State(app): State<AppState>, member: Member) -> Result<Response, PageError> {
    let site = &member.site;
    let rows = saved::list(&app.db, site.org.id, &member.session.member)
        .await?
        .into_iter()
        .map(|s| SavedRow {
            id: s.job.id.to_string(),
            live: s.job.status == JobStatus::Active,
            slug: s.job.slug,
            title: s.job.title,
            company: s.job.company_name,
            when: s.saved_at.to_string(),
        })
        .collect();
    let tpl = SavedPage {
        chrome: Chrome::new(format!("Saved jobs – {}", site.org.name)).with_theme(&site.theme.css),
        frame: Frame::of(site, "/account/saved"),
        here: "saved",
        employer: member.session.member.role.posts_jobs(),
        csrf: member.csrf.clone(),
        rows,
    };
    Ok(private(Html::render(&tpl, Some(&site.theme.csp_hash))?))
}

/// `POST /account/saved/{id}/remove`
pub async fn remove(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let id: JobId = raw.parse().map_err(|_| PageError::not_found())?;
    let m = &posted.member;
    saved::remove(&app.db, m.site.org.id, &m.session.member, id).await?;
    Ok(see_other("/account/saved"))
}

/// `GET /account/export`: everything the board keeps about the member, as one JSON
/// document to download.
pub async fn export(State(app): State<AppState>, member: Member) -> Result<Response, PageError> {
    let site = &member.site;
    let doc = data::export(
        &app.db,
        site.org.id,
        &site.org.name,
        member.session.member.id,
    )
    .await?;
    let body = serde_json::to_vec_pretty(&doc).map_err(|e| PageError::internal(&e))?;
    let mut res = body.into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"my-data.json\""),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    Ok(res)
}

async fn delete_page(member: &Member, problem: Option<&'static str>) -> Result<Html, PageError> {
    let site = &member.site;
    let tpl = DeletePage {
        chrome: Chrome::new(format!("Delete your account – {}", site.org.name))
            .with_theme(&site.theme.css),
        frame: Frame::of(site, "/account/delete"),
        here: "home",
        employer: member.session.member.role.posts_jobs(),
        csrf: member.csrf.clone(),
        email: member.session.member.email.clone(),
        problem,
    };
    Ok(Html::render(&tpl, Some(&site.theme.csp_hash))?)
}

/// `GET /account/delete`: what deleting removes, and the confirmation.
pub async fn confirm_delete(member: Member) -> Result<Response, PageError> {
    Ok(private(delete_page(&member, None).await?))
}

/// `POST /account/delete` (with `confirm`): erases the member and signs out.
pub async fn delete(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let Posted { member, form } = posted;
    if form.get("confirm").is_none() {
        let html = delete_page(
            &member,
            Some("Tick the box to confirm that the account should be deleted."),
        )
        .await?;
        return Ok(private(html.status(StatusCode::UNPROCESSABLE_ENTITY)));
    }
    data::erase(&app.db, member.site.org.id, member.session.member.id).await?;
    let res = message(
        &member.site,
        StatusCode::OK,
        "Your account is deleted",
        vec!["Your account and the records listed are deleted, and you are signed out.".into()],
        ("/", "Back to the jobs"),
    )?;
    Ok(with_cookie(&app, res, None))
}
