//! `GET /jobs/<slug>`: the job page (200 while the job is live, `410 Gone` once it has
//! expired, 404 otherwise), with its structured data. Applying is in [`super::apply`].

use askama::Template;
use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};

use super::{Frame, Kind, cached, format, jsonld, respond};
use crate::{error::PageError, page::Chrome, site::Site};
use jobboard_app::app::AppState;
use jobboard_core::cache::{MAX_AGE_MICROS, Rendered};
use jobboard_domain::analytics::EventType;
use jobboard_domain::{
    JobId, Ts, categories,
    jobs::{self, ApplyMethod, Job, JobStatus},
    links,
};

/// Longer slugs are never made (titles and company names are cut): no lookup needed.
pub(super) const MAX_SLUG: usize = 300;

#[derive(Template)]
#[template(path = "board/job.html")]
struct JobPage {
    chrome: Chrome,
    frame: Frame,
    job: Job,
    jsonld: Option<String>,
    company_site: Option<String>,
    logo: Option<String>,
    job_type: Option<&'static str>,
    salary: Option<String>,
    place: Option<String>,
    remote_from: Option<String>,
    category: Option<String>,
    posted: String,
    posted_iso: String,
    closes: Option<(String, String)>,
    apply_url: Option<String>,
    apply_label: &'static str,
    apply_shown: Option<String>,
    instructions: Option<String>,
    contact: Option<String>,
}

/// The job page.
pub async fn show(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    Path(slug): Path<String>,
) -> Result<Response, PageError> {
    if slug.len() > MAX_SLUG {
        return Err(PageError::not_found());
    }
    let key = format!("/jobs/{slug}");
    let rendered = cached(&app, &site, &key, &headers, || render(&app, &site, &slug)).await?;
    super::visits::note(
        &app,
        &site,
        &headers,
        &[EventType::PageView, EventType::JobView],
        rendered.subject.map(JobId),
    );
    Ok(respond(rendered, &headers, &site, Kind::Html))
}

/// The job of `slug` while it is live; a `410` page once it has expired, a 404 for any
/// other (pending, draft, deleted, unknown, another board's).
pub(super) async fn live_job(
    app: &AppState,
    site: &Site,
    slug: &str,
    now: Ts,
) -> Result<Job, PageError> {
    let job = jobs::get_by_slug(&app.db, site.org.id, slug)
        .await?
        .ok_or_else(PageError::not_found)?;
    if job.is_live(now) {
        return Ok(job);
    }
    match job.status {
        JobStatus::Expired | JobStatus::Active => Err(PageError::new(
            StatusCode::GONE,
            "This job has closed",
            format!(
                "“{}” at {} is no longer taking applications. The jobs open now are on the board’s home page.",
                job.title, job.company_name
            ),
        )),
        JobStatus::Pending | JobStatus::Draft => Err(PageError::not_found()),
    }
}

async fn render(app: &AppState, site: &Site, slug: &str) -> Result<(Rendered, i64), PageError> {
    let now = app.clock.now();
    let job = live_job(app, site, slug, now).await?;
    let job_id = job.id;
    let category = match job.category_id {
        Some(id) => categories::list(&app.db, site.org.id)
            .await?
            .into_iter()
            .find(|c| c.id == id)
            .map(|c| c.name),
        None => None,
    };
    let path = jobs::url_of(&job.slug);
    let url = site.url(&path);
    let valid_through = job.valid_through(now, site.org.listing_days);
    let jsonld = jsonld::job_posting(
        &job,
        &jsonld::Context {
            url: &url,
            board_name: &site.org.name,
            direct_apply: format::hosted(&job),
            valid_through,
        },
    )
    .map(|v| format::script_json(&v));
    let logo = job
        .company_logo_url
        .clone()
        .filter(|u| u.starts_with("https://"));
    let mut frame = Frame::of(site, &path);
    frame.og_type = "article";
    if logo.is_some() {
        frame.image = logo.clone();
    }
    let mut chrome = Chrome::new(format!(
        "{} at {} – {}",
        job.title, job.company_name, site.org.name
    ))
    .with_theme(&site.theme.css);
    let summary = format::excerpt(&job.description_text, 155);
    chrome.description = Some(if summary.is_empty() {
        format!("{} at {}", job.title, job.company_name)
    } else {
        summary
    });
    chrome.canonical = Some(url.clone());
    let format::Applying {
        target,
        link,
        instructions,
    } = format::applying(&job);
    let instructions = instructions.map(str::to_string);
    let apply_label = match (job.how_to_apply_method, target.as_deref()) {
        _ if format::hosted(&job) => "Apply on this board",
        (_, Some(t)) if t.starts_with("mailto:") => "Apply by email",
        (_, Some(t)) if t.starts_with("tel:") => "Apply by phone",
        (Some(ApplyMethod::FormExternal), _) => "Apply with the company’s form",
        _ => "Apply on the company’s site",
    };
    // Where the button goes, said plainly: the address or number, or the host a web
    // link opens (the part of a URL a visitor can trust).
    let apply_shown = target.as_deref().map(|t| {
        if let Some(rest) = t.strip_prefix("mailto:").or_else(|| t.strip_prefix("tel:")) {
            rest.to_string()
        } else if let Some(host) = links::url_host(t) {
            format!("Opens {host}")
        } else {
            t.to_string()
        }
    });
    let contact = job
        .contact_email
        .as_deref()
        .filter(|e| links::is_email(e))
        .map(str::to_string);
    // The page changes when the job expires or its announced validity rolls on.
    let deadline = valid_through.micros().min(now.micros() + MAX_AGE_MICROS);
    let tpl = JobPage {
        chrome,
        frame,
        jsonld,
        company_site: job
            .company_website
            .as_deref()
            .and_then(links::renderable_href),
        logo,
        job_type: job.job_type.map(format::job_type),
        salary: format::salary(&job),
        place: job.place(),
        remote_from: job.remote_from(),
        category,
        posted: format::date(job.created_at),
        posted_iso: format::iso_date(job.created_at),
        closes: job
            .expires_at
            .map(|t| (format::date(t), format::iso_date(t))),
        apply_url: link.then(|| format!("{path}/apply")),
        apply_label,
        apply_shown,
        instructions,
        contact,
        job,
    };
    let body = tpl.render().map_err(|e| PageError::internal(&e))?;
    Ok((Rendered::new(body.into_bytes()).about(job_id.0), deadline))
}
