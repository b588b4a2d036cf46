//! CMS collections and items: schemas, every field type, item endpoints, publishing
//! windows, the scheduler's expiry, ETags, and a cache that is never stale.

use jobboard_store::Ts;

use jobboard_domain::cms::{self as store, ListFilter};

use jobboard::server::{self, App};
use reqwest::Method;
use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    collections_upsert_list_and_read,
    collection_validation,
    every_field_type_valid_and_invalid,
    item_endpoints,
    item_body_validation,
    list_paging_order_and_status,
    public_list_windows_relative_to_now,
    window_boundaries_are_exact,
    a_cached_list_turns_over_at_the_next_window_boundary,
    scheduler_expires_published_items_once,
    etag_and_not_modified,
    cache_control_by_visibility,
    reads_are_served_from_the_cache,
    a_read_right_after_a_write_sees_it,
    a_write_on_another_node_purges_this_nodes_cache,
    scopes_and_tenancy,
    a_select_field_needs_options,
);

fn at(offset_ms: i64) -> Ts {
    Ts::now().plus(chrono::Duration::milliseconds(offset_ms))
}

async fn blog(t: &TestApp, visibility: &str) {
    t.post(
        "/cms",
        json!({"slug": "blog", "name": "Blog", "visibility": visibility, "schema": [
            {"name": "title", "type": "text", "required": true},
            {"name": "body", "type": "longtext"},
        ]}),
    )
    .await
    .expect(201);
}

async fn item(t: &TestApp, body: Value) -> Value {
    let r = t.post("/cms/blog", body).await;
    r.expect(201);
    r.body["item"].clone()
}

fn titles(r: &Resp) -> Vec<String> {
    r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["data"]["title"].as_str().unwrap().to_string())
        .collect()
}

