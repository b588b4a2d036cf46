//! Requests: missing, invalid and revoked keys, scopes, tenant isolation, body and routing
//! errors, request ids, and JSON with NUL characters.

use reqwest::Method;
use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    missing_and_invalid_keys,
    revoked_key_is_refused_at_once,
    scopes_are_enforced,
    tenants_are_isolated,
    body_errors,
    routing_errors,
    request_ids,
    free_form_json_with_nul_characters_is_refused,
);

async fn missing_and_invalid_keys(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t.req(Method::GET, "/categories").no_key().send().await;
    r.expect_error(401, "missing_api_key");
    assert_eq!(r.body["error"]["details"], Value::Null);
    t.req(Method::GET, "/categories")
        .key("jb_nope")
        .send()
        .await
        .expect_error(401, "invalid_api_key");
    let fake = format!("jb_{}", "A".repeat(40));
    t.req(Method::GET, "/categories")
        .key(&fake)
        .send()
        .await
        .expect_error(401, "invalid_api_key");
    // POST without key is refused before the body is looked at.
    t.req(Method::POST, "/categories")
        .no_key()
        .json(json!({"name": "x"}))
        .send()
        .await
        .expect_error(401, "missing_api_key");
    t.get("/categories").await.expect(200);
}

async fn revoked_key_is_refused_at_once(b: Backend) {
    let t = TestApp::spawn(b).await;
    t.get("/categories").await.expect(200);
    let found = jobboard_domain::keys::store::list(t.db(), t.org_id)
        .await
        .unwrap();
    jobboard_domain::keys::store::revoke(t.db(), found[0].id)
        .await
        .unwrap();
    t.get("/categories")
        .await
        .expect_error(401, "invalid_api_key");
}

async fn scopes_are_enforced(b: Backend) {
    let t = TestApp::spawn(b).await;
    let read_only = t.new_key(t.org_id, "jobs:read", 100, 30).await;
    t.req(Method::GET, "/categories")
        .key(&read_only)
        .send()
        .await
        .expect(200);
    let r = t
        .req(Method::POST, "/categories")
        .key(&read_only)
        .json(json!({"name": "Design"}))
        .send()
        .await;
    r.expect_error(403, "insufficient_scope");
    assert_eq!(r.body["error"]["details"]["required"], "jobs:write");
    let cms_only = t.new_key(t.org_id, "cms:read", 100, 30).await;
    t.req(Method::GET, "/categories")
        .key(&cms_only)
        .send()
        .await
        .expect_error(403, "insufficient_scope");
}

async fn tenants_are_isolated(b: Backend) {
    let t = TestApp::spawn(b).await;
    t.post("/categories", json!({"name": "Engineering"}))
        .await
        .expect(201);
    let (_, other) = t.new_org("Other", "*", 100, 30).await;
    let r = t.req(Method::GET, "/categories").key(&other).send().await;
    r.expect(200);
    assert_eq!(r.body["data"], json!([]));
    // The same slug is free in the other organization.
    t.req(Method::POST, "/categories")
        .key(&other)
        .json(json!({"name": "Engineering"}))
        .send()
        .await
        .expect(201);
    let mine = t.get("/categories").await;
    assert_eq!(mine.body["data"].as_array().unwrap().len(), 1);
}

async fn body_errors(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t
        .req(Method::POST, "/categories")
        .raw("{\"name\": ", Some("application/json"))
        .send()
        .await;
    r.expect_error(400, "invalid_json");
    assert_eq!(r.body["error"]["details"]["line"], 1);
    assert!(r.body["error"]["details"]["column"].as_u64().is_some());
    t.req(Method::POST, "/categories")
        .raw("[1, 2]", Some("application/json"))
        .send()
        .await
        .expect_error(400, "invalid_json");
    t.req(Method::POST, "/categories")
        .raw("", Some("application/json"))
        .send()
        .await
        .expect_error(400, "invalid_json");
    t.req(Method::POST, "/categories")
        .raw("{\"name\": \"x\"}", Some("text/plain"))
        .send()
        .await
        .expect_error(415, "unsupported_media_type");
    t.req(Method::POST, "/categories")
        .raw("{\"name\": \"x\"}", None)
        .send()
        .await
        .expect_error(415, "unsupported_media_type");
    let big = format!("{{\"name\": \"{}\"}}", "x".repeat(2 * 1024 * 1024));
    let r = t
        .req(Method::POST, "/categories")
        .raw(big, Some("application/json"))
        .send()
        .await;
    r.expect_error(413, "payload_too_large");
    assert_eq!(r.body["error"]["details"]["limit_bytes"], 1024 * 1024);
    // Every bad field at once, unknown fields named.
    let r = t
        .post(
            "/categories",
            json!({"name": 5, "slug": "Not A Slug", "colour": "red"}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["name", "slug", "colour"]);
    let f = &r.body["error"]["details"]["fields"][0];
    assert_eq!(f["code"], "invalid_type");
    assert!(f["message"].as_str().is_some());
    // Nothing was stored by the failures.
    assert_eq!(t.get("/categories").await.body["data"], json!([]));
    // A conflict on the slug.
    t.post("/categories", json!({"name": "Sales"}))
        .await
        .expect(201);
    t.post("/categories", json!({"name": "Sales!"}))
        .await
        .expect_error(409, "conflict");
}

async fn routing_errors(b: Backend) {
    let t = TestApp::spawn(b).await;
    t.get("/no-such-thing")
        .await
        .expect_error(404, "route_not_found");
    t.req(Method::GET, "/api/no/such")
        .no_key()
        .send()
        .await
        .expect_error(404, "route_not_found");
    let r = t.delete("/categories").await;
    r.expect_error(405, "method_not_allowed");
    let allowed: Vec<&str> = r.body["error"]["details"]["allowed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        allowed.contains(&"GET") && allowed.contains(&"POST"),
        "{allowed:?}"
    );
    assert!(r.header("allow").unwrap().contains("POST"));
    // Unknown query parameters are refused, naming the parameter.
    let r = t.get("/categories?colour=red").await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["colour"]);
}

async fn request_ids(b: Backend) {
    let t = TestApp::spawn(b).await;
    let a = t.get("/categories").await;
    let b2 = t.get("/nope").await;
    let id_a = a.header("x-request-id").unwrap().to_string();
    assert!(!id_a.is_empty());
    assert_ne!(Some(id_a.as_str()), b2.header("x-request-id"));
    let r = t
        .req(Method::GET, "/categories")
        .header("x-request-id", "client-chosen-42")
        .send()
        .await;
    assert_eq!(r.header("x-request-id"), Some("client-chosen-42"));
    let r = t.req(Method::GET, "/healthz").no_key().send().await;
    assert!(r.header("x-request-id").is_some());
}

async fn free_form_json_with_nul_characters_is_refused(b: Backend) {
    let t = TestApp::spawn(b).await;
    // PostgreSQL cannot store NUL in text or JSONB: refused up front on both backends.
    let r = t
        .post(
            "/members/sync",
            json!({"email": "nul@example.com", "customFields": {"a\u{0}": 1, "b": ["x"]}}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["customFields"]);
    let r = t
        .post(
            "/members/sync",
            json!({"email": "nul@example.com", "customFields": {"b": [{"c": "x\u{0}"}]}}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    t.post(
        "/members/sync",
        json!({"email": "nul@example.com", "customFields": {"b": ["x"]}}),
    )
    .await
    .expect(201);
}
