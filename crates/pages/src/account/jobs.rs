//! An employer's jobs from their account: the list with each job's counts, the post and
//! edit forms (derived from the job model as the board's and the dashboard's are, for the
//! member's door), closing, renewing, and the applications with their CSV. Another
//! member's job is not found.

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    http::StatusCode,
    response::{IntoResponse, Response},
};

use super::{Member, Posted};
use crate::{
    board::Frame,
    dashboard::session::see_other,
    error::PageError,
    fields::values_of,
    forms::{FieldMessages, FormData},
    model_form::{self, Door, Fieldset},
    page::{Chrome, Html, csv_download},
    site::Site,
};
use jobboard_app::app::AppState;
use jobboard_core::text::push_csv_row;
use jobboard_domain::{
    Error, FieldError, JobId,
    accounts::{self, posts},
    categories,
    jobs::Job,
    orgs::MemberPosts,
    payments::{self, credits},
};

struct Row {
    id: String,
    slug: String,
    title: String,
    status: &'static str,
    views: i64,
    clicks: i64,
    applications: i64,
}

#[derive(Template)]
#[template(path = "account/jobs.html")]
struct JobsPage {
    chrome: Chrome,
    frame: Frame,
    here: &'static str,
    employer: bool,
    csrf: String,
    notice: Option<&'static str>,
    rows: Vec<Row>,
    total: i64,
    page: i64,
    pages: i64,
    /// The featured upgrade offered for live jobs: (price id, label).
    feature: Option<(String, String)>,
}

fn chrome(site: &Site, title: &str) -> Chrome {
    Chrome::new(format!("{title} – {}", site.org.name)).with_theme(&site.theme.css)
}

fn page_of(html: Html) -> Response {
    html.cache_control("private, no-store")
        .robots("noindex")
        .into_response()
}

fn job_id(raw: &str) -> Result<JobId, PageError> {
    raw.parse().map_err(|_| PageError::not_found())
}

/// Only employers have jobs here.
fn employer_only(member: &Member) -> Result<(), PageError> {
    if member.session.member.role.posts_jobs() {
        Ok(())
    } else {
        Err(PageError::not_found())
    }
}

/// `GET /account/jobs?page=`
pub async fn list(
    State(app): State<AppState>,
    member: Member,
    RawQuery(raw): RawQuery,
) -> Result<Response, PageError> {
    employer_only(&member)?;
    let params: Vec<(String, String)> =
        serde_urlencoded::from_str(raw.as_deref().unwrap_or("")).unwrap_or_default();
    let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let page = get("page")
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(1)
        .clamp(1, 1_000_000);
    let notice = match get("notice") {
        Some("posted") => Some("Your job was saved."),
        Some("closed") => Some("The job is closed: it is no longer listed."),
        Some("renewed") => Some("The job is renewed."),
        _ => None,
    };
    let site = &member.site;
    let listed = posts::page(&app.db, site.org.id, &member.session.member, page).await?;
    let rows = listed
        .jobs
        .into_iter()
        .map(|o| Row {
            id: o.job.id.to_string(),
            slug: o.job.slug,
            title: o.job.title,
            status: o.job.status.as_str(),
            views: o.counts.views,
            clicks: o.counts.apply_clicks,
            applications: o.counts.applications,
        })
        .collect();
    let offer = payments::offer(&app.db, site.org.id).await?;
    let upgrade = offer.as_ref().and_then(|o| o.featured().next());
    let feature = upgrade.map(|p| {
        (
            p.id.to_string(),
            format!(
                "Feature for {} days ({})",
                p.featured_days.unwrap_or_default(),
                p.display()
            ),
        )
    });
    let origin = match (&offer, upgrade) {
        (Some(o), Some(_)) => o.account.checkout_origin(),
        _ => String::new(),
    };
    let tpl = JobsPage {
        feature,
        chrome: chrome(site, "Your jobs"),
        frame: Frame::of(site, "/account/jobs"),
        here: "jobs",
        employer: true,
        csrf: member.csrf.clone(),
        notice,
        rows,
        total: listed.total,
        page,
        pages: (listed.total + posts::PAGE - 1) / posts::PAGE,
    };
    Ok(page_of(
        Html::render(&tpl, Some(&site.theme.csp_hash))?.allow_form_action(&origin),
    ))
}

