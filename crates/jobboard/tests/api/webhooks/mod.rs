//! Webhooks: subscriptions, fan-out, signed delivery, retries, disabling, SSRF, chat bodies,
//! and durability across a SIGKILL, against a real receiver on 127.0.0.1.

mod delivery;
mod durability;
mod log_retention;
mod retries;
mod ssrf;
mod subscriptions;

use std::time::Duration;

use jobboard_store::events;
use serde_json::{Value, json};

use crate::common::*;

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

async fn deliveries(t: &TestApp, sub: &str) -> Vec<Value> {
    let r = t.get(&format!("/webhooks/{sub}/deliveries")).await;
    r.expect(200);
    r.body["data"].as_array().unwrap().clone()
}
