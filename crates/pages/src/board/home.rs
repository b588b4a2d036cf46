//! `GET /`: the board's live jobs with the filters, order and paging of `GET /api/jobs`,
//! a search form and paging links that need no JavaScript.

use askama::Template;
use axum::{
    extract::{RawQuery, State},
    http::HeaderMap,
    response::Response,
};

use super::{Frame, Kind, cached, format, list_deadline, query::BoardQuery, respond};
use crate::{error::PageError, page::Chrome, site::Site};
use jobboard_app::app::AppState;
use jobboard_core::cache::Rendered;
use jobboard_domain::analytics::EventType;
use jobboard_domain::{
    categories,
    categories::Category,
    jobs::{self, Job, JobType},
};

/// A job as the list shows it.
pub(super) struct Row {
    pub title: String,
    pub url: String,
    pub company: String,
    pub location: Option<String>,
    pub remote: bool,
    pub job_type: Option<&'static str>,
    pub salary: Option<String>,
    pub posted: String,
    pub posted_iso: String,
    pub highlighted: bool,
    pub sticky: bool,
}

impl Row {
    pub fn of(job: &Job) -> Row {
        Row {
            title: job.title.clone(),
            url: jobs::url_of(&job.slug),
            company: job.company_name.clone(),
            location: job.location.clone(),
            remote: job.is_remote,
            job_type: job.job_type.map(format::job_type),
            salary: format::salary(job),
            posted: format::date(job.created_at),
            posted_iso: format::iso_date(job.created_at),
            highlighted: job.is_highlighted,
            sticky: job.is_sticky,
        }
    }
}

#[derive(Template)]
#[template(path = "board/home.html")]
struct HomePage<'a> {
    chrome: Chrome,
    frame: Frame,
    q: &'a BoardQuery,
    heading: String,
    summary: String,
    jobs: Vec<Row>,
    categories: Vec<Category>,
    job_types: Vec<(&'static str, &'static str)>,
    countries: &'static [(&'static str, &'static str)],
    prev: Option<String>,
    next: Option<String>,
    page_label: String,
    /// "Email me these jobs", while the service sends mail.
    alert: Option<super::alerts::AlertForm>,
    email: String,
    frequency: String,
    errors: crate::forms::FieldMessages,
}

/// The board's list.
pub async fn show(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, PageError> {
    let q = BoardQuery::read(raw.as_deref())?;
    let key = format!("/{}", q.canonical());
    let rendered = cached(&app, &site, &key, &headers, || render(&app, &site, &q)).await?;
    super::visits::note(&app, &site, &headers, &[EventType::PageView], None);
    Ok(respond(rendered, &headers, &site, Kind::Html))
}

async fn render(app: &AppState, site: &Site, q: &BoardQuery) -> Result<(Rendered, i64), PageError> {
    let now = app.clock.now();
    let org = site.org.id;
    let page = jobs::list(&app.db, org, &q.list, now).await?;
    let ids: Vec<_> = page.rows.iter().map(|r| r.id).collect();
    let rows: Vec<Row> = jobs::get_many(&app.db, org, &ids)
        .await?
        .iter()
        .map(Row::of)
        .collect();
    let categories = categories::list(&app.db, org).await?;
    let total_pages = page.total_pages(q.list.per_page);
    let n = page.total.items;
    let summary = match n {
        0 => "No jobs match.".to_string(),
        1 => "1 job.".to_string(),
        n => format!("{} jobs.", format::amount(n as f64)),
    };
    let summary = capitalise(&summary);
    let heading = match q.list.search.as_deref() {
        Some(s) => format!("Jobs matching “{s}”"),
        None if q.is_filtered() => "Jobs matching your filters".to_string(),
        None => "Latest jobs".to_string(),
    };
    let p = q.list.page;
    let page_label = if total_pages > 1 || p > 1 {
        format!("Page {p} of {}", total_pages.max(p))
    } else {
        String::new()
    };
    let mut chrome = Chrome::new(if p > 1 {
        format!("{heading} (page {p}) – {}", site.org.name)
    } else {
        format!("{heading} – {}", site.org.name)
    })
    .with_theme(&site.theme.css);
    chrome.description = Some(match &site.org.tagline {
        Some(t) if !q.is_filtered() => t.clone(),
        _ => format!("{heading} on {}. {summary}", site.org.name),
    });
    chrome.canonical = Some(site.url(&format!("/{}", q.canonical())));
    let mut frame = Frame::of(site, &format!("/{}", q.canonical()));
    frame.feed_query = q.filters();
    let tpl = HomePage {
        chrome,
        frame,
        q,
        heading,
        summary,
        jobs: rows,
        categories,
        countries: jobboard_domain::countries::COUNTRIES,
        job_types: JobType::ALL
            .iter()
            .filter_map(|v| JobType::parse(v).map(|t| (*v, format::job_type(t))))
            .collect(),
        prev: (p > 1).then(|| format!("/{}", q.with_page(p - 1))),
        next: (p < total_pages).then(|| format!("/{}", q.with_page(p + 1))),
        page_label,
        alert: super::alerts::form_of(app, site, q).await?,
        email: String::new(),
        frequency: "daily".into(),
        errors: Default::default(),
    };
    let body = tpl.render().map_err(|e| PageError::internal(&e))?;
    Ok((
        Rendered::new(body.into_bytes()),
        list_deadline(app, org, now).await?,
    ))
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
