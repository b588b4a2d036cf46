//! Webhooks: subscriptions, fan-out, signed delivery, retries, disabling, SSRF, chat bodies,
//! and durability across a SIGKILL, against a real receiver on 127.0.0.1.

use std::time::Duration;

use jobboard_store::{Ts, events};

use jobboard_domain::webhooks::{self as store, EventName, TargetType};

use jobboard::webhooks::{drain, drain_with};
use jobboard_core::Clock;
use reqwest::Method;
use serde_json::{Value, json};

use crate::{
    backends,
    common::*,
    webhook_receiver::{Behavior, Receiver},
};

backends!(
    subscriptions_crud_and_validation,
    same_subscription_returns_the_existing_one,
    fan_out_matches_events_and_signs,
    every_event_type_end_to_end,
    chat_bodies_for_every_event,
    retries_follow_the_schedule,
    retry_after_is_respected,
    gone_disables_the_subscription,
    failure_streak_disables_the_subscription,
    ssrf_refused_at_registration,
    a_refused_target_is_listed_with_the_other_bad_fields,
    ssrf_refused_at_connect_time,
    cidr_allow_list_lets_a_range_through,
    delete_discards_pending_deliveries,
    test_and_retry_endpoints,
    worker_delivers_without_waiting_for_a_poll,
    graceful_shutdown_hands_attempts_back,
    sigkill_loses_no_event,
    a_burst_of_attempts_is_recorded_once_each,
);

const SECRET: &str = "0123456789abcdef-secret";

async fn spawn_no_worker(b: Backend) -> TestApp {
    TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
        c.webhooks.retry_schedule = vec![Duration::from_secs(1), Duration::from_secs(2)];
    })
    .await
}

async fn emit(t: &TestApp, event: &str, data: Value) {
    let mut tx = t.db().begin().await.unwrap();
    events::emit(&mut tx, t.org_id, event, data).await.unwrap();
    tx.commit().await.unwrap();
}

async fn subscribe(
    t: &TestApp,
    event: &str,
    target_type: &str,
    url: &str,
    secret: Option<&str>,
) -> String {
    let mut body = json!({"event": event, "target_type": target_type, "target_url": url});
    if let Some(s) = secret {
        body["secret"] = json!(s);
    }
    let r = t.post("/webhooks", body).await;
    r.expect(201);
    r.body["data"]["id"].as_str().unwrap().to_string()
}

/// Sample `data` of every event of the contract table.
fn samples() -> Vec<(&'static str, Value)> {
    let job = "0190f0b2-0000-7000-8000-000000000001";
    let user = "0190f0b2-0000-7000-8000-000000000002";
    vec![
        (
            "job.created",
            json!({"job_id": job, "title": "Rust engineer", "company_name": "Acme & Co", "status": "pending", "location": "Berlin", "slug": "rust-engineer-acme", "url": "/jobs/rust-engineer-acme"}),
        ),
        (
            "job.updated",
            json!({"job_id": job, "title": "Rust engineer", "company_name": "Acme", "status": "active", "location": null, "slug": "rust-engineer-acme", "url": "/jobs/rust-engineer-acme", "changed": ["title", "location"]}),
        ),
        (
            "job.approved",
            json!({"job_id": job, "title": "Rust engineer", "company_name": "Acme", "status": "active"}),
        ),
        (
            "job.expired",
            json!({"job_id": job, "title": "Rust engineer", "company_name": "Acme", "status": "expired"}),
        ),
        (
            "job.deleted",
            json!({"job_id": job, "title": "Rust engineer", "company_name": "Acme", "status": "active"}),
        ),
        (
            "job.status_changed",
            json!({"job_id": job, "title": "Rust engineer", "company_name": "Acme", "previous_status": "pending", "status": "active"}),
        ),
        (
            "application.received",
            json!({"application_id": "a1", "job_id": job, "job_title": "Rust engineer", "name": "Ada <script>", "email": "ada@example.com"}),
        ),
        (
            "application.status_changed",
            json!({"application_id": "a1", "job_id": job, "previous_status": "new", "status": "reviewing"}),
        ),
        (
            "user.created",
            json!({"user_id": user, "email": "ada@example.com", "name": "Ada", "role": "jobseeker"}),
        ),
        (
            "subscription.created",
            json!({"access_id": "x1", "user_id": user, "plan_id": "p1", "status": "active"}),
        ),
        (
            "subscription.canceled",
            json!({"access_id": "x1", "user_id": user, "plan_id": "p1", "status": "canceled"}),
        ),
        (
            "payment.received",
            json!({"payment_id": "pay1", "user_id": user, "job_id": job, "amount": "19.99", "currency": "EUR", "payment_provider": "processor"}),
        ),
    ]
}

