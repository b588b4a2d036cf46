//! The public board: the pages job seekers and crawlers see, on the organization the
//! request's host names. Lists and job pages ([`home`], [`job`]), applying ([`apply`]),
//! the employer's form ([`post`]), the checks both forms pass ([`gate`]), feeds
//! ([`feeds`]), sitemaps and `robots.txt` ([`sitemap`]), public CMS collections
//! ([`cms`]) and their submission form ([`cms_submit`]), job alerts ([`alerts`]), and
//! what serving them counts
//! ([`visits`]).
//!
//! Every read goes through the domain operations the API calls, so the board lists what
//! `GET /api/jobs` lists for the same query. Public pages are served from the node's page
//! cache (see [`cached`]) with a strong `ETag`, and may be held briefly by a CDN (see
//! [`PUBLIC_CACHE`]).

mod alerts;
mod apply;
pub(crate) mod checkout;
mod cms;
mod cms_submit;
mod feeds;
mod format;
pub(crate) mod gate;
mod home;
mod job;
mod jsonld;
mod post;
mod processor_events;
mod query;
mod sitemap;
mod stream;
mod syndication;
mod visits;
mod well_known;

use std::future::Future;

use axum::{
    Router,
    body::Body,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::{any, get, post},
};

use super::{error::PageError, page::csp, site::Site};
use jobboard_app::app::AppState;
use jobboard_core::cache::{MAX_AGE_MICROS, Rendered};
use jobboard_domain::{OrgId, Ts, jobs};

/// Every route of the board.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(home::show))
        .route("/jobs/{slug}", get(job::show))
        .route("/jobs/{slug}/apply", get(apply::show).post(apply::submit))
        .route("/post-a-job", get(post::show).post(post::submit))
        .route("/post-a-job/thanks", get(checkout::thanks))
        .route(
            "/post-a-job/resume/{token}",
            get(checkout::resume).post(checkout::pay),
        )
        .route("/payments/webhook", post(processor_events::event))
        .route("/alerts", get(alerts::show).post(alerts::subscribe))
        .route("/alerts/sent", get(alerts::sent))
        .route("/alerts/confirm/{token}", get(alerts::confirm))
        .route(
            "/alerts/unsubscribe/{token}",
            get(alerts::manage).post(alerts::unsubscribe),
        )
        .route("/feed.xml", get(feeds::rss))
        .route("/feed.json", get(feeds::json))
        .route("/feeds/indeed.xml", get(syndication::indeed))
        .route("/feeds/jobs.json", get(syndication::jobs_json))
        .route("/sitemap.xml", get(sitemap::sitemap))
        .route("/sitemaps/{file}", get(sitemap::part))
        .route("/robots.txt", get(sitemap::robots))
        .route("/c/{collection}", get(cms::list))
        .route(
            "/c/{collection}/submit",
            get(cms_submit::show).post(cms_submit::submit),
        )
        .route("/c/{collection}/{id}", get(cms::item))
        .route("/{file}", any(well_known::indexnow_key))
        .route(
            "/.well-known/jobboard-domain/{token}",
            get(well_known::domain_token),
        )
}

/// `Cache-Control` of public pages and feeds: browsers revalidate every time (with the
/// `ETag`, so an unchanged page costs a `304`), a shared cache (CDN) may serve a copy for
/// 30 seconds and a stale one for 30 more while it fetches a fresh one. So a job approved
/// or removed is seen at once by a visitor reaching this server, and within a minute
/// behind a CDN.
pub const PUBLIC_CACHE: &str = "public, max-age=0, s-maxage=30, stale-while-revalidate=30";

/// What a rendered body is, for its `Content-Type` and policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Html,
    Rss,
    JsonFeed,
    Xml,
    Text,
}

