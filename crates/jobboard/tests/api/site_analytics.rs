//! `GET /analytics`: site totals, the daily series, custom ranges.

use chrono::{Duration, Utc};
use serde_json::json;

use crate::{backends, common::*};

backends!(
    site_totals_and_series,
    custom_ranges_are_validated,
    visitors_behind_a_trusted_proxy_are_told_apart,
);

fn day(days_ago: i64) -> String {
    (Utc::now() - Duration::days(days_ago))
        .date_naive()
        .format("%Y-%m-%d")
        .to_string()
}

async fn site_totals_and_series(b: Backend) {
    let t = TestApp::spawn(b).await;
    let j = t.insert_job(t.org_id, "Site").await;
    t.insert_job(t.org_id, "Another").await;
    let at = |d: i64| format!("{}T12:00:00Z", day(d));
    t.post(
        "/analytics/events",
        json!({"events": [
            {"type": "page_view", "path": "/", "visitor_id": "a"},
            {"type": "page_view", "path": "/", "visitor_id": "b"},
            {"type": "job_view", "job_id": j, "visitor_id": "a"},
            {"type": "apply_click", "job_id": j, "visitor_id": "a"},
            {"type": "page_view", "path": "/", "visitor_id": "a", "occurred_at": at(2)},
            {"type": "job_view", "job_id": j, "visitor_id": "c", "occurred_at": at(2)},
            {"type": "page_view", "path": "/", "visitor_id": "z", "occurred_at": at(20)},
        ]}),
    )
    .await
    .expect(200);
    t.post(
        &format!("/jobs/{j}/applications"),
        json!({"name": "A", "email": "a@example.com"}),
    )
    .await
    .expect(201);
    t.post("/members/sync", json!({"email": "new.member@example.com"}))
        .await
        .expect(201);
    let r = t.get("/analytics?period=7d").await;
    r.expect(200);
    let d = &r.body["data"];
    assert_eq!(d["pageviews"], 3);
    assert_eq!(d["job_views"], 2);
    assert_eq!(d["apply_clicks"], 1);
    assert_eq!(d["applications"], 1);
    assert_eq!(d["visitors"], 3, "a, b and c; z is outside the period");
    assert_eq!(d["jobs_posted"], 2);
    assert_eq!(d["members_joined"], 1);
    assert_eq!(
        r.body["meta"],
        json!({"period": "7d", "from": day(6), "to": day(0)})
    );
    let series = d["timeseries"].as_array().unwrap();
    assert_eq!(series.len(), 7);
    assert_eq!(
        series[6],
        json!({"date": day(0), "visitors": 2, "pageviews": 2, "job_views": 1, "apply_clicks": 1, "applications": 1})
    );
    assert_eq!(
        series[4],
        json!({"date": day(2), "visitors": 2, "pageviews": 1, "job_views": 1, "apply_clicks": 0, "applications": 0})
    );
    assert_eq!(series[0]["date"], day(6));
    assert_eq!(series[0]["pageviews"], 0);
    // The default period is 30 days and includes the older page view.
    let r = t.get("/analytics").await;
    assert_eq!(r.body["data"]["pageviews"], 4);
    assert_eq!(r.body["data"]["visitors"], 4);
    assert_eq!(r.body["data"]["timeseries"].as_array().unwrap().len(), 30);
    assert_eq!(r.body["meta"]["period"], "30d");
    // Another organization sees none of it.
    let (_, other) = t.new_org("Other", "*", 1000, 1000).await;
    let r = t
        .req(reqwest::Method::GET, "/analytics")
        .key(&other)
        .send()
        .await;
    assert_eq!(r.body["data"]["pageviews"], 0);
    assert_eq!(r.body["data"]["jobs_posted"], 0);
}

async fn custom_ranges_are_validated(b: Backend) {
    let t = TestApp::spawn(b).await;
    t.post(
        "/analytics/events",
        json!({"events": [{"type": "page_view", "visitor_id": "a", "occurred_at": format!("{}T00:00:00Z", day(3))}]}),
    )
    .await
    .expect(200);
    let r = t
        .get(&format!("/analytics?from={}&to={}", day(3), day(3)))
        .await;
    r.expect(200);
    assert_eq!(r.body["data"]["pageviews"], 1);
    assert_eq!(
        r.body["meta"],
        json!({"period": "custom", "from": day(3), "to": day(3)})
    );
    assert_eq!(r.body["data"]["timeseries"].as_array().unwrap().len(), 1);
    let r = t
        .get(&format!("/analytics?from={}&to={}", day(2), day(0)))
        .await;
    assert_eq!(r.body["data"]["pageviews"], 0);
    for bad in [
        format!("from={}", day(1)),
        format!("from={}&to={}", day(0), day(1)),
        format!("from={}&to={}&period=7d", day(1), day(0)),
        format!("from={}&to={}", day(500), day(0)),
        "from=yesterday&to=today".to_string(),
        "period=2w".to_string(),
    ] {
        let r = t.get(&format!("/analytics?{bad}")).await;
        r.expect_error(422, "validation_failed");
    }
}

async fn visitors_behind_a_trusted_proxy_are_told_apart(b: Backend) {
    let trusted = |c: &mut jobboard::config::Config| {
        c.trusted_proxies = vec![jobboard_core::net::Cidr::parse("127.0.0.0/8").unwrap()];
    };
    for (app, expected) in [
        (TestApp::spawn_with(b, trusted).await, 3),
        (TestApp::spawn(b).await, 1),
    ] {
        // Events without visitor ids, from three clients behind the proxy (one twice).
        for xff in [
            "198.51.100.1",
            "198.51.100.2",
            "198.51.100.3",
            "198.51.100.1",
        ] {
            app.req(reqwest::Method::POST, "/analytics/events")
                .header("x-forwarded-for", xff)
                .header("user-agent", "Browser/1.0")
                .json(json!({"events": [{"type": "page_view", "path": "/"}]}))
                .send()
                .await
                .expect(200);
        }
        let r = app.get("/analytics?period=7d").await;
        r.expect(200);
        assert_eq!(r.body["data"]["pageviews"], 4);
        assert_eq!(r.body["data"]["visitors"], expected, "{}", r.body);
    }
}
