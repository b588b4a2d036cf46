//! Default exposure (issue 25): `/metrics` is not served to anyone by default; the board's
//! absolute links come from `public_url`, an organization's verified domain or the listen
//! address, never from an unknown `Host`; forms are accepted from the service's own
//! origins only, compared by scheme, host and port.

use reqwest::Method;
use scraper::Html;
use serde_json::json;

use crate::{
    backends,
    board::{job, post_form, sel},
    common::*,
    dashboard::{Browser, add_user},
};

backends!(
    metrics_are_not_served_without_a_token_or_a_listener,
    absolute_links_never_follow_an_unknown_host,
    a_domain_board_links_with_the_scheme_the_request_came_on,
    forms_are_accepted_from_the_service_s_own_origins_only,
);

async fn metrics_are_not_served_without_a_token_or_a_listener(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.metrics_token = None).await;
    t.req(Method::GET, "/metrics")
        .no_key()
        .send()
        .await
        .expect_error(404, "route_not_found");
    // Probes stay open.
    t.req(Method::GET, "/healthz")
        .no_key()
        .send()
        .await
        .expect(200);
}

/// A page of the board reached on `host`, with extra `headers`.
async fn on(t: &TestApp, host: &str, path: &str, headers: &[(&str, &str)]) -> Resp {
    let mut rb = t.page_req(Method::GET, path).header("host", host);
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    Resp::read(rb.send().await.unwrap()).await
}

/// The canonical link, `og:url` and structured data `url` of a job page.
fn job_page_urls(doc: &Html) -> [String; 3] {
    let attr = |s: &str, a: &str| {
        doc.select(&sel(s))
            .next()
            .and_then(|e| e.value().attr(a))
            .unwrap_or_default()
            .to_string()
    };
    let ld: serde_json::Value = serde_json::from_str(
        &doc.select(&sel("script[type='application/ld+json']"))
            .next()
            .unwrap()
            .inner_html(),
    )
    .unwrap();
    [
        attr("link[rel=canonical]", "href"),
        attr("meta[property='og:url']", "content"),
        ld["url"].as_str().unwrap_or_default().to_string(),
    ]
}

async fn absolute_links_never_follow_an_unknown_host(b: Backend) {
    let t = TestApp::spawn(b).await;
    let slug = job(&t, json!({"title": "Harbour pilot", "location": "Hamburg"})).await;
    let url = format!("{}/jobs/{slug}", t.base);
    let listen = t.base.strip_prefix("http://").unwrap().to_string();
    for host in [listen.as_str(), "evil.example", "evil.example:8080"] {
        let page = on(&t, host, &format!("/jobs/{slug}"), &[]).await;
        page.expect(200);
        for u in job_page_urls(&page.html()) {
            assert_eq!(u, url, "{host}");
        }
        let sitemap = on(&t, host, "/sitemap.xml", &[]).await;
        assert!(
            sitemap.text.contains(&format!("<loc>{url}</loc>")),
            "{host}: {}",
            sitemap.text
        );
        let robots = on(&t, host, "/robots.txt", &[]).await;
        assert!(
            robots
                .text
                .lines()
                .any(|l| l == format!("Sitemap: {}/sitemap.xml", t.base)),
            "{host}: {}",
            robots.text
        );
        for feed in ["/feed.xml", "/feed.json"] {
            let f = on(&t, host, feed, &[]).await;
            f.expect(200);
            assert!(f.text.contains(&url), "{host}{feed}: {}", f.text);
            assert!(!f.text.contains("evil.example"), "{host}{feed}: {}", f.text);
        }
    }
}

