//! Items: their endpoints, body validation, list paging, order and status, and scopes and
//! tenancy.

use reqwest::Method;
use serde_json::{Value, json};

use super::*;
use crate::backends;

backends!(
    item_endpoints,
    item_body_validation,
    list_paging_order_and_status,
    scopes_and_tenancy,
);

async fn item_endpoints(b: Backend) {
    let t = TestApp::spawn(b).await;
    blog(&t, "public").await;
    let owner = uuid::Uuid::now_v7();
    let r = t
        .post(
            "/cms/blog",
            json!({"data": {"title": "Hello", "body": "First"}, "owner_user_id": owner}),
        )
        .await;
    r.expect(201);
    let it = r.body["item"].clone();
    assert!(r.body.get("data").is_none());
    let keys: Vec<&str> = it.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "id",
            "data",
            "status",
            "starts_at",
            "expires_at",
            "position",
            "created_at",
            "updated_at",
            "owner_user_id"
        ]
    );
    assert_eq!(it["status"], "published");
    assert_eq!(it["position"], 0);
    assert_eq!(it["starts_at"], Value::Null);
    assert_eq!(it["expires_at"], Value::Null);
    assert_eq!(it["owner_user_id"], owner.to_string());
    let id = it["id"].as_str().unwrap().to_string();
    let path = format!("/cms/blog/{id}");

    let r = t.get(&path).await;
    r.expect(200);
    assert_eq!(r.body["item"], it);

    // POST with id updates: data replaced, omitted fields kept.
    let r = t
        .post(
            "/cms/blog",
            json!({"id": id, "data": {"title": "Hello again"}, "status": "draft"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["item"]["id"], id.as_str());
    assert_eq!(r.body["item"]["data"], json!({"title": "Hello again"}));
    assert_eq!(r.body["item"]["status"], "draft");
    assert_eq!(r.body["item"]["owner_user_id"], owner.to_string());
    assert_eq!(r.body["item"]["created_at"], it["created_at"]);
    let r = t
        .post(
            "/cms/blog",
            json!({"id": uuid::Uuid::now_v7(), "data": {"title": "x"}}),
        )
        .await;
    r.expect_error(404, "not_found");
    assert_eq!(r.body["error"]["details"]["resource"], "item");

    // PATCH without data leaves data untouched.
    let starts = at(-60_000).to_rfc3339();
    let r = t
        .patch(
            &path,
            json!({"status": "published", "position": 7, "starts_at": starts}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["item"]["data"], json!({"title": "Hello again"}));
    assert_eq!(r.body["item"]["status"], "published");
    assert_eq!(r.body["item"]["position"], 7);
    assert_eq!(r.body["item"]["starts_at"], starts.as_str());
    // PATCH with data replaces the whole object, validated.
    let r = t.patch(&path, json!({"data": {"body": "only body"}})).await;
    r.expect_error(422, "schema_validation_failed");
    assert_eq!(r.error_fields(), ["data.title"]);
    let r = t
        .patch(
            &path,
            json!({"data": {"title": "New", "junk": 1}, "starts_at": null}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["item"]["data"], json!({"title": "New"}));
    assert_eq!(r.body["item"]["starts_at"], Value::Null);
    assert_eq!(r.body["item"]["position"], 7);
    assert_eq!(t.get(&path).await.body["item"], r.body["item"]);
    let r = t.patch(&path, json!({})).await;
    r.expect_error(422, "validation_failed");
    let r = t
        .patch(
            &path,
            json!({"status": "gone", "position": null, "owner_user_id": owner}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["status", "position", "owner_user_id"]);

    // DELETE.
    let r = t.delete(&path).await;
    r.expect(200);
    assert_eq!(r.body, json!({"id": id, "deleted": true}));
    t.get(&path).await.expect_error(404, "not_found");
    t.delete(&path).await.expect_error(404, "not_found");
    t.patch(&path, json!({"status": "draft"}))
        .await
        .expect_error(404, "not_found");

    // Malformed ids and unknown collections are 404.
    t.get("/cms/blog/not-a-uuid")
        .await
        .expect_error(404, "not_found");
    t.delete("/cms/blog/123")
        .await
        .expect_error(404, "not_found");
    let r = t.get("/cms/nope").await;
    r.expect_error(404, "not_found");
    assert_eq!(r.body["error"]["details"]["resource"], "collection");
    t.post("/cms/nope", json!({"data": {}}))
        .await
        .expect_error(404, "not_found");
    t.get(&format!("/cms/nope/{id}"))
        .await
        .expect_error(404, "not_found");
}

async fn item_body_validation(b: Backend) {
    let t = TestApp::spawn(b).await;
    blog(&t, "public").await;
    // Top-level problems are validation_failed, every one named.
    let r = t
        .post(
            "/cms/blog",
            json!({"data": "text", "status": "live", "starts_at": "tomorrow", "expires_at": 5,
                   "position": 1.5, "owner_user_id": "x", "id": "nope", "colour": "red"}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        r.error_fields(),
        [
            "id",
            "data",
            "status",
            "starts_at",
            "expires_at",
            "position",
            "owner_user_id",
            "colour"
        ]
    );
    let r = t.post("/cms/blog", json!({"status": "draft"})).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["data"]);
    // A window that closes before it opens.
    let r = t
        .post(
            "/cms/blog",
            json!({"data": {"title": "x"}, "starts_at": at(10_000).to_rfc3339(),
                   "expires_at": at(5_000).to_rfc3339()}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["expires_at"]);
    // Every status is accepted.
    for s in [
        "draft",
        "pending_review",
        "published",
        "expired",
        "archived",
    ] {
        let it = item(&t, json!({"data": {"title": s}, "status": s})).await;
        assert_eq!(it["status"], s);
    }
    // Bodies that are not JSON objects.
    t.req(Method::POST, "/cms/blog")
        .raw("[1]", Some("application/json"))
        .send()
        .await
        .expect_error(400, "invalid_json");
}

async fn list_paging_order_and_status(b: Backend) {
    let t = TestApp::spawn(b).await;
    blog(&t, "public").await;
    item(&t, json!({"data": {"title": "a"}, "position": 2})).await;
    item(&t, json!({"data": {"title": "b"}})).await;
    item(&t, json!({"data": {"title": "c"}})).await;
    item(&t, json!({"data": {"title": "d"}, "position": -1})).await;
    item(&t, json!({"data": {"title": "e"}, "status": "draft"})).await;

    let r = t.get("/cms/blog").await;
    r.expect(200);
    // Position ascending, then newest first.
    assert_eq!(titles(&r), ["d", "c", "b", "a"]);
    assert_eq!(r.body["total"], 4);
    assert_eq!(r.body["limit"], 50);
    assert_eq!(r.body["offset"], 0);
    let keys: Vec<&str> = r
        .body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["items", "total", "limit", "offset"]);

    let r = t.get("/cms/blog?limit=2&offset=1").await;
    assert_eq!(titles(&r), ["c", "b"]);
    assert_eq!(r.body["total"], 4);
    assert_eq!(
        (r.body["limit"].clone(), r.body["offset"].clone()),
        (json!(2), json!(1))
    );
    let r = t.get("/cms/blog?offset=10").await;
    assert_eq!(titles(&r), Vec::<String>::new());
    assert_eq!(r.body["total"], 4);
    t.get("/cms/blog?limit=500").await.expect(200);

    let r = t.get("/cms/blog?status=draft").await;
    assert_eq!(titles(&r), ["e"]);
    assert_eq!(r.body["total"], 1);
    let r = t.get("/cms/blog?status=archived").await;
    assert_eq!(r.body["total"], 0);

    for (q, field) in [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=x", "limit"),
        ("offset=-1", "offset"),
        ("status=live", "status"),
        ("page=2", "page"),
    ] {
        let r = t.get(&format!("/cms/blog?{q}")).await;
        r.expect_error(422, "validation_failed");
        assert_eq!(r.error_fields(), [field], "{q}");
    }
}

async fn scopes_and_tenancy(b: Backend) {
    let t = TestApp::spawn(b).await;
    blog(&t, "public").await;
    let it = item(&t, json!({"data": {"title": "mine"}})).await;
    let path = format!("/cms/blog/{}", it["id"].as_str().unwrap());

    let reader = t.new_key(t.org_id, "cms:read", 100, 30).await;
    for p in ["/cms", "/cms/blog", "/cms/blog/schema", path.as_str()] {
        t.req(Method::GET, p).key(&reader).send().await.expect(200);
    }
    for (m, p) in [
        (Method::POST, "/cms"),
        (Method::POST, "/cms/blog"),
        (Method::PATCH, path.as_str()),
    ] {
        let r = t.req(m, p).key(&reader).json(json!({})).send().await;
        r.expect_error(403, "insufficient_scope");
        assert_eq!(r.body["error"]["details"]["required"], "cms:write");
    }
    t.req(Method::DELETE, &path)
        .key(&reader)
        .send()
        .await
        .expect_error(403, "insufficient_scope");
    let jobs_only = t.new_key(t.org_id, "jobs:read jobs:write", 100, 30).await;
    let r = t.req(Method::GET, "/cms/blog").key(&jobs_only).send().await;
    r.expect_error(403, "insufficient_scope");
    assert_eq!(r.body["error"]["details"]["required"], "cms:read");

    // Another organization sees none of it, and may use the same slug.
    let (_, other) = t.new_org("Other", "*", 100, 30).await;
    let get = |p: &str| t.req(Method::GET, p).key(&other).send();
    assert_eq!(get("/cms").await.body["collections"], json!([]));
    get("/cms/blog").await.expect_error(404, "not_found");
    get("/cms/blog/schema").await.expect_error(404, "not_found");
    get(&path).await.expect_error(404, "not_found");
    t.req(Method::DELETE, &path)
        .key(&other)
        .send()
        .await
        .expect_error(404, "not_found");
    t.req(Method::POST, "/cms")
        .key(&other)
        .json(json!({"slug": "blog", "name": "Theirs", "schema": [{"name": "title", "type": "text"}]}))
        .send()
        .await
        .expect(201);
    let r = t.req(Method::GET, "/cms/blog").key(&other).send().await;
    assert_eq!(r.body["total"], 0);
    t.req(Method::GET, &path)
        .key(&other)
        .send()
        .await
        .expect_error(404, "not_found");
    // Posting an update with my item's id into their collection is 404 too.
    t.req(Method::POST, "/cms/blog")
        .key(&other)
        .json(json!({"id": it["id"], "data": {"title": "stolen"}}))
        .send()
        .await
        .expect_error(404, "not_found");
    assert_eq!(t.get(&path).await.body["item"]["data"]["title"], "mine");
}
