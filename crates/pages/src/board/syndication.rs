//! Feeds for aggregators and partners, each of every live job of the board, streamed
//! ([`super::stream`]) and answered `304` until the board changes:
//!
//! - `GET /feeds/indeed.xml`: the Indeed XML format (`<source>` with `publisher`,
//!   `publisherurl`, `lastBuildDate` and one `<job>` per live job, its text in CDATA);
//! - `GET /feeds/jobs.json`: every public field of every live job, for partners.
//!
//! docs/distribution.md has each field's source.

use std::collections::HashMap;

use axum::{body::Body, extract::State, http::HeaderMap, response::Response};
use serde::Serialize;

use super::{
    format,
    stream::{self, Out},
};
use crate::{error::PageError, site::Site};
use jobboard_app::app::AppState;
use jobboard_domain::{
    CategoryId, Countries, JobId, Ts, categories,
    jobs::{self, ApplyMethod, Job, JobType, SalaryPeriod, Start},
};

/// Jobs read per statement while streaming.
const BATCH: i64 = 500;

/// `/feeds/indeed.xml`.
pub async fn indeed(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
) -> Result<Response, PageError> {
    serve(app, site, &headers, Format::Indeed).await
}

/// `/feeds/jobs.json`.
pub async fn jobs_json(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
) -> Result<Response, PageError> {
    serve(app, site, &headers, Format::Partners).await
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Indeed,
    Partners,
}

async fn serve(
    app: AppState,
    site: Site,
    headers: &HeaderMap,
    format: Format,
) -> Result<Response, PageError> {
    let now = app.clock.now();
    let next_expiry = jobs::next_expiry(&app.db, site.org.id, now).await?;
    let (name, content_type) = match format {
        Format::Indeed => ("indeed.xml", "application/xml; charset=utf-8"),
        Format::Partners => ("jobs.json", "application/json; charset=utf-8"),
    };
    let etag = stream::etag(&site, next_expiry, name);
    // Category names are read once, before the body starts.
    let names: HashMap<CategoryId, String> = match format {
        Format::Partners => categories::list(&app.db, site.org.id)
            .await?
            .into_iter()
            .map(|c| (c.id, c.name))
            .collect(),
        Format::Indeed => HashMap::new(),
    };
    Ok(stream::response(headers, &etag, content_type, || {
        body(app, site, now, format, names)
    }))
}

/// The body: the head, each live job in list order, the tail.
fn body(
    app: AppState,
    site: Site,
    now: Ts,
    format: Format,
    names: HashMap<CategoryId, String>,
) -> Body {
    let (mut out, body) = Out::channel();
    tokio::spawn(async move {
        let head = match format {
            Format::Indeed => indeed_head(&site, now),
            Format::Partners => partners_head(&site, now),
        };
        out.buf().push_str(&head);
        let mut start = Start::Skip(0);
        let mut first = true;
        loop {
            let rows = match jobs::live_jobs(&app.db, site.org.id, now, start, BATCH).await {
                Ok(rows) => rows,
                Err(e) => {
                    tracing::warn!(error = ?e, org_id = site.org.id.0, "feed stopped");
                    out.abort("the feed could not be read");
                    return;
                }
            };
            for job in &rows {
                match format {
                    Format::Indeed => indeed_job(out.buf(), &site, job),
                    Format::Partners => {
                        if !first {
                            out.buf().push(',');
                        }
                        let entry = partner_job(&site, job, now, &names);
                        match serde_json::to_string(&entry) {
                            Ok(s) => out.buf().push_str(&s),
                            Err(_) => {
                                out.abort("a job could not be written");
                                return;
                            }
                        }
                    }
                }
                first = false;
                if !out.flush().await {
                    return;
                }
            }
            match rows.last() {
                Some(last) if rows.len() as i64 == BATCH => start = Start::After(last.list_key()),
                _ => break,
            }
        }
        out.buf().push_str(match format {
            Format::Indeed => "</source>\n",
            Format::Partners => "]}\n",
        });
        out.finish().await;
    });
    body
}

/// Text as a CDATA section: characters XML cannot carry removed, and `]]>` split across
/// two sections so the text cannot end its own.
fn cdata(s: &str) -> String {
    let clean = format::xml_chars(s);
    format!("<![CDATA[{}]]>", clean.replace("]]>", "]]]]><![CDATA[>"))
}

fn indeed_head(site: &Site, now: Ts) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<source>\n<publisher>{}</publisher>\n\
         <publisherurl>{}</publisherurl>\n<lastBuildDate>{}</lastBuildDate>\n",
        format::xml(&site.org.name),
        format::xml(&site.url("/")),
        format::rfc2822(now)
    )
}