impl Kind {
    fn content_type(self) -> &'static str {
        match self {
            Kind::Html => "text/html; charset=utf-8",
            Kind::Rss => "application/rss+xml; charset=utf-8",
            Kind::JsonFeed => "application/feed+json; charset=utf-8",
            Kind::Xml => "application/xml; charset=utf-8",
            Kind::Text => "text/plain; charset=utf-8",
        }
    }
}

/// True when the client asked not to be served a stored rendering (`Cache-Control:
/// no-cache`, as a browser's forced reload sends).
fn bypass(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::CACHE_CONTROL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| {
            v.split(',')
                .any(|d| d.trim().eq_ignore_ascii_case("no-cache"))
        })
}

/// The rendering of `key` (a path and its normalised query) on `site`'s board: the stored
/// one while the board's version is unchanged and its deadline has not passed, else the
/// one `render` makes (with the moment it stops being valid). The origin is part of the
/// key: pages carry absolute links.
pub(super) async fn cached<F, Fut>(
    app: &AppState,
    site: &Site,
    key: &str,
    headers: &HeaderMap,
    render: F,
) -> Result<Rendered, PageError>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<(Rendered, i64), PageError>>,
{
    app.pages_cache
        .read_through(
            (site.org.id, format!("{}|{key}", site.origin)),
            site.version,
            || app.clock.now().micros(),
            bypass(headers),
            render,
        )
        .await
}

/// The moment the organization's lists change without a write (the next expiry), at
/// most [`MAX_AGE_MICROS`] after `now`.
pub(super) async fn list_deadline(
    app: &AppState,
    org_id: OrgId,
    now: Ts,
) -> Result<i64, PageError> {
    Ok(jobs::next_expiry(&app.db, org_id, now)
        .await?
        .map_or(i64::MAX, |t| t.micros())
        .min(now.micros() + MAX_AGE_MICROS))
}

/// The response of a rendered public body: `200` with its strong `ETag` and
/// [`PUBLIC_CACHE`], or `304` when `If-None-Match` names the `ETag`.
pub(super) fn respond(rendered: Rendered, req: &HeaderMap, site: &Site, kind: Kind) -> Response {
    let not_modified = req
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| jobboard_core::cache::none_match(v, &rendered.etag));
    let mut res = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = Response::new(Body::from(rendered.body));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(kind.content_type()),
        );
        r
    };
    let h = res.headers_mut();
    if let Ok(etag) = HeaderValue::from_str(&rendered.etag) {
        h.insert(header::ETAG, etag);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(PUBLIC_CACHE),
    );
    if kind == Kind::Html {
        if let Ok(v) = HeaderValue::from_str(&csp(Some(&site.theme.csp_hash))) {
            h.insert(header::CONTENT_SECURITY_POLICY, v);
        }
        h.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("strict-origin-when-cross-origin"),
        );
    }
    res
}

/// What the board's layout (`templates/board/layout.html`) shows around every page.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub name: String,
    pub tagline: Option<String>,
    /// An https logo (others would break the page's policy or mix content).
    pub logo_url: Option<String>,
    pub public_posting: bool,
    /// Members can sign in here (the link to their account is shown).
    pub accounts: bool,
    pub board_css: String,
    /// The feeds of the page's list (with its filters).
    pub feed_query: String,
    /// Absolute URL of the page (Open Graph).
    pub url: String,
    /// Open Graph image, when there is one.
    pub image: Option<String>,
    /// `website` or `article`.
    pub og_type: &'static str,
}

impl Frame {
    pub fn of(site: &Site, path: &str) -> Frame {
        let logo = site
            .org
            .logo_url
            .clone()
            .filter(|u| u.starts_with("https://"));
        Frame {
            name: site.org.name.clone(),
            tagline: site.org.tagline.clone(),
            image: logo.clone(),
            logo_url: logo,
            public_posting: site.org.public_posting,
            accounts: site.accounts,
            board_css: super::assets::url("board.css"),
            feed_query: String::new(),
            url: site.url(path),
            og_type: "website",
        }
    }
}