async fn collections_upsert_list_and_read(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t
        .post(
            "/cms",
            json!({"slug": "partners", "name": "Partners", "visibility": "public", "schema": [
                {"name": "name", "type": "text", "required": true},
                {"name": "logo", "type": "image"},
                {"name": "site", "type": "url"},
                {"name": "tier", "type": "select", "options": ["gold", "silver"]},
            ]}),
        )
        .await;
    r.expect(201);
    let c = &r.body["collection"];
    assert!(r.body.get("data").is_none(), "no data/meta envelope");
    assert_eq!(c["slug"], "partners");
    assert_eq!(c["name"], "Partners");
    assert_eq!(c["visibility"], "public");
    assert_eq!(
        c["schema"],
        json!([
            {"name": "name", "type": "text", "required": true},
            {"name": "logo", "type": "image", "required": false},
            {"name": "site", "type": "url", "required": false},
            {"name": "tier", "type": "select", "required": false, "options": ["gold", "silver"]},
        ])
    );
    let id = c["id"].clone();
    assert_eq!(c["created_at"], c["updated_at"]);
    assert!(c["created_at"].as_str().unwrap().ends_with('Z'));

    // Same slug: replaced, 200, same id.
    let r = t
        .post(
            "/cms",
            json!({"slug": "partners", "name": "Our partners", "visibility": "private",
                   "schema": [{"name": "name", "type": "text"}]}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["collection"]["id"], id);
    assert_eq!(r.body["collection"]["name"], "Our partners");
    assert_eq!(r.body["collection"]["visibility"], "private");
    assert_eq!(r.body["collection"]["schema"].as_array().unwrap().len(), 1);
    assert_ne!(r.body["collection"]["updated_at"], c["updated_at"]);

    // Visibility defaults to public.
    t.post("/cms", json!({"slug": "faq", "name": "FAQ", "schema": []}))
        .await
        .expect(201);
    let r = t.get("/cms").await;
    r.expect(200);
    let slugs: Vec<&str> = r.body["collections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["faq", "partners"]);
    assert_eq!(r.body["collections"][0]["visibility"], "public");

    let r = t.get("/cms/partners/schema").await;
    r.expect(200);
    assert_eq!(r.body["collection"]["id"], id);
    assert_eq!(r.body["collection"]["name"], "Our partners");
    t.get("/cms/nope/schema")
        .await
        .expect_error(404, "not_found");
    t.get("/cms/NOT_A_SLUG/schema")
        .await
        .expect_error(404, "not_found");
    t.get("/cms?x=1")
        .await
        .expect_error(422, "validation_failed");
}

async fn collection_validation(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t
        .post(
            "/cms",
            json!({"slug": "Bad Slug", "name": "", "visibility": "secret", "extra": 1, "schema": [
                {"name": "a", "type": "text"},
                {"name": "a", "type": "number"},
                {"name": "kind", "type": "select", "options": []},
                {"name": "d", "type": "colour"},
                {"name": "n", "type": "number", "min": 10, "max": 1},
                {"name": "t", "type": "text", "max_length": 6000},
                {"name": "u", "type": "url", "options": ["x"]},
                {"name": "1x", "type": "text"},
                {"type": "select"},
                "text",
            ]}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    let mut fields = r.error_fields();
    fields.sort();
    let mut want = vec![
        "slug",
        "name",
        "visibility",
        "extra",
        "schema[1].name",
        "schema[2].options",
        "schema[3].type",
        "schema[4].max",
        "schema[5].max_length",
        "schema[6].options",
        "schema[7].name",
        "schema[8].name",
        "schema[8].options",
        "schema[9]",
    ];
    want.sort();
    assert_eq!(fields, want, "{}", r.text);

    // The 40-field cap.
    let forty: Vec<Value> = (0..40)
        .map(|i| json!({"name": format!("f{i}"), "type": "text"}))
        .collect();
    t.post(
        "/cms",
        json!({"slug": "wide", "name": "Wide", "schema": forty}),
    )
    .await
    .expect(201);
    let forty_one: Vec<Value> = (0..41)
        .map(|i| json!({"name": format!("f{i}"), "type": "text"}))
        .collect();
    let r = t
        .post(
            "/cms",
            json!({"slug": "wider", "name": "W", "schema": forty_one}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["schema"]);
    // Schema and slug are required; the slug rule's bounds.
    let r = t.post("/cms", json!({"name": "x"})).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["slug", "schema"]);
    let long = format!("a{}", "b".repeat(63));
    t.post("/cms", json!({"slug": long, "name": "x", "schema": []}))
        .await
        .expect(201);
    let r = t
        .post(
            "/cms",
            json!({"slug": format!("{long}c"), "name": "x", "schema": []}),
        )
        .await;
    assert_eq!(r.error_fields(), ["slug"]);
    // Nothing invalid was stored.
    assert_eq!(
        t.get("/cms").await.body["collections"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

async fn every_field_type_valid_and_invalid(b: Backend) {
    let t = TestApp::spawn(b).await;
    t.post(
        "/cms",
        json!({"slug": "all", "name": "All types", "schema": [
            {"name": "title", "type": "text", "required": true},
            {"name": "short", "type": "text", "max_length": 3},
            {"name": "body", "type": "longtext"},
            {"name": "price", "type": "number", "min": 0, "max": 100},
            {"name": "free", "type": "number"},
            {"name": "featured", "type": "boolean"},
            {"name": "flag", "type": "boolean"},
            {"name": "day", "type": "date"},
            {"name": "moment", "type": "date"},
            {"name": "site", "type": "url"},
            {"name": "logo", "type": "image"},
            {"name": "banner", "type": "image"},
            {"name": "tier", "type": "select", "options": ["gold", "silver"]},
        ]}),
    )
    .await
    .expect(201);

    // Every type at its valid extremes; unknown fields are dropped.
    let r = t
        .post(
            "/cms/all",
            json!({"data": {
                "title": "x".repeat(5000),
                "short": "abc",
                "body": "y".repeat(100_000),
                "price": 100,
                "free": -12.5,
                "featured": true,
                "flag": "false",
                "day": "2026-02-28",
                "moment": "2026-02-28T10:00:00+02:00",
                "site": "https://example.com/a?b=c",
                "logo": "/images/logo.png",
                "banner": "http://cdn.example.com/b.jpg",
                "tier": "gold",
                "not_in_schema": "dropped",
            }}),
        )
        .await;
    r.expect(201);
    let data = &r.body["item"]["data"];
    assert_eq!(data["title"].as_str().unwrap().len(), 5000);
    assert_eq!(data["body"].as_str().unwrap().len(), 100_000);
    assert_eq!(data["price"], 100);
    assert_eq!(data["free"], -12.5);
    assert_eq!(data["featured"], true);
    assert_eq!(data["flag"], false, "\"false\" is stored as a boolean");
    assert_eq!(data["day"], "2026-02-28");
    assert_eq!(data["moment"], "2026-02-28T08:00:00Z");
    assert_eq!(data["logo"], "/images/logo.png");
    assert_eq!(data["tier"], "gold");
    assert!(data.get("not_in_schema").is_none());
    let id = r.body["item"]["id"].as_str().unwrap().to_string();
    // Stored as returned.
    assert_eq!(
        t.get(&format!("/cms/all/{id}")).await.body["item"]["data"],
        *data
    );

    // Every type just past its limits or of the wrong kind: all reported at once.
    let r = t
        .post(
            "/cms/all",
            json!({"data": {
                "title": "x".repeat(5001),
                "short": "abcd",
                "body": "y".repeat(100_001),
                "price": 100.5,
                "free": "12",
                "featured": "yes",
                "flag": 1,
                "day": "2026-02-30",
                "moment": "28/02/2026",
                "site": "/relative",
                "logo": "images/logo.png",
                "banner": "ftp://cdn.example.com/b.jpg",
                "tier": "bronze",
            }}),
        )
        .await;
    r.expect_error(422, "schema_validation_failed");
    assert_eq!(
        r.error_fields(),
        [
            "data.title",
            "data.short",
            "data.body",
            "data.price",
            "data.free",
            "data.featured",
            "data.flag",
            "data.day",
            "data.moment",
            "data.site",
            "data.logo",
            "data.banner",
            "data.tier",
        ],
        "{}",
        r.text
    );
    // More wrong kinds and the lower bound of a number.
    let r = t
        .post(
            "/cms/all",
            json!({"data": {"title": 5, "price": -1, "site": "javascript:alert(1)", "tier": 1,
                            "logo": "//evil.example.com/x.png", "day": 20260228}}),
        )
        .await;
    r.expect_error(422, "schema_validation_failed");
    assert_eq!(
        r.error_fields(),
        [
            "data.title",
            "data.price",
            "data.day",
            "data.site",
            "data.logo",
            "data.tier"
        ]
    );
    // NUL characters (which PostgreSQL cannot store) are refused with a 422 naming the
    // field (or its enclosing object), never a server error.
    let r = t
        .post(
            "/cms/all",
            json!({"data": {"title": "a\u{0}b", "body": "\u{0}"}}),
        )
        .await;
    r.expect(422);
    assert!(!r.error_fields().is_empty());
    assert!(
        r.error_fields().iter().all(|f| f.starts_with("data")),
        "{}",
        r.text
    );
    let r = t
        .post(
            "/cms",
            json!({"slug": "nul", "name": "x", "schema": [{"name": "s", "type": "select", "options": ["a\u{0}"]}]}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert!(!r.error_fields().is_empty());
    assert!(
        r.error_fields().iter().all(|f| f.starts_with("schema")),
        "{}",
        r.text
    );
    // Required: absent, null and empty all fail; optional null is kept as null.
    for bad in [json!({}), json!({"title": null}), json!({"title": "  "})] {
        let r = t.post("/cms/all", json!({"data": bad})).await;
        r.expect_error(422, "schema_validation_failed");
        assert_eq!(r.error_fields(), ["data.title"]);
        assert_eq!(r.body["error"]["details"]["fields"][0]["code"], "required");
    }
    let r = t
        .post("/cms/all", json!({"data": {"title": "t", "price": null}}))
        .await;
    r.expect(201);
    assert_eq!(r.body["item"]["data"], json!({"title": "t", "price": null}));
    // Nothing invalid was stored.
    let r = t.get("/cms/all").await;
    assert_eq!(r.body["total"], 2);
}

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

async fn public_list_windows_relative_to_now(b: Backend) {
    let t = TestApp::spawn(b).await;
    blog(&t, "public").await;
    let item_at = |title: &str, starts: Option<i64>, expires: Option<i64>| {
        let mut body = json!({"data": {"title": title}});
        if let Some(s) = starts {
            body["starts_at"] = json!(at(s).to_rfc3339());
        }
        if let Some(e) = expires {
            body["expires_at"] = json!(at(e).to_rfc3339());
        }
        body
    };
    // Just before and just after now, on both edges.
    item(&t, item_at("started", Some(-1), None)).await;
    item(&t, item_at("not yet", Some(60_000), None)).await;
    item(&t, item_at("expired", None, Some(-1))).await;
    item(&t, item_at("expiring later", None, Some(60_000))).await;
    item(&t, item_at("inside window", Some(-1), Some(60_000))).await;
    item(&t, item_at("always", None, None)).await;
    let r = t.get("/cms/blog").await;
    let mut got = titles(&r);
    got.sort();
    assert_eq!(
        got,
        ["always", "expiring later", "inside window", "started"]
    );
    assert_eq!(r.body["total"], 4);
    // With a status, windows do not matter.
    assert_eq!(t.get("/cms/blog?status=published").await.body["total"], 6);
    // Moving a window is a write: the next read reflects it.
    let later = t.get("/cms/blog?status=published").await;
    let id = later.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["data"]["title"] == "not yet")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    t.patch(
        &format!("/cms/blog/{id}"),
        json!({"starts_at": at(-1).to_rfc3339()}),
    )
    .await
    .expect(200);
    assert_eq!(t.get("/cms/blog").await.body["total"], 5);
}

async fn window_boundaries_are_exact(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    blog(&t, "public").await;
    let s = at(3_600_000);
    let e = at(7_200_000);
    item(
        &t,
        json!({"data": {"title": "w"}, "starts_at": s.to_rfc3339(), "expires_at": e.to_rfc3339()}),
    )
    .await;
    let coll = store::head(t.db(), t.org_id, "blog")
        .await
        .unwrap()
        .unwrap();
    let order = coll.order();
    let visible = |now: Ts| {
        let db = t.db().clone();
        let org = t.org_id;
        async move {
            store::list_items(&db, org, coll.id, ListFilter::Public(now), order, 50, 0)
                .await
                .unwrap()
                .1
        }
    };
    let us = |t: Ts, d: i64| Ts::from_micros(t.micros() + d);
    assert_eq!(
        visible(us(s, -1)).await,
        0,
        "one microsecond before starts_at"
    );
    assert_eq!(visible(s).await, 1, "at starts_at");
    assert_eq!(
        visible(us(e, -1)).await,
        1,
        "one microsecond before expires_at"
    );
    assert_eq!(visible(e).await, 0, "at expires_at");
    // The cache deadline is the next boundary.
    assert_eq!(
        store::next_boundary(t.db(), coll.id, us(s, -1))
            .await
            .unwrap(),
        Some(s)
    );
    assert_eq!(
        store::next_boundary(t.db(), coll.id, s).await.unwrap(),
        Some(e)
    );
    assert_eq!(
        store::next_boundary(t.db(), coll.id, e).await.unwrap(),
        None
    );
    // The scheduler step uses the same boundary.
    assert_eq!(store::expire_due(t.db(), us(e, -1)).await.unwrap(), 0);
    assert_eq!(store::expire_due(t.db(), e).await.unwrap(), 1);
    assert_eq!(store::expire_due(t.db(), e).await.unwrap(), 0);
}

async fn scheduler_expires_published_items_once(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    blog(&t, "public").await;
    let gone = item(
        &t,
        json!({"data": {"title": "gone"}, "expires_at": at(-1).to_rfc3339()}),
    )
    .await;
    let draft = item(
        &t,
        json!({"data": {"title": "draft"}, "status": "draft", "expires_at": at(-1).to_rfc3339()}),
    )
    .await;
    item(
        &t,
        json!({"data": {"title": "stays"}, "expires_at": at(3_600_000).to_rfc3339()}),
    )
    .await;
    // Cached status list before the tick.
    let before = t.get("/cms/blog?status=published").await;
    assert_eq!(before.body["total"], 2);
    let one = t
        .get(&format!("/cms/blog/{}", gone["id"].as_str().unwrap()))
        .await;
    assert_eq!(one.body["item"]["status"], "published");

    assert_eq!(jobboard::scheduler::tick(&t.app).await, 1);
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 0, "idempotent");

    let r = t
        .get(&format!("/cms/blog/{}", gone["id"].as_str().unwrap()))
        .await;
    assert_eq!(r.body["item"]["status"], "expired");
    assert_ne!(r.header("etag"), one.header("etag"));
    assert_eq!(
        titles(&t.get("/cms/blog?status=published").await),
        ["stays"]
    );
    assert_eq!(titles(&t.get("/cms/blog?status=expired").await), ["gone"]);
    // Only published items expire.
    let r = t
        .get(&format!("/cms/blog/{}", draft["id"].as_str().unwrap()))
        .await;
    assert_eq!(r.body["item"]["status"], "draft");
}

async fn etag_and_not_modified(b: Backend) {
    let t = TestApp::spawn(b).await;
    blog(&t, "public").await;
    let it = item(&t, json!({"data": {"title": "a"}})).await;
    let item_path = format!("/cms/blog/{}", it["id"].as_str().unwrap());
    for path in ["/cms/blog", item_path.as_str()] {
        let r = t.get(path).await;
        r.expect(200);
        let etag = r.header("etag").unwrap().to_string();
        assert!(
            etag.starts_with('"') && !etag.starts_with("W/"),
            "strong: {etag}"
        );
        assert_eq!(t.get(path).await.header("etag"), Some(etag.as_str()));

        let nm = t
            .req(Method::GET, path)
            .header("if-none-match", &etag)
            .send()
            .await;
        nm.expect(304);
        assert_eq!(nm.header("etag"), Some(etag.as_str()));
        assert_eq!(nm.text, "");
        assert_eq!(
            nm.header("cache-control"),
            Some("public, s-maxage=60, stale-while-revalidate=60")
        );
        let other = t
            .req(Method::GET, path)
            .header("if-none-match", "\"something-else\"")
            .send()
            .await;
        other.expect(200);
        assert_eq!(other.body, r.body);
        // Other queries have other tags.
        if path == "/cms/blog" {
            let r2 = t.get("/cms/blog?limit=1").await;
            assert_ne!(r2.header("etag"), Some(etag.as_str()));
        }
    }
    // After a write the old tag no longer matches.
    let list = t.get("/cms/blog").await;
    let old = list.header("etag").unwrap().to_string();
    let old_item = t.get(&item_path).await.header("etag").unwrap().to_string();
    t.patch(&item_path, json!({"data": {"title": "b"}}))
        .await
        .expect(200);
    for (path, old) in [("/cms/blog", &old), (item_path.as_str(), &old_item)] {
        let r = t
            .req(Method::GET, path)
            .header("if-none-match", old)
            .send()
            .await;
        r.expect(200);
        assert_ne!(r.header("etag"), Some(old.as_str()));
    }
}

async fn cache_control_by_visibility(b: Backend) {
    let t = TestApp::spawn(b).await;
    for (slug, vis, want) in [
        (
            "pub",
            "public",
            "public, s-maxage=60, stale-while-revalidate=60",
        ),
        ("gat", "gated", "private, no-cache"),
        ("pri", "private", "private, no-cache"),
    ] {
        t.post(
            "/cms",
            json!({"slug": slug, "name": slug, "visibility": vis,
                   "schema": [{"name": "title", "type": "text"}]}),
        )
        .await
        .expect(201);
        let it = t
            .post(&format!("/cms/{slug}"), json!({"data": {"title": "x"}}))
            .await;
        it.expect(201);
        let r = t.get(&format!("/cms/{slug}")).await;
        assert_eq!(r.header("cache-control"), Some(want), "{slug}");
        let r = t
            .get(&format!(
                "/cms/{slug}/{}",
                it.body["item"]["id"].as_str().unwrap()
            ))
            .await;
        assert_eq!(r.header("cache-control"), Some(want), "{slug} item");
    }
    // Changing the visibility changes the header at once.
    t.post(
        "/cms",
        json!({"slug": "pub", "name": "pub", "visibility": "private", "schema": []}),
    )
    .await
    .expect(200);
    assert_eq!(
        t.get("/cms/pub").await.header("cache-control"),
        Some("private, no-cache")
    );
}

/// Inserts an item behind the API's back (no version bump), to observe the cache.
async fn sneak_in(t: &TestApp, title: &str) {
    let coll = store::head(t.db(), t.org_id, "blog")
        .await
        .unwrap()
        .unwrap();
    let now = Ts::now();
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query(
            "INSERT INTO cms_items (id, org_id, collection_id, data, status, position, created_at, updated_at)
             VALUES ($1, $2, $3, $4, 'published', 0, $5, $5)",
        )
        .bind(uuid::Uuid::now_v7())
        .bind(t.org_id)
        .bind(coll.id)
        .bind(sqlx::types::Json(json!({"title": title})))
        .bind(now)
        .execute(p)
        .await
        .unwrap();
    });
}

async fn reads_are_served_from_the_cache(b: Backend) {
    let t = TestApp::spawn(b).await;
    blog(&t, "public").await;
    item(&t, json!({"data": {"title": "a"}})).await;
    assert_eq!(titles(&t.get("/cms/blog").await), ["a"]);
    sneak_in(&t, "hidden").await;
    // The cached rendering is served (nothing wrote through the API)...
    assert_eq!(titles(&t.get("/cms/blog").await), ["a"]);
    // ...unless the client asks for a fresh one,
    let fresh = t
        .req(Method::GET, "/cms/blog")
        .header("cache-control", "no-cache")
        .send()
        .await;
    assert_eq!(titles(&fresh), ["hidden", "a"]);
    // or another query is asked,
    assert_eq!(titles(&t.get("/cms/blog?limit=10").await), ["hidden", "a"]);
    // and any write to the collection purges every cached query of it.
    item(&t, json!({"data": {"title": "b"}})).await;
    assert_eq!(titles(&t.get("/cms/blog").await), ["b", "hidden", "a"]);
    let (entries, bytes) = t.app.cms_cache.size();
    assert!(entries >= 1 && bytes > 0);
}

async fn a_read_right_after_a_write_sees_it(b: Backend) {
    let t = TestApp::spawn(b).await;
    blog(&t, "public").await;
    for i in 0..5 {
        let r = t.get("/cms/blog").await;
        assert_eq!(r.body["total"], i);
        let it = item(&t, json!({"data": {"title": format!("t{i}")}})).await;
        let r = t.get("/cms/blog").await;
        assert_eq!(r.body["total"], i + 1, "list after create {i}");
        assert_eq!(r.body["items"][0]["id"], it["id"]);
        let path = format!("/cms/blog/{}", it["id"].as_str().unwrap());
        t.get(&path).await.expect(200);
        t.patch(&path, json!({"data": {"title": format!("u{i}")}}))
            .await
            .expect(200);
        assert_eq!(
            t.get(&path).await.body["item"]["data"]["title"],
            format!("u{i}")
        );
        assert_eq!(
            t.get("/cms/blog").await.body["items"][0]["data"]["title"],
            format!("u{i}")
        );
    }
    let first = t.get("/cms/blog").await.body["items"][0].clone();
    let path = format!("/cms/blog/{}", first["id"].as_str().unwrap());
    t.patch(&path, json!({"status": "archived"}))
        .await
        .expect(200);
    assert_eq!(t.get("/cms/blog").await.body["total"], 4);
    assert_eq!(t.get(&path).await.body["item"]["status"], "archived");
    t.delete(&path).await.expect(200);
    t.get(&path).await.expect_error(404, "not_found");
    assert_eq!(t.get("/cms/blog?status=archived").await.body["total"], 0);
}

async fn a_write_on_another_node_purges_this_nodes_cache(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    blog(&t, "public").await;
    // A second node on the same database, with its own cache.
    let mut config = jobboard::config::Config::with_database(&t.database_url);
    config.scheduler = false;
    let other = App::start(config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let running = server::spawn(other.clone(), listener).unwrap();
    let base = format!("http://{}/api", running.addr);
    let read = |path: &str| {
        let url = format!("{base}{path}");
        let req = t.client.get(url).header("x-api-key", &t.key);
        async move {
            let r = req.send().await.unwrap();
            assert_eq!(r.status().as_u16(), 200);
            r.json::<Value>().await.unwrap()
        }
    };
    let it = item(
        &t,
        json!({"data": {"title": "a"}, "expires_at": at(3_600_000).to_rfc3339()}),
    )
    .await;
    let path = format!("/cms/blog/{}", it["id"].as_str().unwrap());
    // The other node caches its reads...
    assert_eq!(read("/cms/blog").await["total"], 1);
    assert_eq!(read(&path).await["item"]["data"]["title"], "a");
    assert!(other.cms_cache.size().0 >= 2);
    // ...and a write on this node is seen there at once.
    item(&t, json!({"data": {"title": "b"}})).await;
    assert_eq!(read("/cms/blog").await["total"], 2);
    t.patch(&path, json!({"data": {"title": "changed"}}))
        .await
        .expect(200);
    assert_eq!(read(&path).await["item"]["data"]["title"], "changed");
    // The scheduler running on this node also invalidates the other node's entries.
    assert_eq!(read(&path).await["item"]["status"], "published");
    t.patch(&path, json!({"expires_at": at(-1).to_rfc3339()}))
        .await
        .expect(200);
    assert_eq!(read(&path).await["item"]["status"], "published");
    assert_eq!(
        read("/cms/blog").await["total"],
        1,
        "hidden at expires_at already"
    );
    jobboard::scheduler::tick(&t.app).await;
    assert_eq!(read(&path).await["item"]["status"], "expired");
    assert_eq!(read("/cms/blog?status=expired").await["total"], 1);
    t.delete(&path).await.expect(200);
    let r = t
        .client
        .get(format!("{base}{path}"))
        .header("x-api-key", &t.key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    running.shutdown().await.unwrap();
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

async fn a_cached_list_turns_over_at_the_next_window_boundary(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    blog(&t, "public").await;
    // One item appears and another leaves at the same moment, one second from now.
    let boundary = at(1_000);
    item(
        &t,
        json!({"data": {"title": "arriving"}, "starts_at": boundary.to_rfc3339()}),
    )
    .await;
    item(
        &t,
        json!({"data": {"title": "leaving"}, "expires_at": boundary.to_rfc3339()}),
    )
    .await;
    let before = t.get("/cms/blog").await;
    assert_eq!(titles(&before), ["leaving"]);
    assert_eq!(
        titles(&t.get("/cms/blog").await),
        ["leaving"],
        "served again before the boundary"
    );
    // No write and no scheduler run happen in between: only the clock moves past the
    // boundary, and the cached rendering must not outlive it.
    let wait = boundary.micros() - Ts::now().micros();
    if wait > 0 {
        tokio::time::sleep(std::time::Duration::from_micros(wait as u64 + 1_000)).await;
    }
    let after = t.get("/cms/blog").await;
    assert_eq!(titles(&after), ["arriving"]);
    assert_ne!(after.header("etag"), before.header("etag"));
}

async fn a_select_field_needs_options(b: Backend) {
    let t = TestApp::spawn(b).await;
    for options in [None, Some(Value::Null)] {
        let mut field = json!({"name": "tier", "type": "select"});
        if let Some(o) = options {
            field["options"] = o;
        }
        let r = t
            .post(
                "/cms",
                json!({"slug": "tiers", "name": "Tiers", "schema": [field]}),
            )
            .await;
        r.expect_error(422, "validation_failed");
        assert_eq!(r.error_fields(), ["schema[0].options"], "{}", r.text);
        assert_eq!(r.body["error"]["details"]["fields"][0]["code"], "required");
    }
    // Nothing was stored; on other types `options: null` counts as not sent.
    assert_eq!(t.get("/cms").await.body["collections"], json!([]));
    let r = t
        .post(
            "/cms",
            json!({"slug": "tiers", "name": "Tiers",
                   "schema": [{"name": "tier", "type": "text", "options": null}]}),
        )
        .await;
    r.expect(201);
    assert_eq!(
        r.body["collection"]["schema"],
        json!([{"name": "tier", "type": "text", "required": false}])
    );
}
