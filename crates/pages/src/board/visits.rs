//! The board's own traffic, counted into the analytics the API reports: a page served is
//! a `page_view`, a job page also a `job_view`, a click on apply an `apply_click`. The
//! visitor is the ingestion endpoint's privacy-safe hash (the day's salt, the client's
//! address and user agent; no cookie, no address kept). Crawlers, bots, link previews,
//! prefetches and clients without a user agent are not counted. Visits are noted in
//! memory and written in batches (see [`jobboard_app::app::App::record_view`]): serving a page
//! never waits for a write.

use axum::http::{HeaderMap, header};

use jobboard_domain::{
    JobId,
    analytics::{Client, EventType, View},
};

use jobboard_app::app::AppState;

use crate::site::Site;

/// Parts of user agents that name automated clients (compared in lower case).
const AUTOMATED: &[&str] = &[
    "bot",
    "crawl",
    "spider",
    "slurp",
    "archiver",
    "facebookexternalhit",
    "embedly",
    "preview",
    "headless",
    "lighthouse",
    "pagespeed",
    "monitor",
    "uptime",
    "pingdom",
    "feedfetcher",
    "curl/",
    "wget/",
    "python-",
    "go-http-client",
    "java/",
    "okhttp",
    "axios/",
    "node-fetch",
    "libwww",
    "httpclient",
];

/// True when a request is a person's visit worth counting.
pub(super) fn counted(headers: &HeaderMap) -> bool {
    let ua = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if ua.trim().is_empty() || AUTOMATED.iter().any(|a| ua.contains(a)) {
        return false;
    }
    // A browser fetching a page ahead of a click that may never come.
    let prefetch = ["purpose", "sec-purpose", "x-moz"].iter().any(|h| {
        headers
            .get(*h)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains("prefetch"))
    });
    !prefetch
}

/// Notes the visits of one request: each of `kinds`, about `job` when given.
pub(super) fn note(
    app: &AppState,
    site: &Site,
    headers: &HeaderMap,
    kinds: &[EventType],
    job: Option<JobId>,
) {
    if !counted(headers) {
        return;
    }
    let client = Client {
        address: site.client,
        user_agent: headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string(),
    };
    let at = app.clock.now();
    for kind in kinds {
        app.record_view(View {
            org_id: site.org.id,
            kind: *kind,
            job_id: match kind {
                EventType::PageView => None,
                _ => job,
            },
            at,
            client: client.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_ua(ua: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::USER_AGENT, ua.parse().unwrap());
        h
    }

    #[test]
    fn people_are_counted_and_machines_are_not() {
        let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
        assert!(counted(&with_ua(firefox)));
        for ua in [
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            "Mozilla/5.0 (compatible; bingbot/2.0)",
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/148.0 Safari/537.36",
            "facebookexternalhit/1.1",
            "curl/8.5.0",
            "python-requests/2.32",
            "  ",
        ] {
            assert!(!counted(&with_ua(ua)), "{ua}");
        }
        assert!(!counted(&HeaderMap::new()));
        let mut prefetch = with_ua(firefox);
        prefetch.insert("sec-purpose", "prefetch;prerender".parse().unwrap());
        assert!(!counted(&prefetch));
    }
}