#[derive(Template)]
#[template(path = "account/job_form.html")]
struct FormPage {
    chrome: Chrome,
    frame: Frame,
    here: &'static str,
    employer: bool,
    csrf: String,
    heading: &'static str,
    action: String,
    submit: &'static str,
    moderation: &'static str,
    refusal: Option<&'static str>,
    groups: Vec<Fieldset>,
    problems: Vec<(String, String)>,
    notice: Option<String>,
    /// Where the board sells posts: the member's job posts left (a post then uses one).
    credits: Option<i64>,
    /// The prices to choose from when the member has no posts left: (id, label, chosen).
    prices: Vec<(String, String, bool)>,
    price_error: Option<String>,
}

/// What a new post costs the member here: its credits left and, when it has none, the
/// prices; `None` where the board sells no posts. With the origin of the checkout.
async fn sale(
    app: &AppState,
    member: &Member,
    chosen: Option<&str>,
) -> Result<(Option<i64>, Vec<(String, String, bool)>, String), PageError> {
    let site = &member.site;
    let Some(offer) = payments::offer(&app.db, site.org.id).await? else {
        return Ok((None, Vec::new(), String::new()));
    };
    let left = credits::left(&app.db, &site.org, &member.session.member).await?;
    if left > 0 {
        return Ok((Some(left), Vec::new(), String::new()));
    }
    Ok((
        Some(0),
        crate::board::checkout::price_choices(&offer.prices, chosen),
        offer.account.checkout_origin(),
    ))
}

/// The post or edit form holding `values`, with `errors` beside their fields.
async fn form_page(
    app: &AppState,
    member: &Member,
    editing: Option<JobId>,
    values: &std::collections::HashMap<String, String>,
    errors: Vec<FieldError>,
) -> Result<Html, PageError> {
    let site = &member.site;
    let categories = categories::list(&app.db, site.org.id).await?;
    let (heading, action, submit) = match editing {
        Some(id) => (
            "Edit your job",
            format!("/account/jobs/{id}/edit"),
            "Save the job",
        ),
        None => (
            "Post a job",
            "/account/jobs/new".to_string(),
            "Post the job",
        ),
    };
    let moderation = match site.org.member_posts {
        MemberPosts::Pending => {
            "Jobs are checked before they are listed, and again after each change."
        }
        MemberPosts::Active => "Your jobs are listed as soon as you save them.",
    };
    let n = errors.len();
    let (credits, prices, origin) = if editing.is_none() {
        sale(app, member, values.get("price_id").map(String::as_str)).await?
    } else {
        (None, Vec::new(), String::new())
    };
    let price_error = errors
        .iter()
        .find(|e| e.field == "price_id")
        .map(|e| e.message.clone());
    let submit = if prices.is_empty() {
        submit
    } else {
        "Continue to payment"
    };
    let tpl = FormPage {
        chrome: chrome(site, heading),
        frame: Frame::of(site, &action),
        here: if editing.is_some() { "jobs" } else { "new" },
        employer: true,
        csrf: member.csrf.clone(),
        heading,
        submit,
        moderation,
        refusal: accounts::may_post(&member.session.member).err(),
        groups: model_form::fieldsets(
            &Job::form_fields(),
            Door::Member,
            &categories,
            values,
            &FieldMessages::of(&errors),
        )
        .0,
        problems: errors
            .iter()
            .map(|e| (e.field.clone(), e.message.clone()))
            .collect(),
        notice: match n {
            0 => None,
            1 => Some("One field needs a correction before the job can be saved.".into()),
            n => Some(format!(
                "{n} fields need a correction before the job can be saved."
            )),
        },
        action,
        credits,
        prices,
        price_error,
    };
    Ok(Html::render(&tpl, Some(&site.theme.csp_hash))?
        .allow_form_action(&origin)
        .cache_control("private, no-store")
        .robots("noindex"))
}

