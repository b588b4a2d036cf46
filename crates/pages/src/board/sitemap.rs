//! `GET /sitemap.xml`, `GET /sitemaps/jobs-<n>.xml` and `GET /robots.txt`.
//!
//! The sitemap lists the live jobs with their `lastmod`. Up to 50,000 jobs (the
//! protocol's limit per file) it is one file; beyond, `/sitemap.xml` is a sitemap index
//! of parts of 50,000 jobs each. A file is streamed while it is read from the database in
//! short batches, so its size never sits in memory and no read transaction stays open
//! while a slow crawler reads.

use axum::{
    body::{Body, Bytes},
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use http_body_util::channel::Channel;
use sha2::{Digest, Sha256};

use super::{Kind, PUBLIC_CACHE, format::xml, respond};
use crate::{error::PageError, site::Site};
use jobboard_app::app::AppState;
use jobboard_core::cache::{Rendered, none_match};
use jobboard_domain::{
    Ts,
    jobs::{self, LiveJob, Start},
};

/// Jobs per sitemap file.
pub const PER_FILE: i64 = 50_000;
/// Jobs read per statement while streaming.
const BATCH: i64 = 1_000;
/// Bytes gathered before they are handed to the connection.
const CHUNK: usize = 32 * 1024;

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
/// file). Its `ETag` is known before the rows are read: the body is a function of the
/// board's version (every write), the next expiry (the only change without a write), the
/// origin and the part.
async fn streamed(
    app: &AppState,
    site: &Site,
    headers: &HeaderMap,
    n: i64,
    now: Ts,
) -> Result<Response, PageError> {
    let next_expiry = jobs::next_expiry(&app.db, site.org.id, now).await?;
    let mut h = Sha256::new();
    h.update(
        format!(
            "{}|{}|{}|{:?}|{n}",
            site.origin,
            site.org.id,
            site.version,
            next_expiry.map(|t| t.micros())
        )
        .as_bytes(),
    );
    let etag = format!("W/\"{}\"", hex::encode(&h.finalize()[..16]));
    let matched = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| none_match(v, &etag));
    let mut res = if matched {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let skip = (n - 1).max(0) * PER_FILE;
        let mut r = Response::new(stream(app.clone(), site.clone(), skip, now));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/xml; charset=utf-8"),
        );
        r
    };
    let h = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(PUBLIC_CACHE),
    );
    Ok(res)
}

/// The body: a task reads batches of jobs and hands the XML over in chunks; a full
/// channel (a slow reader) pauses it, a closed one (the reader left) stops it.
fn stream(app: AppState, site: Site, skip: i64, now: Ts) -> Body {
    let (mut tx, body) = Channel::<Bytes, std::io::Error>::new(4);
    tokio::spawn(async move {
        let mut buf = String::with_capacity(CHUNK + 1024);
        buf.push_str(URLSET_OPEN);
        let mut last: Option<LiveJob> = None;
        let mut written = 0;
        while written < PER_FILE {
            let want = BATCH.min(PER_FILE - written);
            let start = match &last {
                None => Start::Skip(skip),
                Some(l) => Start::After(l),
            };
            let rows = match jobs::live_batch(&app.db, site.org.id, now, start, want).await {
                Ok(rows) => rows,
                Err(e) => {
                    tracing::warn!(error = ?e, org_id = site.org.id.0, "sitemap stopped");
                    tx.abort(std::io::Error::other("the sitemap could not be read"));
                    return;
                }
            };
            for r in &rows {
                buf.push_str("<url><loc>");
                buf.push_str(&xml(&site.url(&jobs::url_of(&r.slug))));
                buf.push_str("</loc><lastmod>");
                buf.push_str(&r.updated_at.to_rfc3339());
                buf.push_str("</lastmod></url>\n");
                if buf.len() >= CHUNK {
                    let chunk = Bytes::from(std::mem::replace(
                        &mut buf,
                        String::with_capacity(CHUNK + 1024),
                    ));
                    if tx.send_data(chunk).await.is_err() {
                        return;
                    }
                }
            }
            written += rows.len() as i64;
            let full = rows.len() as i64 == want;
            last = rows.into_iter().last();
            if !full {
                break;
            }
        }
        buf.push_str(URLSET_CLOSE);
        let _ = tx.send_data(Bytes::from(buf)).await;
    });
    Body::new(body)
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