/// Indeed's `jobtype` of a job type (casual work, paid by the shift, is part-time).
fn indeed_job_type(t: JobType) -> &'static str {
    match t {
        JobType::FullTime => "fulltime",
        JobType::PartTime | JobType::Casual => "parttime",
        JobType::Contract => "contract",
        JobType::Internship => "internship",
        JobType::Temporary => "temporary",
    }
}

/// One `<job>`: every element the job has a value for.
fn indeed_job(buf: &mut String, site: &Site, job: &Job) {
    buf.push_str("<job>");
    let mut el = |name: &str, value: Option<&str>| {
        if let Some(v) = value.filter(|v| !v.trim().is_empty()) {
            buf.push_str(&format!("<{name}>{}</{name}>", cdata(v)));
        }
    };
    el("title", Some(&job.title));
    el("date", Some(&format::rfc2822(job.created_at)));
    el("referencenumber", Some(&job.id.to_string()));
    el("url", Some(&site.url(&jobs::url_of(&job.slug))));
    el("company", Some(&job.company_name));
    el("city", job.city.as_deref().or(job.location.as_deref()));
    el("state", job.region.as_deref());
    el("country", job.country.as_deref());
    el("postalcode", job.postal_code.as_deref());
    el("description", Some(&job.description));
    el("salary", format::salary(job).as_deref());
    el("jobtype", job.job_type.map(indeed_job_type));
    el(
        "expirationdate",
        job.expires_at.map(format::rfc2822).as_deref(),
    );
    el("remotetype", job.is_remote.then_some("Fully remote"));
    buf.push_str("</job>\n");
}

fn partners_head(site: &Site, now: Ts) -> String {
    let head = serde_json::json!({
        "version": 1,
        "title": site.org.name,
        "home_page_url": site.url("/"),
        "feed_url": site.url("/feeds/jobs.json"),
        "generated_at": now,
    })
    .to_string();
    // The object, left open for its `jobs`.
    format!("{},\"jobs\":[", head.trim_end_matches('}'))
}

/// A live job as partners read it: every public field (what the job page shows), with
/// absolute links.
#[derive(Serialize)]
struct PartnerJob<'a> {
    id: JobId,
    url: String,
    title: &'a str,
    /// HTML, sanitised.
    description: &'a str,
    company_name: &'a str,
    company_website: Option<&'a str>,
    company_logo_url: Option<&'a str>,
    job_type: Option<JobType>,
    category: Option<&'a str>,
    location: Option<&'a str>,
    location_restricted: bool,
    country: Option<&'a str>,
    region: Option<&'a str>,
    city: Option<&'a str>,
    postal_code: Option<&'a str>,
    is_remote: bool,
    remote_countries: Option<&'a Countries>,
    salary_min: Option<f64>,
    salary_max: Option<f64>,
    salary_currency: Option<&'a str>,
    salary_period: Option<SalaryPeriod>,
    /// Where candidates apply: the board's apply link (it sends them on, or is the
    /// board's own form).
    apply_url: Option<String>,
    how_to_apply_method: Option<ApplyMethod>,
    /// Instructions, when the job names no address to apply at (as its page shows them).
    how_to_apply: Option<&'a str>,
    contact_email: Option<&'a str>,
    featured: bool,
    created_at: Ts,
    updated_at: Ts,
    expires_at: Option<Ts>,
    valid_through: Ts,
}

fn partner_job<'a>(
    site: &Site,
    job: &'a Job,
    now: Ts,
    names: &'a HashMap<CategoryId, String>,
) -> PartnerJob<'a> {
    let path = jobs::url_of(&job.slug);
    let applying = format::applying(job);
    PartnerJob {
        id: job.id,
        url: site.url(&path),
        title: &job.title,
        description: &job.description,
        company_name: &job.company_name,
        company_website: job.company_website.as_deref(),
        company_logo_url: job.company_logo_url.as_deref(),
        job_type: job.job_type,
        category: job
            .category_id
            .and_then(|c| names.get(&c))
            .map(String::as_str),
        location: job.location.as_deref(),
        location_restricted: job.location_restricted,
        country: job.country.as_deref(),
        region: job.region.as_deref(),
        city: job.city.as_deref(),
        postal_code: job.postal_code.as_deref(),
        is_remote: job.is_remote,
        remote_countries: job.remote_countries.as_ref(),
        salary_min: job.salary_min,
        salary_max: job.salary_max,
        salary_currency: job.salary_currency.as_deref(),
        salary_period: job.salary_period,
        apply_url: applying.link.then(|| site.url(&format!("{path}/apply"))),
        how_to_apply_method: job.how_to_apply_method,
        how_to_apply: applying.instructions,
        contact_email: job.contact_email.as_deref(),
        featured: job.is_sticky,
        created_at: job.created_at,
        updated_at: job.updated_at,
        expires_at: job.expires_at,
        valid_through: job.valid_through(now, site.org.listing_days),
    }
}