async fn is_enabled(t: &TestApp, sub: &str) -> bool {
    let r = t.get(&format!("/webhooks/{sub}")).await;
    r.expect(200);
    r.body["data"]["is_enabled"].as_bool().unwrap()
}

async fn deliveries(t: &TestApp, sub: &str) -> Vec<Value> {
    let r = t.get(&format!("/webhooks/{sub}/deliveries")).await;
    r.expect(200);
    r.body["data"].as_array().unwrap().clone()
}

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

async fn fan_out_matches_events_and_signs(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    for p in ["/all", "/created"] {
        rx.secret(p, SECRET);
    }
    subscribe(&t, "*", "webhook", &rx.url("/all"), Some(SECRET)).await;
    subscribe(
        &t,
        "job.created",
        "webhook",
        &rx.url("/created"),
        Some(SECRET),
    )
    .await;
    subscribe(&t, "user.created", "webhook", &rx.url("/users"), None).await;
    let off = subscribe(&t, "*", "webhook", &rx.url("/off"), None).await;
    t.patch(&format!("/webhooks/{off}"), json!({"is_enabled": false}))
        .await
        .expect(200);
    // Another organization's subscription never sees these events.
    let (_, stranger) = t.new_org("Other", "*", 100, 100).await;
    t.req(Method::POST, "/webhooks")
        .key(&stranger)
        .json(json!({"event": "*", "target_type": "webhook", "target_url": rx.url("/stranger")}))
        .send()
        .await
        .expect(201);

    emit(&t, "job.created", samples()[0].1.clone()).await;
    emit(&t, "user.created", samples()[8].1.clone()).await;
    assert_eq!(events::pending_count(t.db()).await.unwrap(), 2);
    assert_eq!(drain(&t.app).await, 4);
    assert_eq!(events::pending_count(t.db()).await.unwrap(), 0);

    let all = rx.hits("/all");
    assert_eq!(all.len(), 2);
    let created = rx.hits("/created");
    assert_eq!(created.len(), 1);
    assert_eq!(rx.hits("/users").len(), 1);
    assert!(rx.hits("/off").is_empty());
    assert!(rx.hits("/stranger").is_empty());

    let h = &created[0];
    assert_eq!(h.signature_valid, Some(true));
    let sig = h.header("x-service-signature").unwrap();
    assert_eq!(sig.len(), 64);
    assert!(
        sig.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    );
    assert_eq!(h.header("x-service-event"), Some("job.created"));
    assert_eq!(h.header("content-type"), Some("application/json"));
    assert!(
        h.header("user-agent")
            .unwrap()
            .starts_with("jobboard-webhooks/")
    );
    assert!(uuid::Uuid::parse_str(h.header("x-service-delivery").unwrap()).is_ok());
    let body = h.json();
    let mut keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    assert_eq!(keys, ["data", "event", "organization_id", "timestamp"]);
    assert_eq!(body["event"], "job.created");
    assert_eq!(body["organization_id"], t.org_id);
    assert_eq!(body["data"], samples()[0].1);
    assert!(Ts::parse(body["timestamp"].as_str().unwrap()).is_some());
    assert!(body["timestamp"].as_str().unwrap().ends_with('Z'));
    // No secret: no signature.
    assert!(rx.hits("/users")[0].header("x-service-signature").is_none());
    assert!(all.iter().all(|h| h.signature_valid == Some(true)));
    // A tampered body would not verify.
    assert!(!crate::webhook_receiver::verify(SECRET, b"{}", sig));
    // Nothing more is due.
    assert_eq!(drain(&t.app).await, 0);
}

