//! Subscriptions: create, read, update, delete and their validation, the same subscription
//! returned again, pending deliveries discarded on deletion, and the test and retry endpoints.

use jobboard::delivery::webhooks::{drain, drain_with};
use jobboard_core::Clock;
use jobboard_domain::webhooks as store;
use jobboard_store::Ts;
use reqwest::Method;
use serde_json::{Value, json};

use super::*;
use crate::{
    backends,
    webhook_receiver::{Behavior, Receiver},
};

backends!(
    subscriptions_crud_and_validation,
    same_subscription_returns_the_existing_one,
    delete_discards_pending_deliveries,
    test_and_retry_endpoints,
);

async fn subscriptions_crud_and_validation(b: Backend) {
    let t = spawn_no_worker(b).await;
    let r = t
        .post(
            "/webhooks",
            json!({"event": "job.created", "target_type": "webhook", "target_url": "https://hooks.example.com/a", "secret": SECRET}),
        )
        .await;
    r.expect(201);
    let d = &r.body["data"];
    let mut keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "created_at",
            "event",
            "id",
            "is_enabled",
            "previous_secret_expires_at",
            "target_type",
            "target_url",
            "updated_at"
        ]
    );
    assert_eq!(d["previous_secret_expires_at"], Value::Null);
    assert_eq!(d["is_enabled"], true);
    assert_eq!(d["event"], "job.created");
    assert!(!r.text.contains(SECRET));
    let id = d["id"].as_str().unwrap().to_string();

    // Every bad field at once, unknown fields rejected.
    let r = t
        .post(
            "/webhooks",
            json!({"event": "job.nope", "target_type": "email", "target_url": "ftp://x", "secret": "short", "extra": 1}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        r.error_fields(),
        ["event", "target_type", "target_url", "secret", "extra"]
    );
    t.post("/webhooks", json!({}))
        .await
        .expect_error(422, "validation_failed");

    // Read, list, patch.
    let r = t.get(&format!("/webhooks/{id}")).await;
    r.expect(200);
    assert_eq!(r.body["data"]["target_url"], "https://hooks.example.com/a");
    let r = t.get("/webhooks").await;
    r.expect(200);
    assert_eq!(r.body["meta"]["total"], 1);
    assert_eq!(r.body["data"][0]["id"], id.as_str());
    let r = t
        .patch(
            &format!("/webhooks/{id}"),
            json!({"is_enabled": false, "event": "*", "target_url": "https://hooks.example.com/b"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["data"]["is_enabled"], false);
    assert_eq!(r.body["data"]["event"], "*");
    assert_eq!(r.body["data"]["target_url"], "https://hooks.example.com/b");
    t.patch(&format!("/webhooks/{id}"), json!({}))
        .await
        .expect_error(422, "validation_failed");
    t.patch(&format!("/webhooks/{id}"), json!({"secret": "short"}))
        .await
        .expect_error(422, "validation_failed");
    // Becoming equal to another subscription is a conflict.
    let other = subscribe(&t, "*", "webhook", "https://hooks.example.com/c", None).await;
    t.patch(
        &format!("/webhooks/{other}"),
        json!({"target_url": "https://hooks.example.com/b"}),
    )
    .await
    .expect_error(409, "conflict");

    // Another organization sees nothing; scopes are enforced.
    let (_, stranger) = t.new_org("Other", "*", 100, 100).await;
    t.req(Method::GET, &format!("/webhooks/{id}"))
        .key(&stranger)
        .send()
        .await
        .expect_error(404, "not_found");
    t.req(Method::DELETE, &format!("/webhooks/{id}"))
        .key(&stranger)
        .send()
        .await
        .expect_error(404, "not_found");
    let reader = t.new_key(t.org_id, "webhooks:read", 100, 100).await;
    t.req(Method::GET, "/webhooks")
        .key(&reader)
        .send()
        .await
        .expect(200);
    t.req(Method::POST, &format!("/webhooks/{id}/test"))
        .key(&reader)
        .send()
        .await
        .expect_error(403, "insufficient_scope");

    // Delete.
    let r = t.delete(&format!("/webhooks/{id}")).await;
    r.expect(200);
    assert_eq!(r.body, json!({"data": {"id": id, "deleted": true}}));
    t.get(&format!("/webhooks/{id}"))
        .await
        .expect_error(404, "not_found");
    t.delete(&format!("/webhooks/{id}"))
        .await
        .expect_error(404, "not_found");
    t.get("/webhooks/not-a-uuid")
        .await
        .expect_error(404, "not_found");
}

async fn same_subscription_returns_the_existing_one(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    let url = rx.url("/same");
    let body = json!({"event": "*", "target_type": "webhook", "target_url": url, "secret": "first-secret-0123456"});
    let first = t.post("/webhooks", body).await;
    first.expect(201);
    let id = first.body["data"]["id"].clone();
    // Same settings, new secret: 200, the same subscription, the secret replaced.
    let again = t
        .post(
            "/webhooks",
            json!({"event": "*", "target_type": "webhook", "target_url": url, "secret": SECRET}),
        )
        .await;
    again.expect(200);
    assert_eq!(again.body["data"]["id"], id);
    // Without a secret: 200, the secret kept.
    t.post(
        "/webhooks",
        json!({"event": "*", "target_type": "webhook", "target_url": url}),
    )
    .await
    .expect(200);
    // Another target type or event is another subscription.
    let chat = t
        .post(
            "/webhooks",
            json!({"event": "*", "target_type": "chat_a", "target_url": url}),
        )
        .await;
    chat.expect(201);
    assert_ne!(chat.body["data"]["id"], id);
    t.delete(&format!(
        "/webhooks/{}",
        chat.body["data"]["id"].as_str().unwrap()
    ))
    .await
    .expect(200);
    rx.secret("/same", SECRET);
    emit(&t, "user.created", json!({"user_id": "u"})).await;
    drain(&t.app).await;
    let hits = rx.hits("/same");
    assert_eq!(hits.len(), 1);
    assert_eq!(
        hits[0].signature_valid,
        Some(true),
        "signed with the replaced secret"
    );
    assert_eq!(t.get("/webhooks").await.body["meta"]["total"], 1);
}

async fn delete_discards_pending_deliveries(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    rx.status("/down", 503);
    let sub = subscribe(&t, "*", "webhook", &rx.url("/down"), None).await;
    emit(&t, "job.created", json!({})).await;
    emit(&t, "job.updated", json!({})).await;
    drain(&t.app).await;
    assert_eq!(store::pending_count(t.db()).await.unwrap(), 2);
    let m = t.metrics().await;
    assert!(
        m.text.contains("jobboard_webhook_deliveries_pending 2"),
        "{}",
        m.text
    );
    t.delete(&format!("/webhooks/{sub}")).await.expect(200);
    assert_eq!(store::pending_count(t.db()).await.unwrap(), 0);
    let m = t.metrics().await;
    assert!(m.text.contains("jobboard_webhook_deliveries_pending 0"));
    let far = Ts::now().plus(chrono::Duration::hours(1));
    assert_eq!(drain_with(&t.app, Clock::at(far)).await, 0);
    assert_eq!(rx.hits("/down").len(), 2);
}

async fn test_and_retry_endpoints(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    rx.secret("/ping", SECRET);
    rx.answer(
        "/ping",
        Behavior {
            body: "é".repeat(3000),
            ..Behavior::default()
        },
    );
    let sub = subscribe(&t, "job.created", "webhook", &rx.url("/ping"), Some(SECRET)).await;
    let r = t
        .req(Method::POST, &format!("/webhooks/{sub}/test"))
        .send()
        .await;
    r.expect(201);
    assert_eq!(r.body["data"]["event"], "ping");
    assert_eq!(r.body["data"]["status"], "pending");
    let delivery = r.body["data"]["id"].as_str().unwrap().to_string();
    drain(&t.app).await;
    let hits = rx.hits("/ping");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].signature_valid, Some(true));
    assert_eq!(hits[0].header("x-service-event"), Some("ping"));
    let body = hits[0].json();
    assert_eq!(body["event"], "ping");
    assert_eq!(body["data"], json!({"subscription_id": sub}));
    let ds = deliveries(&t, &sub).await;
    assert_eq!(ds[0]["status"], "succeeded");
    let log = ds[0]["attempt_log"].as_array().unwrap();
    assert_eq!(log[0]["status_code"], 200);
    assert_eq!(log[0]["error"], Value::Null);
    let excerpt = log[0]["response_excerpt"].as_str().unwrap();
    assert!(excerpt.len() <= 2048 && excerpt.len() >= 2046 && excerpt.starts_with('é'));

    // Retry: the same delivery again, with the same id.
    let r = t
        .req(
            Method::POST,
            &format!("/webhooks/{sub}/deliveries/{delivery}/retry"),
        )
        .send()
        .await;
    r.expect(200);
    assert_eq!(r.body["data"]["status"], "pending");
    assert_eq!(r.body["data"]["id"], delivery.as_str());
    drain(&t.app).await;
    let hits = rx.hits("/ping");
    assert_eq!(hits.len(), 2);
    assert_eq!(
        hits[1].header("x-service-delivery"),
        Some(delivery.as_str())
    );
    assert_eq!(hits[1].body, hits[0].body);
    let ds = deliveries(&t, &sub).await;
    assert_eq!(ds[0]["attempts"], 2);
    assert_eq!(ds[0]["attempt_log"].as_array().unwrap().len(), 2);

    let unknown = uuid::Uuid::now_v7();
    t.req(
        Method::POST,
        &format!("/webhooks/{sub}/deliveries/{unknown}/retry"),
    )
    .send()
    .await
    .expect_error(404, "not_found");
    t.req(Method::POST, &format!("/webhooks/{unknown}/test"))
        .send()
        .await
        .expect_error(404, "not_found");
    t.get(&format!("/webhooks/{sub}/deliveries?limit=0"))
        .await
        .expect_error(422, "validation_failed");
}
