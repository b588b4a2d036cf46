//! What every page shares: bundled assets, HTML error pages with a strict policy, and the
//! JSON envelope kept for API clients.

use reqwest::Method;
use scraper::Selector;

use crate::{backends, common::*};

backends!(
    assets_are_bundled_and_cached,
    unknown_pages_are_html_for_browsers
);

async fn assets_are_bundled_and_cached(b: Backend) {
    let t = TestApp::spawn(b).await;
    // The page links the style sheet by its hashed name.
    let r = t.page("/no-such-page").await;
    let doc = r.html();
    let link = doc
        .select(&Selector::parse("link[rel=stylesheet]").unwrap())
        .next()
        .expect("a style sheet link");
    let href = link.value().attr("href").unwrap().to_string();
    assert!(
        href.starts_with("/assets/app.") && href.ends_with(".css"),
        "{href}"
    );
    let css = t.page(&href).await;
    css.expect(200);
    assert_eq!(css.header("content-type"), Some("text/css; charset=utf-8"));
    assert_eq!(
        css.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert!(css.text.contains("--accent"));
    // The plain name is served too, but revalidated.
    let plain = t.page("/assets/app.css").await;
    plain.expect(200);
    assert_eq!(plain.header("cache-control"), Some("public, max-age=300"));
    t.page("/assets/nothing.css").await.expect(404);
}

async fn unknown_pages_are_html_for_browsers(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t.page("/no-such-page").await;
    r.expect(404);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(r.header("x-robots-tag"), Some("noindex"));
    let csp = r.header("content-security-policy").unwrap();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    let doc = r.html();
    let h1: String = doc
        .select(&Selector::parse("main h1").unwrap())
        .next()
        .expect("a heading")
        .text()
        .collect();
    assert_eq!(h1, "Page not found");
    assert_eq!(
        doc.root_element().value().attr("lang"),
        Some("en"),
        "the document names its language"
    );
    // API clients keep the envelope, under /api and elsewhere.
    let r = t
        .client
        .request(Method::GET, format!("{}/no-such-page", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "route_not_found");
    t.get("/no-such-route")
        .await
        .expect_error(404, "route_not_found");
}