/// What a refused save answers: the form again with the problems, or the error.
async fn refused(
    app: &AppState,
    member: &Member,
    editing: Option<JobId>,
    form: &FormData,
    e: Error,
) -> Result<Response, PageError> {
    match e {
        Error::Invalid(errors) => {
            let html = form_page(app, member, editing, &values_of(form), errors).await?;
            Ok(page_of(html.status(StatusCode::UNPROCESSABLE_ENTITY)))
        }
        Error::Conflict { .. } => {
            let html = form_page(app, member, editing, &values_of(form), Vec::new()).await?;
            Ok(page_of(html.status(StatusCode::CONFLICT)))
        }
        e => Err(e.into()),
    }
}

/// `GET /account/jobs/new`
pub async fn new_form(State(app): State<AppState>, member: Member) -> Result<Response, PageError> {
    employer_only(&member)?;
    let html = form_page(&app, &member, None, &Default::default(), Vec::new()).await?;
    Ok(page_of(html))
}

/// `POST /account/jobs/new`
pub async fn create(State(app): State<AppState>, posted: Posted) -> Result<Response, PageError> {
    let Posted { member, form } = posted;
    employer_only(&member)?;
    let body = model_form::body_of(&Job::form_fields(), Door::Member, &form);
    let (org, m) = (&member.site.org, &member.session.member);
    if let Some(offer) = payments::offer(&app.db, org.id).await? {
        // Where the board sells posts: a credit, else a checkout.
        if let Err(why) = accounts::may_post(m) {
            return refused(
                &app,
                &member,
                None,
                &form,
                Error::conflict(why, serde_json::json!({})),
            )
            .await;
        }
        let again = model_form::body_of(&Job::form_fields(), Door::Member, &form);
        match credits::post(&app.db, org, m, again).await {
            Ok(Some(job)) => {
                tracing::info!(job_id = %job.id, member_id = %m.id, "job posted by a member with a credit");
                return Ok(see_other("/account/jobs?notice=posted"));
            }
            Ok(None) => {}
            Err(e) => return refused(&app, &member, None, &form, e).await,
        }
        let price = form
            .get("price_id")
            .and_then(|v| v.parse::<uuid::Uuid>().ok());
        return match payments::start_post(&app.db, org, price, body, Some(m)).await {
            Ok((job, order, price)) => {
                let site = &member.site;
                crate::board::checkout::open(
                    &app,
                    site,
                    &offer.account,
                    &order,
                    jobboard_delivery::processor::Line::Priced {
                        price: &price,
                        title: &job.title,
                    },
                )
                .await
            }
            Err(e) => refused(&app, &member, None, &form, e).await,
        };
    }
    match posts::create(&app.db, org, m, body).await {
        Ok(job) => {
            tracing::info!(job_id = %job.id, member_id = %member.session.member.id, "job posted by a member");
            Ok(see_other("/account/jobs?notice=posted"))
        }
        Err(e) => refused(&app, &member, None, &form, e).await,
    }
}

/// `GET /account/jobs/{id}/edit`
pub async fn edit_form(
    State(app): State<AppState>,
    member: Member,
    Path(raw): Path<String>,
) -> Result<Response, PageError> {
    employer_only(&member)?;
    let id = job_id(&raw)?;
    let job = posts::owned(&app.db, member.site.org.id, &member.session.member, id).await?;
    let values: std::collections::HashMap<String, String> = job
        .form_values()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let html = form_page(&app, &member, Some(id), &values, Vec::new()).await?;
    Ok(page_of(html))
}

/// `POST /account/jobs/{id}/edit`
pub async fn update(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let Posted { member, form } = posted;
    employer_only(&member)?;
    let id = job_id(&raw)?;
    let body = model_form::body_of(&Job::form_fields(), Door::Member, &form);
    match posts::edit(&app.db, &member.site.org, &member.session.member, id, body).await {
        Ok(_) => Ok(see_other("/account/jobs?notice=posted")),
        Err(e) => refused(&app, &member, Some(id), &form, e).await,
    }
}

/// `POST /account/jobs/{id}/close`
pub async fn close(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let m = &posted.member;
    employer_only(m)?;
    posts::close(&app.db, m.site.org.id, &m.session.member, job_id(&raw)?).await?;
    Ok(see_other("/account/jobs?notice=closed"))
}