async fn every_event_type_end_to_end(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    rx.secret("/all", SECRET);
    subscribe(&t, "*", "webhook", &rx.url("/all"), Some(SECRET)).await;
    for (name, data) in samples() {
        let path = format!("/{name}");
        rx.secret(&path, SECRET);
        subscribe(&t, name, "webhook", &rx.url(&path), Some(SECRET)).await;
        emit(&t, name, data).await;
    }
    drain(&t.app).await;
    assert_eq!(rx.hits("/all").len(), samples().len());
    for (name, data) in samples() {
        let hits = rx.hits(&format!("/{name}"));
        assert_eq!(hits.len(), 1, "{name}");
        assert_eq!(hits[0].signature_valid, Some(true));
        assert_eq!(hits[0].header("x-service-event"), Some(name));
        assert_eq!(hits[0].json()["event"], name);
        assert_eq!(hits[0].json()["data"], data);
    }
}

async fn chat_bodies_for_every_event(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    subscribe(&t, "*", "chat_a", &rx.url("/a"), Some(SECRET)).await;
    subscribe(&t, "*", "chat_b", &rx.url("/b"), None).await;
    let mut all = samples();
    all.push((
        "job.updated",
        json!({"job_id": "j", "title": "T".repeat(5000), "company_name": "<b>&</b>", "status": "active", "location": "x".repeat(5000), "changed": ["title"]}),
    ));
    for (name, data) in &all {
        emit(&t, name, data.clone()).await;
    }
    drain(&t.app).await;
    let a = rx.hits("/a");
    let bb = rx.hits("/b");
    assert_eq!(a.len(), all.len());
    assert_eq!(bb.len(), all.len());
    for h in a.iter().chain(bb.iter()) {
        assert!(
            h.header("x-service-signature").is_none(),
            "chat targets are not signed"
        );
        assert!(h.header("x-service-event").is_some());
    }
    for h in &a {
        let body = h.json();
        let embeds = body["embeds"].as_array().unwrap();
        assert_eq!(embeds.len(), 1);
        let e = &embeds[0];
        let title = e["title"].as_str().unwrap();
        assert!(!title.is_empty() && title.chars().count() <= 256);
        assert!(e["description"].as_str().unwrap().chars().count() <= 4096);
        let fields = e["fields"].as_array().unwrap();
        assert!(!fields.is_empty() && fields.len() <= 25);
        for f in fields {
            assert!(f["name"].as_str().unwrap().chars().count() <= 256);
            let v = f["value"].as_str().unwrap();
            assert!(!v.is_empty() && v.chars().count() <= 1024);
        }
        assert!(Ts::parse(e["timestamp"].as_str().unwrap()).is_some());
    }
    let created = a
        .iter()
        .find(|h| h.header("x-service-event") == Some("job.created"))
        .unwrap()
        .json();
    assert!(
        created["embeds"][0]["title"]
            .as_str()
            .unwrap()
            .contains("Rust engineer")
    );
    for h in &bb {
        let body = h.json();
        let text = body["text"].as_str().unwrap();
        assert!(!text.is_empty() && !text.contains('<') && !text.contains('>'));
        let blocks = body["blocks"].as_array().unwrap();
        let types: Vec<&str> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["header", "section", "context"]);
        assert_eq!(blocks[1]["text"]["type"], "mrkdwn");
        let section = blocks[1]["text"]["text"].as_str().unwrap();
        assert!(section.chars().count() <= 3000);
        assert!(blocks[0]["text"]["text"].as_str().unwrap().chars().count() <= 150);
        // Only our own link markup may carry angle brackets.
        let stripped: String = section
            .split('\n')
            .filter(|l| !(l.starts_with('<') && l.ends_with('>')))
            .collect();
        assert!(
            !stripped.contains('<') && !stripped.contains('>'),
            "{section}"
        );
    }
    let app = bb
        .iter()
        .find(|h| h.header("x-service-event") == Some("application.received"))
        .unwrap()
        .json();
    assert!(
        app["blocks"][1]["text"]["text"]
            .as_str()
            .unwrap()
            .contains("Ada &lt;script&gt;")
    );
    let long = bb
        .iter()
        .filter(|h| h.header("x-service-event") == Some("job.updated"))
        .map(|h| h.json())
        .find(|v| {
            v["blocks"][1]["text"]["text"]
                .as_str()
                .unwrap()
                .contains("&lt;b&gt;&amp;")
        })
        .expect("escaped company name");
    assert!(long["text"].as_str().unwrap().chars().count() <= 3000);
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

