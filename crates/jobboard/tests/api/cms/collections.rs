//! Collections: upsert, list and read, schema validation, every field type with valid and
//! invalid values, and select fields needing options.

use serde_json::{Value, json};

use super::*;
use crate::backends;

backends!(
    collections_upsert_list_and_read,
    collection_validation,
    every_field_type_valid_and_invalid,
    a_select_field_needs_options,
);

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
