//! `GET /sitemap.xml`, `GET /sitemaps/jobs-<n>.xml` and `GET /robots.txt`.
//!
//! The sitemap lists the live jobs with their `lastmod`. Up to 50,000 jobs (the
//! protocol's limit per file) it is one file; beyond, `/sitemap.xml` is a sitemap index
//! of parts of 50,000 jobs each. A file is streamed ([`super::stream`]).

use axum::{
    body::Body,
    extract::{Path, State},
    http::HeaderMap,
    response::Response,
};

use super::{
    Kind,
    format::xml,
    respond,
    stream::{self, Out},
};
use crate::{error::PageError, site::Site};
use jobboard_app::app::AppState;
use jobboard_core::cache::Rendered;
use jobboard_domain::{
    Ts,
    jobs::{self, LiveJob, Start},
};

/// Jobs per sitemap file.
pub const PER_FILE: i64 = 50_000;
/// Jobs read per statement while streaming.
const BATCH: i64 = 1_000;

const URLSET_OPEN: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
const URLSET_CLOSE: &str = "</urlset>\n";

/// `/sitemap.xml`: the jobs, or the index of the parts.
pub async fn sitemap(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
) -> Result<Response, PageError> {
    let now = app.clock.now();
    let live = jobs::count_live(&app.db, site.org.id, now).await?;
    if live <= PER_FILE {
        return streamed(&app, &site, &headers, 0, now).await;
    }
    let parts = (live + PER_FILE - 1) / PER_FILE;
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for n in 1..=parts {
        s.push_str(&format!(
            "<sitemap><loc>{}</loc></sitemap>\n",
            xml(&site.url(&format!("/sitemaps/jobs-{n}.xml")))
        ));
    }
    s.push_str("</sitemapindex>\n");
    Ok(respond(
        Rendered::new(s.into_bytes()),
        &headers,
        &site,
        Kind::Xml,
    ))
}

/// `/sitemaps/jobs-<n>.xml`: the n-th 50,000 live jobs, in list order.
pub async fn part(
    State(app): State<AppState>,
    site: Site,
    headers: HeaderMap,
    Path(file): Path<String>,
) -> Result<Response, PageError> {
    let n: i64 = file
        .strip_prefix("jobs-")
        .and_then(|f| f.strip_suffix(".xml"))
        .filter(|d| !d.is_empty() && d.len() <= 6 && d.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|d| d.parse().ok())
        .filter(|n| *n >= 1)
        .ok_or_else(PageError::not_found)?;
    let now = app.clock.now();
    let live = jobs::count_live(&app.db, site.org.id, now).await?;
    if (n - 1) * PER_FILE >= live.max(1) {
        return Err(PageError::not_found());
    }
    streamed(&app, &site, &headers, n, now).await
}

/// A streamed urlset of the live jobs of part `n` (0: all of them, when they fit one
/// file), with its `ETag` (see [`stream`]).
async fn streamed(
    app: &AppState,
    site: &Site,
    headers: &HeaderMap,
    n: i64,
    now: Ts,
) -> Result<Response, PageError> {
    let next_expiry = jobs::next_expiry(&app.db, site.org.id, now).await?;
    let etag = stream::etag(site, next_expiry, &n.to_string());
    let skip = (n - 1).max(0) * PER_FILE;
    Ok(stream::response(
        headers,
        &etag,
        "application/xml; charset=utf-8",
        || urlset(app.clone(), site.clone(), skip, now),
    ))
}

/// The body: the urlset of up to [`PER_FILE`] live jobs after the first `skip`.
fn urlset(app: AppState, site: Site, skip: i64, now: Ts) -> Body {
    let (mut out, body) = Out::channel();
    tokio::spawn(async move {
        out.buf().push_str(URLSET_OPEN);
        let mut last: Option<LiveJob> = None;
        let mut written = 0;
        while written < PER_FILE {
            let want = BATCH.min(PER_FILE - written);
            let start = match &last {
                None => Start::Skip(skip),
                Some(l) => Start::After(l.key()),
            };
            let rows = match jobs::live_batch(&app.db, site.org.id, now, start, want).await {
                Ok(rows) => rows,
                Err(e) => {
                    tracing::warn!(error = ?e, org_id = site.org.id.0, "sitemap stopped");
                    out.abort("the sitemap could not be read");
                    return;
                }
            };
            for r in &rows {
                let buf = out.buf();
                buf.push_str("<url><loc>");
                buf.push_str(&xml(&site.url(&jobs::url_of(&r.slug))));
                buf.push_str("</loc><lastmod>");
                buf.push_str(&r.updated_at.to_rfc3339());
                buf.push_str("</lastmod></url>\n");
                if !out.flush().await {
                    return;
                }
            }
            written += rows.len() as i64;
            let full = rows.len() as i64 == want;
            last = rows.into_iter().last();
            if !full {
                break;
            }
        }
        out.buf().push_str(URLSET_CLOSE);
        out.finish().await;
    });
    body
}

/// `/robots.txt`: everything may be crawled but the forms and the API; names the sitemap.
pub async fn robots(site: Site, headers: HeaderMap) -> Response {
    let body = format!(
        "User-agent: *\nDisallow: /api/\nDisallow: /post-a-job\nDisallow: /jobs/*/apply\nDisallow: /dashboard/\n\nSitemap: {}\n",
        site.url("/sitemap.xml")
    );
    respond(
        Rendered::new(body.into_bytes()),
        &headers,
        &site,
        Kind::Text,
    )
}