/// `POST /account/jobs/{id}/renew`
pub async fn renew(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let m = &posted.member;
    employer_only(m)?;
    match posts::renew(&app.db, &m.site.org, &m.session.member, job_id(&raw)?).await {
        Ok(_) => Ok(see_other("/account/jobs?notice=renewed")),
        Err(Error::Conflict { message, .. }) => Err(PageError::new(
            StatusCode::CONFLICT,
            "The job cannot be renewed",
            message,
        )),
        Err(e) => Err(e.into()),
    }
}

struct AppRow {
    when: String,
    name: String,
    email: String,
    resume: Option<String>,
    cover: String,
}

#[derive(Template)]
#[template(path = "account/applications.html")]
struct ApplicationsPage {
    chrome: Chrome,
    frame: Frame,
    here: &'static str,
    employer: bool,
    csrf: String,
    id: String,
    title: String,
    rows: Vec<AppRow>,
}

/// `GET /account/jobs/{id}/applications`
pub async fn applications(
    State(app): State<AppState>,
    member: Member,
    Path(raw): Path<String>,
) -> Result<Response, PageError> {
    employer_only(&member)?;
    let id = job_id(&raw)?;
    let site = &member.site;
    let (job, rows) = posts::applications(&app.db, site.org.id, &member.session.member, id).await?;
    let tpl = ApplicationsPage {
        chrome: chrome(site, &format!("Applications: {}", job.title)),
        frame: Frame::of(site, &format!("/account/jobs/{id}/applications")),
        here: "jobs",
        employer: true,
        csrf: member.csrf.clone(),
        id: id.to_string(),
        title: job.title,
        rows: rows
            .into_iter()
            .map(|a| AppRow {
                when: a.created_at.to_string(),
                name: a.name,
                email: a.email,
                resume: a.resume_url,
                cover: a.cover_letter.unwrap_or_default(),
            })
            .collect(),
    };
    Ok(page_of(Html::render(&tpl, Some(&site.theme.csp_hash))?))
}

/// `GET /account/jobs/{id}/applications.csv`
pub async fn applications_csv(
    State(app): State<AppState>,
    member: Member,
    Path(raw): Path<String>,
) -> Result<Response, PageError> {
    employer_only(&member)?;
    let id = job_id(&raw)?;
    let (_, rows) =
        posts::applications(&app.db, member.site.org.id, &member.session.member, id).await?;
    let mut csv = String::from("id,created_at,name,email,resume_url,cover_letter,status\r\n");
    for a in rows {
        let cells = [
            a.id.to_string(),
            a.created_at.to_string(),
            a.name,
            a.email,
            a.resume_url.unwrap_or_default(),
            a.cover_letter.unwrap_or_default(),
            a.status.as_str().to_string(),
        ];
        push_csv_row(&mut csv, &cells);
    }
    Ok(csv_download(
        csv,
        &format!("applications-{id}.csv"),
        "private, no-store",
    ))
}

/// `POST /account/jobs/{id}/feature` (`price_id`): the featured upgrade of a live job,
/// paid through the same checkout as a post.
pub async fn feature(
    State(app): State<AppState>,
    Path(raw): Path<String>,
    posted: Posted,
) -> Result<Response, PageError> {
    let Posted { member, form } = posted;
    employer_only(&member)?;
    let id = job_id(&raw)?;
    let price = form
        .get("price_id")
        .and_then(|v| v.parse::<uuid::Uuid>().ok())
        .ok_or_else(|| PageError::bad_request("Choose a featured upgrade."))?;
    match payments::start_feature(&app.db, &member.site.org, &member.session.member, id, price)
        .await
    {
        Ok((job, order, price)) => {
            let account = crate::board::checkout::account_of(&app, &member.site).await?;
            crate::board::checkout::open(
                &app,
                &member.site,
                &account,
                &order,
                jobboard_delivery::processor::Line::Priced {
                    price: &price,
                    title: &job.title,
                },
            )
            .await
        }
        Err(Error::Conflict { message, .. }) => Err(PageError::new(
            StatusCode::CONFLICT,
            "The job cannot be featured",
            message,
        )),
        Err(e) => Err(e.into()),
    }
}