async fn ssrf_refused_at_registration(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.webhooks.allow_private_targets = false;
    })
    .await;
    for url in [
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://10.0.0.1/hook",
        "http://172.16.5.4/hook",
        "http://192.168.1.1/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://0.0.0.0/hook",
        "http://224.0.0.1/hook",
        "http://[fe80::1]/hook",
        "http://[fd00::1]/hook",
        "http://2130706433/hook",
    ] {
        let r = t
            .post(
                "/webhooks",
                json!({"event": "*", "target_type": "webhook", "target_url": url}),
            )
            .await;
        r.expect_error(422, "validation_failed");
        assert_eq!(r.error_fields(), ["target_url"], "{url}");
    }
    // A public address literal is accepted (no connection is made at registration).
    let r = t
        .post(
            "/webhooks",
            json!({"event": "*", "target_type": "webhook", "target_url": "http://93.184.216.34/hook"}),
        )
        .await;
    r.expect(201);
    // PATCH checks the new URL too.
    let id = r.body["data"]["id"].as_str().unwrap();
    let r = t
        .patch(
            &format!("/webhooks/{id}"),
            json!({"target_url": "http://127.0.0.1/x"}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["target_url"]);
}

async fn a_refused_target_is_listed_with_the_other_bad_fields(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.webhooks.allow_private_targets = false;
    })
    .await;
    let codes = |r: &Resp| -> Vec<String> {
        r.body["error"]["details"]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{}:{}",
                    f["field"].as_str().unwrap(),
                    f["code"].as_str().unwrap()
                )
            })
            .collect()
    };
    let r = t
        .post(
            "/webhooks",
            json!({"event": "job.nope", "target_type": "webhook", "target_url": "http://127.0.0.1/x", "secret": "short", "extra": 1}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        codes(&r),
        [
            "event:invalid_value",
            "target_url:forbidden_target",
            "secret:too_short",
            "extra:unknown_field"
        ]
    );
    let r = t
        .post(
            "/webhooks",
            json!({"event": "*", "target_type": "webhook", "target_url": "http://93.184.216.34/hook"}),
        )
        .await;
    r.expect(201);
    let id = r.body["data"]["id"].as_str().unwrap();
    let r = t
        .patch(
            &format!("/webhooks/{id}"),
            json!({"secret": "short", "is_enabled": "yes", "target_url": "http://10.0.0.1/x"}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        codes(&r),
        [
            "target_url:forbidden_target",
            "is_enabled:invalid_type",
            "secret:too_short"
        ]
    );
    // Nothing was changed.
    let r = t.get(&format!("/webhooks/{id}")).await;
    assert_eq!(r.body["data"]["target_url"], "http://93.184.216.34/hook");
}

async fn ssrf_refused_at_connect_time(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.webhooks.allow_private_targets = false;
        c.webhooks.retry_schedule = vec![Duration::from_secs(1)];
    })
    .await;
    let rx = Receiver::start().await;
    // Stored as if the names had resolved to public addresses at registration (DNS
    // rebinding): at connect time they resolve to loopback and are refused.
    let port = rx.port();
    for url in [
        format!("http://localhost:{port}/rebind"),
        format!("http://127.0.0.1:{port}/literal"),
        format!("http://[::ffff:127.0.0.1]:{port}/mapped"),
    ] {
        store::upsert(
            t.db(),
            t.org_id,
            EventName::All,
            TargetType::Webhook,
            &url,
            None,
        )
        .await
        .unwrap();
    }
    emit(&t, "job.created", json!({})).await;
    assert_eq!(drain(&t.app).await, 3);
    assert!(rx.all().is_empty(), "no request reached the receiver");
    for s in store::list(t.db(), t.org_id).await.unwrap() {
        let ds = deliveries(&t, &s.id.to_string()).await;
        let log = ds[0]["attempt_log"].as_array().unwrap();
        assert_eq!(log[0]["status_code"], Value::Null);
        let err = log[0]["error"].as_str().unwrap();
        assert!(err.contains("refused"), "{}: {err}", s.target_url);
    }
}

