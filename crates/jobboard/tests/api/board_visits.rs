//! The board's own traffic in the analytics: pages, job pages and apply clicks counted for
//! people (one visitor per address and browser), never for crawlers, previews or clients
//! without a user agent; written in batches by the node that served them.

use std::time::{Duration, Instant};

use reqwest::redirect::Policy;
use serde_json::{Value, json};

use crate::{backends, board::job, common::*};

backends!(
    visits_of_people_are_counted,
    machines_are_not_counted,
    visits_are_written_without_being_asked,
);

const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

/// `GET path` on the board with `ua` as the user agent (no redirect followed); its status.
async fn visit(t: &TestApp, path: &str, ua: Option<&str>) -> u16 {
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(Policy::none())
        .build()
        .unwrap();
    let mut rb = client
        .get(format!("{}{path}", t.base))
        .header("accept", "text/html");
    if let Some(ua) = ua {
        rb = rb.header("user-agent", ua);
    }
    rb.send().await.unwrap().status().as_u16()
}

async fn site(t: &TestApp) -> Value {
    t.get("/analytics?period=7d").await.body["data"].clone()
}

async fn job_id(t: &TestApp, slug: &str) -> String {
    let r = t.get("/jobs?per_page=100").await;
    r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["slug"] == slug)
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn visits_of_people_are_counted(b: Backend) {
    let t = TestApp::spawn(b).await;
    let web = job(
        &t,
        json!({"title": "Web", "how_to_apply_method": "website", "how_to_apply": "https://acme.example/apply"}),
    )
    .await;
    let id = job_id(&t, &web).await;
    assert_eq!(visit(&t, "/", Some(FIREFOX)).await, 200);
    assert_eq!(visit(&t, &format!("/jobs/{web}"), Some(FIREFOX)).await, 200);
    // The second view is served from the page cache, and counted all the same.
    assert_eq!(visit(&t, &format!("/jobs/{web}"), Some(FIREFOX)).await, 200);
    assert_eq!(
        visit(&t, &format!("/jobs/{web}/apply"), Some(FIREFOX)).await,
        303
    );
    // Another browser on the same address is another visitor.
    assert_eq!(
        visit(&t, "/", Some("Mozilla/5.0 Safari/605.1.15")).await,
        200
    );
    // What is not served is not counted.
    assert_eq!(visit(&t, "/jobs/no-such-job", Some(FIREFOX)).await, 404);
    t.app.flush_views().await;

    let s = site(&t).await;
    assert_eq!(s["pageviews"], 4, "{s}");
    assert_eq!(s["job_views"], 2, "{s}");
    assert_eq!(s["apply_clicks"], 1, "{s}");
    assert_eq!(s["visitors"], 2, "{s}");
    let j = t
        .get(&format!("/analytics/jobs?jobIds={id}&period=7d"))
        .await;
    j.expect(200);
    assert_eq!(j.body["data"]["views"][&id], 2);
    assert_eq!(j.body["data"]["apply_clicks"][&id], 1);
    assert_eq!(j.body["data"]["visitors"][&id], 1);
    // Nothing is left to write.
    t.app.flush_views().await;
    assert_eq!(site(&t).await["pageviews"], 4);
}

async fn machines_are_not_counted(b: Backend) {
    let t = TestApp::spawn(b).await;
    let slug = job(&t, json!({"title": "Baker"})).await;
    for ua in [
        Some("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"),
        Some("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"),
        Some("facebookexternalhit/1.1"),
        Some("curl/8.5.0"),
        None,
    ] {
        assert_eq!(visit(&t, "/", ua).await, 200);
        assert_eq!(visit(&t, &format!("/jobs/{slug}"), ua).await, 200);
    }
    t.app.flush_views().await;
    let s = site(&t).await;
    assert_eq!(s["pageviews"], 0, "{s}");
    assert_eq!(s["job_views"], 0, "{s}");
    assert_eq!(s["visitors"], 0, "{s}");
}

async fn visits_are_written_without_being_asked(b: Backend) {
    let t = TestApp::spawn(b).await;
    let slug = job(&t, json!({"title": "Baker"})).await;
    assert_eq!(
        visit(&t, &format!("/jobs/{slug}"), Some(FIREFOX)).await,
        200
    );
    // The node's background batch writes it (every second); poll with a deadline.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let s = site(&t).await;
        if s["job_views"] == 1 {
            assert_eq!(s["pageviews"], 1);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the visit was never written: {s}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