async fn a_domain_board_links_with_the_scheme_the_request_came_on(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.trusted_proxies = vec![jobboard_core::net::Cidr::parse("127.0.0.1/32").unwrap()];
    })
    .await;
    let org = jobboard_domain::orgs::create_with(t.db(), "Second", Some("jobs.example.test"))
        .await
        .unwrap();
    let key = t.new_key(org.id, "*", 1000, 1000).await;
    let r = t
        .req(Method::POST, "/jobs")
        .key(&key)
        .json(json!({"title": "Theirs", "description": "x", "company_name": "Them", "status": "active", "location": "Oslo"}))
        .send()
        .await;
    let slug = r.body["data"]["slug"].as_str().unwrap().to_string();
    let path = format!("/jobs/{slug}");
    let plain = on(&t, "jobs.example.test:8080", &path, &[]).await;
    assert_eq!(
        job_page_urls(&plain.html())[0],
        format!("http://jobs.example.test{path}")
    );
    let tls = on(
        &t,
        "jobs.example.test",
        &path,
        &[("x-forwarded-proto", "https")],
    )
    .await;
    for u in job_page_urls(&tls.html()) {
        assert_eq!(u, format!("https://jobs.example.test{path}"));
    }
    // Another host behind the same proxy is organization 1's board at the listen address.
    let robots = on(
        &t,
        "evil.example",
        "/robots.txt",
        &[("x-forwarded-proto", "https")],
    )
    .await;
    assert!(
        robots
            .text
            .contains(&format!("Sitemap: {}/sitemap.xml", t.base)),
        "{}",
        robots.text
    );
}

/// The anti-forgery token of the employer's form on the default board.
async fn post_token(t: &TestApp) -> String {
    let page = t.page("/post-a-job").await;
    page.expect(200);
    page.html()
        .select(&sel("input[name=_token]"))
        .next()
        .unwrap()
        .value()
        .attr("value")
        .unwrap()
        .to_string()
}

async fn jobs_stored(t: &TestApp) -> usize {
    t.get("/jobs?status=all&per_page=100").await.body["data"]
        .as_array()
        .unwrap()
        .len()
}

async fn forms_are_accepted_from_the_service_s_own_origins_only(b: Backend) {
    let t = TestApp::spawn(b).await;
    let tok = post_token(&t).await;
    let fields = [
        ("_token", tok.as_str()),
        ("title", "Cook"),
        ("company_name", "Diner"),
        ("description", "Cook things."),
    ];
    let port: u16 = t.base.rsplit(':').next().unwrap().parse().unwrap();
    let other_port = format!("http://127.0.0.1:{}", port.wrapping_add(1).max(1));
    let https = t.base.replacen("http://", "https://", 1);
    for headers in [
        vec![("origin", other_port.as_str())],
        vec![("origin", https.as_str())],
        vec![("origin", "http://127.0.0.1")],
        vec![("origin", "http://localhost")],
        // A name that was made to resolve to this server (DNS rebinding): its own host.
        vec![("host", "evil.example"), ("origin", "http://evil.example")],
    ] {
        let r = post_form(&t, "/post-a-job", &fields, &headers).await;
        r.expect(403);
        assert!(r.text.contains("another website"), "{headers:?}");
    }
    // Referer, without Origin, is compared the same way.
    let referer = format!("{other_port}/post-a-job");
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let r = client
        .post(format!("{}/post-a-job", t.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("referer", &referer)
        .body(serde_urlencoded::to_string(fields).unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(jobs_stored(&t).await, 0);
    post_form(&t, "/post-a-job", &fields, &[]).await.expect(303);
    assert_eq!(jobs_stored(&t).await, 1);

    // The dashboard's forms too.
    add_user(&t, t.org_id, "ada@example.com").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let page = "/dashboard/settings/board";
    let csrf = ada.csrf(page).await;
    let form = [("name", "Renamed"), ("csrf", csrf.as_str())];
    for origin in [other_port.as_str(), https.as_str()] {
        ada.post_from(page, &form, Some(origin)).await.expect(403);
    }
    let org = jobboard_domain::orgs::get(t.db(), t.org_id).await.unwrap();
    assert_eq!(org.name, "Test org");
    ada.post_from(page, &form, Some(&t.base)).await.expect(303);
}
