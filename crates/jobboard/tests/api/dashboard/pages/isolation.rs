//! These pages never reach another organization's records.

use serde_json::{Value, json};

use super::*;
use crate::backends;

backends!(new_pages_never_reach_another_organization);

async fn new_pages_never_reach_another_organization(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let (org_b, key_b) = t.new_org("Other org", "*", 1000, 1000).await;
    let as_b = |method: Method, path: &str, body: Value| {
        let t = &t;
        let key_b = key_b.clone();
        let path = path.to_string();
        async move { t.req(method, &path).key(&key_b).json(body).send().await }
    };
    let job_b = api_job(&t, &key_b, "Secret role").await;
    as_b(
        Method::PATCH,
        &format!("/jobs/{job_b}"),
        json!({"status": "active"}),
    )
    .await
    .expect(200);
    let app_b = as_b(
        Method::POST,
        &format!("/jobs/{job_b}/applications"),
        json!({"name": "Hidden Applicant", "email": "hidden@example.com"}),
    )
    .await;
    let app_b = app_b.body["data"]["id"].as_str().unwrap().to_string();
    let member_b = as_b(
        Method::POST,
        "/members/sync",
        json!({"email": "secret@example.com", "name": "Secret Member"}),
    )
    .await;
    let member_b = member_b.body["data"]["member"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let hook_b = as_b(
        Method::POST,
        "/webhooks",
        json!({"event": "*", "target_type": "webhook", "target_url": "https://hooks.example.com/b"}),
    )
    .await;
    let hook_b = hook_b.body["data"]["id"].as_str().unwrap().to_string();
    as_b(
        Method::POST,
        "/cms",
        json!({"slug": "secrets", "name": "Secret things", "schema": [{"name": "title", "type": "text"}]}),
    )
    .await
    .expect(201);
    let item_b = as_b(
        Method::POST,
        "/cms/secrets",
        json!({"data": {"title": "Hidden entry"}, "status": "pending_review"}),
    )
    .await;
    let item_b = item_b.body["item"]["id"].as_str().unwrap().to_string();
    let events_before = event_types(&t, org_b).await;

    let ada = Browser::signed_in(&t, "ada@example.com").await;
    for path in [
        format!("/dashboard/applications?job={job_b}"),
        format!("/dashboard/members/{member_b}"),
        format!("/dashboard/webhooks/{hook_b}"),
        "/dashboard/cms/secrets/items".to_string(),
        "/dashboard/cms/secrets/edit".to_string(),
        format!("/dashboard/cms/secrets/items/{item_b}"),
    ] {
        let r = ada.get(&path).await;
        r.expect(404);
        for secret in ["Secret", "Hidden", "hooks.example.com"] {
            assert!(!r.text.contains(secret), "{path} shows {secret}");
        }
    }
    for path in [
        "/dashboard/applications",
        "/dashboard/applications?status=new",
        "/dashboard/members",
        "/dashboard/members?search=secret",
        "/dashboard/webhooks",
        "/dashboard/cms",
        "/dashboard/analytics?period=12mo",
    ] {
        let r = ada.get(path).await;
        r.expect(200);
        for secret in ["Secret", "Hidden", "hooks.example.com"] {
            assert!(!r.text.contains(secret), "{path} shows {secret}");
        }
    }
    let token = ada.csrf("/dashboard/webhooks").await;
    let tk = token.as_str();
    for (path, fields) in [
        (
            format!("/dashboard/applications/{app_b}/status"),
            vec![("status", "hired")],
        ),
        (
            format!("/dashboard/webhooks/{hook_b}/enabled"),
            vec![("enabled", "false")],
        ),
        (format!("/dashboard/webhooks/{hook_b}/test"), vec![]),
        (format!("/dashboard/webhooks/{hook_b}/delete"), vec![]),
        (
            "/dashboard/cms/secrets/edit".to_string(),
            vec![("name", "Taken"), ("s0_name", "x"), ("s0_type", "text")],
        ),
        (
            format!("/dashboard/cms/secrets/items/{item_b}/status"),
            vec![("status", "published")],
        ),
        (
            format!("/dashboard/cms/secrets/items/{item_b}"),
            vec![("data_title", "Taken"), ("status", "published")],
        ),
        (
            format!("/dashboard/cms/secrets/items/{item_b}/delete"),
            vec![],
        ),
        (
            "/dashboard/cms/secrets/items/new".to_string(),
            vec![("data_title", "Planted"), ("status", "published")],
        ),
    ] {
        let mut all = fields.clone();
        all.push(("csrf", tk));
        ada.post(&path, &all).await.expect(404);
    }
    // A's new collection with B's slug is A's own.
    let r = ada
        .post(
            "/dashboard/cms/new",
            &[
                ("name", "Mine"),
                ("slug", "secrets"),
                ("s0_name", "title"),
                ("s0_type", "text"),
                ("csrf", tk),
            ],
        )
        .await;
    redirect(&r);
    // Nothing of B changed.
    let app = as_b(Method::GET, &format!("/applications/{app_b}"), json!({})).await;
    assert_eq!(app.body["data"]["status"], "new");
    let hook = as_b(Method::GET, &format!("/webhooks/{hook_b}"), json!({})).await;
    assert_eq!(hook.body["data"]["is_enabled"], true);
    let c = as_b(Method::GET, "/cms/secrets/schema", json!({})).await;
    assert_eq!(c.body["collection"]["name"], "Secret things");
    let item = as_b(Method::GET, &format!("/cms/secrets/{item_b}"), json!({})).await;
    assert_eq!(item.body["item"]["status"], "pending_review");
    assert_eq!(item.body["item"]["data"]["title"], "Hidden entry");
    let items = as_b(Method::GET, "/cms/secrets?status=published", json!({})).await;
    assert_eq!(items.body["total"], 0);
    assert_eq!(event_types(&t, org_b).await, events_before);
}