async fn cidr_allow_list_lets_a_range_through(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.webhooks.allow_private_targets = false;
        c.webhooks.allowed_cidrs = vec!["127.0.0.0/8".into()];
    })
    .await;
    let rx = Receiver::start().await;
    subscribe(&t, "*", "webhook", &rx.url("/allowed"), None).await;
    t.post(
        "/webhooks",
        json!({"event": "*", "target_type": "webhook", "target_url": "http://10.0.0.1/x"}),
    )
    .await
    .expect_error(422, "validation_failed");
    emit(&t, "job.created", json!({})).await;
    drain(&t.app).await;
    assert_eq!(rx.hits("/allowed").len(), 1);
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

async fn worker_delivers_without_waiting_for_a_poll(b: Backend) {
    let t = TestApp::spawn(b).await;
    let rx = Receiver::start().await;
    subscribe(&t, "*", "webhook", &rx.url("/live"), None).await;
    for i in 0..5 {
        emit(&t, "job.created", json!({"n": i})).await;
    }
    let ok = rx
        .wait_until(Duration::from_secs(10), |h| h.len() >= 5)
        .await;
    assert!(ok, "the worker delivered {} of 5", rx.all().len());
    t.stop().await;
}

async fn graceful_shutdown_hands_attempts_back(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    rx.answer(
        "/stuck",
        Behavior {
            delay: Duration::from_secs(60),
            ..Behavior::default()
        },
    );
    let sub = subscribe(&t, "*", "webhook", &rx.url("/stuck"), None).await;
    // The worker loop, as `serve` runs it, with a stop signal of our own.
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let worker = tokio::spawn(jobboard::webhooks::run(t.app.clone(), stop_rx));
    emit(&t, "job.created", json!({})).await;
    assert!(
        rx.wait_until(Duration::from_secs(10), |h| !h.is_empty())
            .await
    );
    assert_eq!(leased(&t).await, 1, "the attempt is in flight");
    stop.send(true).unwrap();
    worker.await.unwrap();
    assert_eq!(leased(&t).await, 0, "the lease was handed back");
    let ds = store::list_deliveries(t.db(), t.org_id, sub.parse().unwrap(), 10)
        .await
        .unwrap();
    assert_eq!(ds[0].0.status, "pending");
    assert_eq!(ds[0].0.attempts, 0);
    // Handed back, it is sent again by the next worker.
    rx.status("/stuck", 200);
    assert_eq!(drain(&t.app).await, 1);
    assert_eq!(rx.hits("/stuck").len(), 2);
}

async fn leased(t: &TestApp) -> i64 {
    jobboard_store::dispatch!(t.db().reader(), p => {
        sqlx::query_scalar("SELECT COUNT(*) FROM webhook_deliveries WHERE lease_owner IS NOT NULL")
            .fetch_one(p)
            .await
            .unwrap()
    })
}

