//! Failed deliveries: the retry schedule, `Retry-After`, and the subscription disabled by a
//! `410 Gone` or a streak of failures.

use std::time::Duration;

use jobboard::delivery::webhooks::{drain, drain_with};
use jobboard_core::Clock;
use jobboard_store::Ts;
use reqwest::Method;
use serde_json::{Value, json};

use super::*;
use crate::{
    backends,
    webhook_receiver::{Behavior, Receiver},
};

backends!(
    retries_follow_the_schedule,
    retry_after_is_respected,
    gone_disables_the_subscription,
    failure_streak_disables_the_subscription,
);

async fn is_enabled(t: &TestApp, sub: &str) -> bool {
    let r = t.get(&format!("/webhooks/{sub}")).await;
    r.expect(200);
    r.body["data"]["is_enabled"].as_bool().unwrap()
}

async fn retries_follow_the_schedule(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    rx.answer(
        "/flaky",
        Behavior {
            status: 500,
            body: "x".repeat(5000),
            ..Behavior::default()
        },
    );
    let sub = subscribe(&t, "*", "webhook", &rx.url("/flaky"), None).await;
    emit(&t, "job.created", samples()[0].1.clone()).await;
    let t0 = Ts::now();
    assert_eq!(drain(&t.app).await, 1);
    let d = &deliveries(&t, &sub).await[0];
    assert_eq!(d["status"], "pending");
    assert_eq!(d["attempts"], 1);
    // First retry after 1 s (schedule [1, 2]) with at most 10% jitter.
    let next = Ts::parse(d["next_attempt_at"].as_str().unwrap()).unwrap();
    let wait = next.micros() - t0.micros();
    assert!((800_000..=1_600_000).contains(&wait), "waited {wait} us");
    let log = d["attempt_log"].as_array().unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["attempt"], 1);
    assert_eq!(log[0]["status_code"], 500);
    assert!(log[0]["error"].as_str().unwrap().contains("500"));
    assert!(log[0]["duration_ms"].as_i64().unwrap() >= 0);
    assert_eq!(log[0]["response_excerpt"].as_str().unwrap().len(), 2048);
    // Not due yet.
    assert_eq!(drain(&t.app).await, 0);
    // Due at the scheduled time: second attempt, then the second delay (2 s).
    let at = next.plus(chrono::Duration::milliseconds(1));
    assert_eq!(drain_with(&t.app, Clock::at(at)).await, 1);
    let d = &deliveries(&t, &sub).await[0];
    assert_eq!(d["attempts"], 2);
    let next2 = Ts::parse(d["next_attempt_at"].as_str().unwrap()).unwrap();
    let wait = next2.micros() - at.micros();
    assert!((1_800_000..=2_200_000).contains(&wait), "waited {wait} us");
    // The schedule is exhausted after the third attempt.
    let at = next2.plus(chrono::Duration::milliseconds(1));
    assert_eq!(drain_with(&t.app, Clock::at(at)).await, 1);
    let d = &deliveries(&t, &sub).await[0];
    assert_eq!(d["status"], "failed");
    assert_eq!(d["attempts"], 3);
    assert_eq!(d["next_attempt_at"], Value::Null);
    assert_eq!(
        drain_with(&t.app, Clock::at(at.plus(chrono::Duration::hours(1)))).await,
        0
    );
    // Every attempt carried the same delivery id.
    let hits = rx.hits("/flaky");
    assert_eq!(hits.len(), 3);
    let ids: Vec<&str> = hits
        .iter()
        .map(|h| h.header("x-service-delivery").unwrap())
        .collect();
    assert!(ids.iter().all(|i| *i == d["id"].as_str().unwrap()));
    // Identical bodies on every retry.
    assert!(hits.iter().all(|h| h.body == hits[0].body));
}

