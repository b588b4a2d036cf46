//! Every event type, caused by real API calls (and the scheduler), reaches a subscribed
//! receiver on 127.0.0.1, signed, with the data of the contract.

use std::{collections::BTreeMap, time::Duration};

use serde_json::{Value, json};

use crate::{backends, common::*, webhook_receiver::Receiver};

backends!(api_changes_reach_the_receiver);

const SECRET: &str = "a-very-secret-secret-0123";

async fn api_changes_reach_the_receiver(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
        c.webhooks.retry_schedule = vec![Duration::from_secs(1)];
    })
    .await;
    let rx = Receiver::start().await;
    rx.secret("/all", SECRET);
    t.post("/webhooks", json!({"event": "*", "target_type": "webhook", "target_url": rx.url("/all"), "secret": SECRET}))
        .await
        .expect(201);

    // Jobs: created pending, approved, edited, applied to, expired, deleted.
    let r = t.post("/jobs", json!({"title": "Rust Engineer", "description": "<p>Build</p>", "company_name": "Acme", "location": "Berlin"})).await;
    r.expect(201);
    let job = r.body["data"]["id"].as_str().unwrap().to_string();
    t.patch(&format!("/jobs/{job}"), json!({"status": "active"}))
        .await
        .expect(200);
    t.patch(
        &format!("/jobs/{job}"),
        json!({"title": "Senior Rust Engineer"}),
    )
    .await
    .expect(200);
    let r = t
        .post(
            &format!("/jobs/{job}/applications"),
            json!({"name": "Ada", "email": "ada@example.com"}),
        )
        .await;
    r.expect(201);
    let application = r.body["data"]["id"].as_str().unwrap().to_string();
    t.patch(
        &format!("/applications/{application}"),
        json!({"status": "reviewing"}),
    )
    .await
    .expect(200);
    let r = t.post("/jobs", json!({"title": "Temp", "description": "x", "company_name": "Acme", "status": "active"})).await;
    let temp = r.body["data"]["id"].as_str().unwrap().to_string();
    let past = jobboard_store::Ts::now().plus(chrono::Duration::seconds(-1));
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query("UPDATE jobs SET expires_at = $1 WHERE id = $2")
            .bind(past)
            .bind(uuid::Uuid::parse_str(&temp).unwrap())
            .execute(p)
            .await
            .unwrap();
    });
    jobboard::scheduler::tick(&t.app).await;
    let r = t
        .post(
            "/jobs",
            json!({"title": "Gone", "description": "x", "company_name": "Acme"}),
        )
        .await;
    let gone = r.body["data"]["id"].as_str().unwrap().to_string();
    t.delete(&format!("/jobs/{gone}")).await.expect(200);

    // Members: created with a subscription and a payment, then the subscription canceled.
    t.post("/plans", json!({"name": "Pro", "price": 49, "currency": "EUR", "interval": "month", "jobsIncluded": 3}))
        .await
        .expect(201);
    let r = t
        .post(
            "/members/sync",
            json!({"email": "member@example.com", "access": {"planName": "Pro"},
                   "payment": {"jobId": job, "amount": 19.99, "currency": "EUR"}}),
        )
        .await;
    r.expect(201);
    let user = r.body["data"]["member"]["id"].as_str().unwrap().to_string();
    t.post(
        "/members/sync",
        json!({"email": "member@example.com", "access": {"planName": "Pro", "status": "canceled"}}),
    )
    .await
    .expect(200);

    jobboard::delivery::webhooks::drain(&t.app).await;
    let hits = rx.hits("/all");
    let mut by_event: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for h in &hits {
        assert_eq!(
            h.signature_valid,
            Some(true),
            "every delivery is signed with the secret"
        );
        let body = h.json();
        assert_eq!(h.header("x-service-event"), body["event"].as_str());
        assert!(h.header("x-service-delivery").is_some());
        assert_eq!(body["organization_id"], t.org_id.0);
        assert!(body["timestamp"].as_str().unwrap().ends_with('Z'));
        by_event
            .entry(body["event"].as_str().unwrap().to_string())
            .or_default()
            .push(body["data"].clone());
    }
    let kinds: Vec<&str> = by_event.keys().map(String::as_str).collect();
    assert_eq!(
        kinds,
        [
            "application.received",
            "application.status_changed",
            "job.approved",
            "job.created",
            "job.deleted",
            "job.expired",
            "job.status_changed",
            "job.updated",
            "payment.received",
            "subscription.canceled",
            "subscription.created",
            "user.created",
        ]
    );
    // Delivery order is not guaranteed: pick events by their subject.
    let first = |e: &str| by_event[e][0].clone();
    let created = by_event["job.created"]
        .iter()
        .find(|d| d["job_id"] == job.as_str())
        .unwrap()
        .clone();
    assert_eq!(by_event["job.created"].len(), 3);
    assert_eq!(created["job_id"], job);
    assert_eq!(created["title"], "Rust Engineer");
    assert_eq!(created["company_name"], "Acme");
    assert_eq!(created["status"], "pending");
    assert_eq!(created["location"], "Berlin");
    assert!(created["url"].as_str().unwrap().starts_with("/jobs/"));
    assert_eq!(first("job.approved")["job_id"], job);
    assert!(
        by_event["job.status_changed"]
            .iter()
            .any(|d| d["job_id"] == job.as_str()
                && d["previous_status"] == "pending"
                && d["status"] == "active")
    );
    assert!(
        by_event["job.status_changed"]
            .iter()
            .any(|d| d["job_id"] == temp.as_str() && d["status"] == "expired")
    );
    assert!(by_event["job.updated"].iter().any(|d| {
        d["changed"]
            .as_array()
            .is_some_and(|c| c.contains(&json!("title")))
    }));
    assert_eq!(first("job.expired")["job_id"], temp);
    assert_eq!(first("job.deleted")["job_id"], gone);
    assert_eq!(first("application.received")["application_id"], application);
    assert_eq!(
        first("application.received")["job_title"],
        "Senior Rust Engineer"
    );
    assert_eq!(first("application.status_changed")["status"], "reviewing");
    assert_eq!(first("user.created")["user_id"], user);
    assert_eq!(first("subscription.created")["user_id"], user);
    assert_eq!(first("subscription.canceled")["status"], "canceled");
    let payment = first("payment.received");
    assert_eq!(payment["job_id"], job);
    assert_eq!(payment["currency"], "EUR");
    assert_eq!(payment["amount"].to_string(), "19.99");
    // Nothing is delivered twice on a second drain.
    jobboard::delivery::webhooks::drain(&t.app).await;
    assert_eq!(rx.hits("/all").len(), hits.len());
}