/// The real binary, killed with SIGKILL while deliveries are pending and in flight, then
/// started again: every event reaches the receiver at least once.
async fn sigkill_loses_no_event(b: Backend) {
    use std::process::{Command, Stdio};
    let (db_url, path) = fresh_database(b).await;
    let rx = Receiver::start().await;
    // The receiver is slow at first, so attempts are in flight when the server dies.
    rx.answer(
        "/durable",
        Behavior {
            delay: Duration::from_secs(30),
            ..Behavior::default()
        },
    );
    let bin = env!("CARGO_BIN_EXE_jobboard");
    let start = || {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let child = Command::new(bin)
            .env_remove("DATABASE_URL")
            .env_remove("JOBBOARD_CONFIG")
            .env("RUST_LOG", "warn")
            .env("JOBBOARD_WEBHOOK_TIMEOUT", "2")
            .env("JOBBOARD_WEBHOOK_RETRY_SCHEDULE", "1,1,1,1,1,1,1,1")
            .args([
                "--database",
                &db_url,
                "serve",
                "--allow-private-targets",
                "--listen",
            ])
            .arg(format!("127.0.0.1:{port}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        (child, port)
    };
    let (mut child, port) = start();
    let key = {
        use std::io::{BufRead, BufReader};
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let _ = lines.next();
        lines.next().unwrap().unwrap()
    };
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut status = 0;
    for _ in 0..200 {
        match client
            .post(format!("http://127.0.0.1:{port}/api/webhooks"))
            .header("x-api-key", &key)
            .json(
                &json!({"event": "*", "target_type": "webhook", "target_url": rx.url("/durable")}),
            )
            .send()
            .await
        {
            Ok(r) => {
                status = r.status().as_u16();
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(25)).await,
        }
    }
    assert_eq!(status, 201);
    // Events written by another process into the same database (organization 1).
    let db = jobboard_store::Db::connect(&db_url, 2).await.unwrap();
    let emit_n = |range: std::ops::Range<i64>| {
        let db = db.clone();
        async move {
            for i in range {
                let mut tx = db.begin().await.unwrap();
                events::emit(&mut tx, 1, "job.created", json!({"n": i}))
                    .await
                    .unwrap();
                tx.commit().await.unwrap();
            }
        }
    };
    emit_n(0..20).await;
    assert!(
        rx.wait_until(Duration::from_secs(15), |h| !h.is_empty())
            .await,
        "attempts in flight"
    );
    Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    let _ = child.wait();
    // More events while the server is down; the receiver recovers.
    emit_n(20..30).await;
    rx.status("/durable", 200);
    let (mut child, _) = start();
    let seen = |hits: &[crate::webhook_receiver::Hit]| {
        let mut n: Vec<i64> = hits
            .iter()
            .filter(|h| h.path == "/durable")
            .filter_map(|h| serde_json::from_slice::<Value>(&h.body).ok())
            .filter_map(|v| v["data"]["n"].as_i64())
            .collect();
        n.sort();
        n.dedup();
        n.len()
    };
    let all = rx
        .wait_until(Duration::from_secs(60), |h| seen(h) == 30)
        .await;
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let exit = child.wait().unwrap();
    assert!(all, "only {} of 30 events arrived", seen(&rx.all()));
    assert!(exit.success(), "{exit:?}");
    db.close().await;
    if let Some(p) = path {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", p.display()));
        }
    }
}

async fn a_burst_of_attempts_is_recorded_once_each(b: Backend) {
    // Succeeded attempts are recorded in batches, failed ones one by one: a burst mixes
    // both, and every delivery's log must still show exactly its own attempt.
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    rx.answer(
        "/bad",
        Behavior {
            status: 500,
            ..Behavior::default()
        },
    );
    let ok1 = subscribe(&t, "*", "webhook", &rx.url("/ok1"), None).await;
    let ok2 = subscribe(&t, "*", "webhook", &rx.url("/ok2"), None).await;
    let bad = subscribe(&t, "*", "webhook", &rx.url("/bad"), None).await;
    for _ in 0..60 {
        emit(&t, "job.created", samples()[0].1.clone()).await;
    }
    assert_eq!(drain(&t.app).await, 180);
    assert_eq!(drain(&t.app).await, 0, "nothing is due again at once");
    for path in ["/ok1", "/ok2", "/bad"] {
        assert_eq!(rx.hits(path).len(), 60, "{path}");
    }
    for (sub, status, code) in [
        (&ok1, "succeeded", 200),
        (&ok2, "succeeded", 200),
        (&bad, "pending", 500),
    ] {
        let r = t
            .get(&format!("/webhooks/{sub}/deliveries?limit=100"))
            .await;
        r.expect(200);
        let list = r.body["data"].as_array().unwrap();
        assert_eq!(list.len(), 60);
        for d in list {
            assert_eq!(d["status"], status, "{d}");
            assert_eq!(d["attempts"], 1, "{d}");
            let log = d["attempt_log"].as_array().unwrap();
            assert_eq!(log.len(), 1, "{d}");
            assert_eq!(log[0]["attempt"], 1);
            assert_eq!(log[0]["status_code"], code);
        }
    }
}
