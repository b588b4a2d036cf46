//! `POST /webhooks/{id}/recover {since}`: every failed delivery of the subscription created
//! since that time is queued again (and then delivered, with its own id and body), nothing
//! else is touched, and the answer says how many.

use jobboard_store::{Ts, events};

use jobboard::delivery::webhooks::drain;
use reqwest::Method;
use serde_json::{Value, json};

use crate::{backends, common::*, webhook_receiver::Receiver};

backends!(
    failed_deliveries_since_a_time_are_queued_again,
    recover_refusals
);

async fn spawn_no_worker(b: Backend) -> TestApp {
    TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
        // No retries: a delivery fails at its first failed attempt.
        c.webhooks.retry_schedule = Vec::new();
    })
    .await
}

async fn emit(t: &TestApp, n: usize) {
    let mut tx = t.db().begin().await.unwrap();
    for i in 0..n {
        events::emit(&mut tx, t.org_id, "job.created", json!({ "n": i }))
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
}

async fn deliveries(t: &TestApp, sub: &str) -> Vec<Value> {
    let r = t
        .get(&format!("/webhooks/{sub}/deliveries?limit=100"))
        .await;
    r.expect(200);
    r.body["data"].as_array().unwrap().clone()
}

fn count(ds: &[Value], status: &str) -> usize {
    ds.iter().filter(|d| d["status"] == status).count()
}

async fn failed_deliveries_since_a_time_are_queued_again(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    rx.status("/down", 503);
    let r = t
        .post(
            "/webhooks",
            json!({"event": "*", "target_type": "webhook", "target_url": rx.url("/down")}),
        )
        .await;
    r.expect(201);
    let sub = r.body["data"]["id"].as_str().unwrap().to_string();

    // One failure before `since`, three after, and one success after.
    emit(&t, 1).await;
    drain(&t.app).await;
    let since = Ts::now();
    emit(&t, 3).await;
    drain(&t.app).await;
    rx.status("/down", 200);
    emit(&t, 1).await;
    drain(&t.app).await;
    let ds = deliveries(&t, &sub).await;
    assert_eq!((count(&ds, "failed"), count(&ds, "succeeded")), (4, 1));
    let hits_before = rx.hits("/down").len();
    assert_eq!(hits_before, 5);

    let r = t
        .post(
            &format!("/webhooks/{sub}/recover"),
            json!({"since": since.to_string()}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["data"]["recovered"], 3);
    let ds = deliveries(&t, &sub).await;
    assert_eq!(count(&ds, "pending"), 3);
    assert_eq!(count(&ds, "failed"), 1, "the older failure stays failed");
    for d in ds.iter().filter(|d| d["status"] == "pending") {
        let due = Ts::parse(d["next_attempt_at"].as_str().unwrap()).unwrap();
        assert!(due <= Ts::now(), "due now");
    }

    // They are delivered again, each with its own delivery id and its first body.
    drain(&t.app).await;
    let ds = deliveries(&t, &sub).await;
    assert_eq!((count(&ds, "failed"), count(&ds, "succeeded")), (1, 4));
    let hits = rx.hits("/down");
    assert_eq!(hits.len(), hits_before + 3);
    for again in &hits[hits_before..] {
        let id = again.header("x-service-delivery").unwrap();
        let first = hits[..hits_before]
            .iter()
            .find(|h| h.header("x-service-delivery") == Some(id))
            .expect("the same delivery id as its failed attempt");
        assert_eq!(first.body, again.body);
    }
    let d = ds
        .iter()
        .find(|d| d["attempts"] == 2)
        .expect("a recovered delivery");
    assert_eq!(d["attempt_log"].as_array().unwrap().len(), 2);

    // Nothing is left to recover.
    let r = t
        .post(
            &format!("/webhooks/{sub}/recover"),
            json!({"since": since.to_string()}),
        )
        .await;
    assert_eq!(r.body["data"]["recovered"], 0);
    // An earlier `since` takes the older failure too.
    let r = t
        .post(
            &format!("/webhooks/{sub}/recover"),
            json!({"since": "2000-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(r.body["data"]["recovered"], 1);
}

async fn recover_refusals(b: Backend) {
    let t = spawn_no_worker(b).await;
    let r = t
        .post(
            "/webhooks",
            json!({"event": "*", "target_type": "webhook", "target_url": "https://hooks.example.com/x"}),
        )
        .await;
    let sub = r.body["data"]["id"].as_str().unwrap().to_string();
    let path = format!("/webhooks/{sub}/recover");
    let r = t.post(&path, json!({})).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["since"]);
    let r = t
        .post(&path, json!({"since": "yesterday", "extra": 1}))
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["since", "extra"]);
    // Another organization's subscription, an unknown one, a reading key.
    let (_, other) = t.new_org("Other", "*", 1000, 1000).await;
    t.req(Method::POST, &path)
        .key(&other)
        .json(json!({"since": "2000-01-01T00:00:00Z"}))
        .send()
        .await
        .expect_error(404, "not_found");
    t.post(
        &format!("/webhooks/{}/recover", uuid::Uuid::now_v7()),
        json!({"since": "2000-01-01T00:00:00Z"}),
    )
    .await
    .expect_error(404, "not_found");
    let reader = t.new_key(t.org_id, "webhooks:read", 1000, 1000).await;
    t.req(Method::POST, &path)
        .key(&reader)
        .json(json!({"since": "2000-01-01T00:00:00Z"}))
        .send()
        .await
        .expect_error(403, "insufficient_scope");
    // A disabled subscription must be enabled first.
    t.patch(&format!("/webhooks/{sub}"), json!({"is_enabled": false}))
        .await
        .expect(200);
    t.post(&path, json!({"since": "2000-01-01T00:00:00Z"}))
        .await
        .expect_error(409, "conflict");
}