async fn retry_after_is_respected(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    rx.answer(
        "/busy",
        Behavior {
            status: 429,
            retry_after: Some("30".into()),
            ..Behavior::default()
        },
    );
    let sub = subscribe(&t, "*", "webhook", &rx.url("/busy"), None).await;
    emit(&t, "job.created", json!({})).await;
    let t0 = Ts::now();
    drain(&t.app).await;
    let d = &deliveries(&t, &sub).await[0];
    let next = Ts::parse(d["next_attempt_at"].as_str().unwrap()).unwrap();
    let wait = next.micros() - t0.micros();
    assert!(
        (29_000_000..=32_000_000).contains(&wait),
        "waited {wait} us"
    );
    // A Retry-After beyond one hour is capped.
    rx.answer(
        "/busy",
        Behavior {
            status: 503,
            retry_after: Some("999999".into()),
            ..Behavior::default()
        },
    );
    let at = next.plus(chrono::Duration::milliseconds(1));
    drain_with(&t.app, Clock::at(at)).await;
    let d = &deliveries(&t, &sub).await[0];
    let next = Ts::parse(d["next_attempt_at"].as_str().unwrap()).unwrap();
    let wait = next.micros() - at.micros();
    assert!(
        (3_590_000_000..=3_610_000_000).contains(&wait),
        "waited {wait} us"
    );
}

async fn gone_disables_the_subscription(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    rx.status("/gone", 410);
    let sub = subscribe(&t, "*", "webhook", &rx.url("/gone"), None).await;
    let ok = subscribe(&t, "*", "webhook", &rx.url("/ok"), None).await;
    emit(&t, "job.created", json!({})).await;
    emit(&t, "job.updated", json!({})).await;
    drain(&t.app).await;
    let r = t.get(&format!("/webhooks/{sub}")).await;
    assert_eq!(r.body["data"]["is_enabled"], false);
    assert_eq!(
        t.get(&format!("/webhooks/{ok}")).await.body["data"]["is_enabled"],
        true
    );
    let ds = deliveries(&t, &sub).await;
    assert!(ds.iter().all(|d| d["status"] == "failed"), "{ds:?}");
    let gone_hits = rx.hits("/gone").len();
    assert!(gone_hits >= 1);
    // Later events are not delivered to it.
    emit(&t, "job.deleted", json!({})).await;
    drain(&t.app).await;
    assert_eq!(rx.hits("/gone").len(), gone_hits);
    assert_eq!(rx.hits("/ok").len(), 3);
    // The test endpoint refuses a disabled subscription; re-enabling resumes delivery.
    t.req(Method::POST, &format!("/webhooks/{sub}/test"))
        .send()
        .await
        .expect_error(409, "conflict");
    rx.status("/gone", 200);
    t.patch(&format!("/webhooks/{sub}"), json!({"is_enabled": true}))
        .await
        .expect(200);
    emit(&t, "job.expired", json!({})).await;
    drain(&t.app).await;
    assert_eq!(rx.hits("/gone").len(), gone_hits + 1);
}

async fn failure_streak_disables_the_subscription(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
        c.webhooks.retry_schedule = vec![Duration::from_secs(1); 20];
        c.webhooks.disable_after = Duration::from_secs(10);
    })
    .await;
    let rx = Receiver::start().await;
    rx.status("/down", 500);
    let sub = subscribe(&t, "*", "webhook", &rx.url("/down"), None).await;
    let t0 = Ts::now();
    let at = |secs: i64| Clock::at(t0.plus(chrono::Duration::seconds(secs)));
    emit(&t, "job.created", json!({})).await;
    drain_with(&t.app, at(0)).await;
    drain_with(&t.app, at(5)).await;
    assert!(is_enabled(&t, &sub).await, "5 s of failures < 10 s");
    // A success ends the streak.
    rx.status("/down", 200);
    emit(&t, "job.updated", json!({})).await;
    drain_with(&t.app, at(8)).await;
    assert!(is_enabled(&t, &sub).await);
    rx.status("/down", 500);
    emit(&t, "job.deleted", json!({})).await;
    drain_with(&t.app, at(12)).await;
    assert!(is_enabled(&t, &sub).await, "the streak restarted at 12 s");
    drain_with(&t.app, at(18)).await;
    assert!(is_enabled(&t, &sub).await);
    drain_with(&t.app, at(23)).await;
    assert!(
        !is_enabled(&t, &sub).await,
        "11 s of failures without a success"
    );
    let ds = deliveries(&t, &sub).await;
    assert!(ds.iter().all(|d| d["status"] != "pending"), "{ds:?}");
}
