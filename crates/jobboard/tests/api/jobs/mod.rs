//! Jobs: create, read, update, delete, list with filters and search, expiry, events,
//! tenant isolation, the search index and the list cache.

mod cache;
mod creation;
mod index_budget;
mod lifecycle;
mod lists;
mod places;
mod search_index;

use reqwest::Method;
use serde_json::{Value, json};

use jobboard_domain::OrgId;

use crate::common::*;

fn job(title: &str) -> Value {
    json!({"title": title, "description": "<p>We build things.</p>", "company_name": "Acme"})
}

async fn create(t: &TestApp, body: Value) -> Value {
    let r = t.post("/jobs", body).await;
    r.expect(201);
    r.body["data"].clone()
}

async fn create_active(t: &TestApp, title: &str, extra: Value) -> String {
    let mut body = job(title);
    body["status"] = json!("active");
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    create(t, body).await["id"].as_str().unwrap().to_string()
}

/// Creates a category and returns its id.
async fn category(t: &TestApp, name: &str) -> String {
    let r = t.post("/categories", json!({ "name": name })).await;
    r.expect(201);
    r.body["data"]["id"].as_str().unwrap().to_string()
}

fn titles(r: &Resp) -> Vec<String> {
    r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["title"].as_str().unwrap().to_string())
        .collect()
}

async fn events(t: &TestApp, org: OrgId) -> Vec<(String, Value)> {
    jobboard_store::events::list_for_org(t.db(), org)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.event_type, e.data.0))
        .collect()
}

/// The titles and total of a list read afresh.
async fn fresh(t: &TestApp, path: &str) -> (Vec<String>, i64) {
    let r = t
        .req(Method::GET, &format!("/jobs?{path}"))
        .header("cache-control", "no-cache")
        .send()
        .await;
    r.expect(200);
    let total = r.body["meta"]["pagination"]["total_items"]
        .as_i64()
        .unwrap();
    (titles(&r), total)
}
