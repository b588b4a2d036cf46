//! `/jobs/<slug>/apply`. For a job whose `how_to_apply_method` is `form` (or not set, with
//! no link or address to apply at), the board hosts the application form: `GET` shows it,
//! `POST` creates the application with the operation `POST /api/jobs/{id}/applications`
//! calls (same validation, each problem beside its field, `application.received`). For
//! any other job `GET` answers `303` to the job's own apply target (its website, external
//! form, `mailto:` or `tel:` link; never any other address).

use askama::Template;
use axum::{
    extract::{Path, RawQuery, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Redirect, Response},
};

use super::{
    Frame, format,
    gate::{self, Screened},
    job::{MAX_SLUG, live_job},
};
use crate::{
    error::PageError,
    forms::{FieldMessages, FormData, FormValue},
    page::{Chrome, Html},
    site::Site,
};
use jobboard_app::app::AppState;
use jobboard_domain::{
    Error, FieldError,
    analytics::EventType,
    applications,
    jobs::{self, Job},
};

/// The fields of the form, named as `POST /api/jobs/{id}/applications` names them.
const FIELDS: &[(&str, FormValue)] = &[
    ("name", FormValue::Text),
    ("email", FormValue::Text),
    ("resume_url", FormValue::Text),
    ("cover_letter", FormValue::Text),
];

#[derive(Template)]
#[template(path = "board/apply.html")]
struct ApplyPage {
    chrome: Chrome,
    frame: Frame,
    job: Job,
    job_path: String,
    fields: Vec<Field>,
    problems: Vec<(String, String)>,
    notice: Option<String>,
    sent: bool,
    token: String,
}

/// One field as shown.
struct Field {
    name: &'static str,
    label: &'static str,
    /// `text`, `email`, `url` or `textarea`.
    control: &'static str,
    autocomplete: &'static str,
    hint: &'static str,
    required: bool,
    value: String,
    error: Option<String>,
}

fn fields(form: &FormData, errors: &FieldMessages) -> Vec<Field> {
    [
        ("name", "Your name", "text", "name", "", true),
        ("email", "Your email address", "email", "email", "", true),
        (
            "resume_url",
            "Link to your CV",
            "url",
            "url",
            "An address starting with https://, e.g. of a PDF or a profile page.",
            false,
        ),
        (
            "cover_letter",
            "Cover letter",
            "textarea",
            "off",
            "Why you, in your own words.",
            false,
        ),
    ]
    .into_iter()
    .map(
        |(name, label, control, autocomplete, hint, required)| Field {
            name,
            label,
            control,
            autocomplete,
            hint,
            required,
            value: form.get(name).unwrap_or("").to_string(),
            error: errors.get(name).map(str::to_string),
        },
    )
    .collect()
}

/// The form of one job: its token is bound to the board and the job.
fn binding(site: &Site, job: &Job) -> String {
    format!("board:{}:apply:{}", site.org.id, job.id)
}

async fn page(
    app: &AppState,
    site: &Site,
    job: Job,
    form: FormData,
    errors: Vec<FieldError>,
    notice: Option<String>,
    sent: bool,
) -> Result<Html, PageError> {
    let token = gate::token(app, &binding(site, &job)).await?;
    let job_path = jobs::url_of(&job.slug);
    let mut chrome = Chrome::new(format!(
        "Apply: {} at {} – {}",
        job.title, job.company_name, site.org.name
    ))
    .with_theme(&site.theme.css);
    chrome.description = Some(format!("Apply for {} at {}.", job.title, job.company_name));
    chrome.canonical = Some(site.url(&format!("{job_path}/apply")));
    let tpl = ApplyPage {
        chrome,
        frame: Frame::of(site, &format!("{job_path}/apply")),
        fields: fields(&form, &FieldMessages::of(&errors)),
        problems: errors
            .iter()
            .map(|e| (e.field.clone(), e.message.clone()))
            .collect(),
        notice,
        sent,
        token,
        job_path,
        job,
    };
    Ok(Html::render(&tpl, Some(&site.theme.csp_hash))?
        .cache_control("private, no-store")
        .robots("noindex"))
}

/// `GET /jobs/<slug>/apply`: the hosted form (or its confirmation), or the redirect to
/// the job's own target. Not cached anywhere: each request is a visitor's.
pub async fn show(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    Path(slug): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Response, PageError> {
    if slug.len() > MAX_SLUG {
        return Err(PageError::not_found());
    }
    let job = live_job(&app, &site, &slug, app.clock.now()).await?;
    let sent = raw.as_deref() == Some("sent=1");
    if !sent {
        super::visits::note(
            &app,
            &site,
            &headers,
            &[EventType::ApplyClick],
            Some(job.id),
        );
    }
    if format::hosted(&job) {
        return Ok(page(
            &app,
            &site,
            job,
            FormData::default(),
            Vec::new(),
            None,
            sent,
        )
        .await?
        .into_response());
    }
    let Some(target) = format::apply_target(&job) else {
        return Err(PageError::not_found());
    };
    let Ok(location) = HeaderValue::from_str(&format::location_header(&target)) else {
        return Err(PageError::not_found());
    };
    let mut res = StatusCode::SEE_OTHER.into_response();
    let h = res.headers_mut();
    h.insert(header::LOCATION, location);
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("x-robots-tag", HeaderValue::from_static("noindex"));
    Ok(res)
}

/// `POST /jobs/<slug>/apply`: an application through the hosted form.
pub async fn submit(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    Path(slug): Path<String>,
    form: FormData,
) -> Result<Response, PageError> {
    if slug.len() > MAX_SLUG {
        return Err(PageError::not_found());
    }
    let job = live_job(&app, &site, &slug, app.clock.now()).await?;
    if !format::hosted(&job) {
        return Err(PageError::not_found());
    }
    let unsent = "the application was not sent";
    match gate::screen(&app, &site, &headers, &form, &binding(&site, &job), unsent).await? {
        Screened::Passed => {}
        Screened::BadToken => {
            let notice = "The form had expired or did not come from this page, so the application was not sent. What you typed is kept below: please check it and send it again.".to_string();
            let html = page(&app, &site, job, form, Vec::new(), Some(notice), false).await?;
            return Ok(html.status(StatusCode::FORBIDDEN).into_response());
        }
        Screened::Refused(res) => return Ok(res),
    }
    let body = form.to_input(FIELDS);
    match applications::create(&app.db, site.org.id, job.id, body).await {
        Ok(_) => {
            Ok(Redirect::to(&format!("{}/apply?sent=1", jobs::url_of(&job.slug))).into_response())
        }
        Err(Error::Invalid(errors)) => {
            let n = errors.len();
            let notice = if n == 1 {
                "One field needs a correction before the application can be sent.".to_string()
            } else {
                format!("{n} fields need a correction before the application can be sent.")
            };
            let html = page(&app, &site, job, form, errors, Some(notice), false).await?;
            Ok(html
                .status(StatusCode::UNPROCESSABLE_ENTITY)
                .into_response())
        }
        Err(e) => Err(e.into()),
    }
}
