//! CMS collection `rules`: returned with the collection, kept or changed by a later
//! upsert, honoured by `GET /cms/{slug}` (and the board, see `board_cms_submit`); and
//! `POST /cms/{slug}/submit`, the keyless submission through the board's host.

use reqwest::Method;
use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    rules_default_keep_and_change,
    lists_follow_the_sort_rules,
    public_submissions_are_moderated_or_published,
    refused_submissions_store_nothing,
    submissions_count_per_address,
    submissions_never_cross_organizations,
);

fn schema() -> Value {
    json!([
        {"name": "title", "type": "text", "required": true, "max_length": 100},
        {"name": "score", "type": "number", "min": 0, "max": 10},
    ])
}

async fn upsert(t: &TestApp, slug: &str, rules: Option<Value>) -> Resp {
    let mut body = json!({"slug": slug, "name": "Ideas", "schema": schema()});
    if let Some(r) = rules {
        body["rules"] = r;
    }
    t.post("/cms", body).await
}

fn submit_req(t: &TestApp, slug: &str, body: Value) -> reqwest::RequestBuilder {
    t.client
        .post(format!("{}/api/cms/{slug}/submit", t.base))
        .json(&body)
}

async fn submit(t: &TestApp, slug: &str, body: Value) -> Resp {
    Resp::read(submit_req(t, slug, body).send().await.unwrap()).await
}

async fn items(t: &TestApp, slug: &str, query: &str) -> Vec<Value> {
    let r = t.get(&format!("/cms/{slug}{query}")).await;
    r.expect(200);
    r.body["items"].as_array().unwrap().clone()
}

async fn rules_default_keep_and_change(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = upsert(&t, "ideas", None).await;
    r.expect(201);
    assert_eq!(
        r.body["collection"]["rules"],
        json!({"allow_public_submit": false, "moderation": "manual", "sort_by": null, "sort_dir": "asc"})
    );
    // Sent fields replace; omitted ones keep their value; an upsert without rules keeps
    // them all.
    let r = upsert(
        &t,
        "ideas",
        Some(json!({"allow_public_submit": true, "sort_by": "created_at", "sort_dir": "desc"})),
    )
    .await;
    r.expect(200);
    assert_eq!(
        r.body["collection"]["rules"],
        json!({"allow_public_submit": true, "moderation": "manual", "sort_by": "created_at", "sort_dir": "desc"})
    );
    let r = upsert(&t, "ideas", Some(json!({"moderation": "auto"}))).await;
    assert_eq!(
        r.body["collection"]["rules"],
        json!({"allow_public_submit": true, "moderation": "auto", "sort_by": "created_at", "sort_dir": "desc"})
    );
    let r = upsert(&t, "ideas", None).await;
    assert_eq!(r.body["collection"]["rules"]["moderation"], "auto");
    let r = upsert(&t, "ideas", Some(json!({"sort_by": null}))).await;
    assert_eq!(r.body["collection"]["rules"]["sort_by"], Value::Null);
    let got = t.get("/cms/ideas/schema").await;
    assert_eq!(
        got.body["collection"]["rules"],
        r.body["collection"]["rules"]
    );
    let listed = t.get("/cms").await;
    assert_eq!(
        listed.body["collections"][0]["rules"],
        r.body["collection"]["rules"]
    );

    // Every bad rule at once, named `rules.<field>`, beside the body's other problems;
    // nothing changes.
    let r = t
        .post(
            "/cms",
            json!({"slug": "ideas", "name": "", "schema": schema(), "rules": {
                "allow_public_submit": "yes", "moderation": "later", "sort_by": "title", "sort_dir": "up", "extra": 1}}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    let mut fields = r.error_fields();
    fields.sort();
    assert_eq!(
        fields,
        [
            "name",
            "rules.allow_public_submit",
            "rules.extra",
            "rules.moderation",
            "rules.sort_by",
            "rules.sort_dir"
        ]
    );
    upsert(&t, "ideas", Some(json!([1])))
        .await
        .expect_error(422, "validation_failed");
    let got = t.get("/cms/ideas/schema").await;
    assert_eq!(got.body["collection"]["rules"]["moderation"], "auto");
}

async fn lists_follow_the_sort_rules(b: Backend) {
    let t = TestApp::spawn(b).await;
    upsert(&t, "ideas", None).await.expect(201);
    // Created in this order: a, b, c; positions and windows differ.
    let mut ids = Vec::new();
    for (title, position, starts, expires) in [
        ("a", 2, Some("2026-03-01T00:00:00Z"), None),
        ("b", 1, None, Some("2099-01-01T00:00:00Z")),
        (
            "c",
            3,
            Some("2026-01-01T00:00:00Z"),
            Some("2098-01-01T00:00:00Z"),
        ),
    ] {
        let r = t
            .post(
                "/cms/ideas",
                json!({"data": {"title": title}, "position": position, "starts_at": starts, "expires_at": expires}),
            )
            .await;
        r.expect(201);
        ids.push(r.body["item"]["id"].as_str().unwrap().to_string());
    }
    // Touch a: it becomes the most recently updated.
    t.patch(
        &format!("/cms/ideas/{}", ids[0]),
        json!({"data": {"title": "a"}}),
    )
    .await
    .expect(200);
    let titles = |items: Vec<Value>| -> Vec<String> {
        items
            .iter()
            .map(|i| i["data"]["title"].as_str().unwrap().to_string())
            .collect()
    };
    // Without sort_by: position ascending (the order before rules existed).
    assert_eq!(titles(items(&t, "ideas", "").await), ["b", "a", "c"]);
    for (rules, expected) in [
        (json!({"sort_by": "created_at"}), ["a", "b", "c"]),
        (
            json!({"sort_by": "created_at", "sort_dir": "desc"}),
            ["c", "b", "a"],
        ),
        (
            json!({"sort_by": "updated_at", "sort_dir": "desc"}),
            ["a", "c", "b"],
        ),
        (
            json!({"sort_by": "position", "sort_dir": "desc"}),
            ["c", "a", "b"],
        ),
        (
            json!({"sort_by": "position", "sort_dir": "asc"}),
            ["b", "a", "c"],
        ),
        // Items without the date come last in both directions.
        (
            json!({"sort_by": "starts_at", "sort_dir": "asc"}),
            ["c", "a", "b"],
        ),
        (
            json!({"sort_by": "starts_at", "sort_dir": "desc"}),
            ["a", "c", "b"],
        ),
        (
            json!({"sort_by": "expires_at", "sort_dir": "asc"}),
            ["c", "b", "a"],
        ),
        (
            json!({"sort_by": "expires_at", "sort_dir": "desc"}),
            ["b", "c", "a"],
        ),
    ] {
        upsert(&t, "ideas", Some(rules.clone())).await.expect(200);
        assert_eq!(titles(items(&t, "ideas", "").await), expected, "{rules}");
        // The status lists follow the same order, and so do pages.
        assert_eq!(
            titles(items(&t, "ideas", "?status=published").await),
            expected,
            "{rules}"
        );
        assert_eq!(
            titles(items(&t, "ideas", "?limit=1&offset=1").await),
            [expected[1]],
            "{rules}"
        );
    }
}

async fn public_submissions_are_moderated_or_published(b: Backend) {
    let t = TestApp::spawn(b).await;
    upsert(&t, "ideas", Some(json!({"allow_public_submit": true})))
        .await
        .expect(201);
    // Manual moderation: stored as pending_review, not in the public list.
    let r = submit(
        &t,
        "ideas",
        json!({"data": {"title": "  A better search  ", "score": 7, "unknown": "dropped"}}),
    )
    .await;
    r.expect(201);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    let obj = r.body.as_object().unwrap();
    assert_eq!(obj.keys().collect::<Vec<_>>(), ["item"]);
    let item = r.body["item"].as_object().unwrap();
    let mut keys: Vec<_> = item.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["id", "status"], "nothing but the id and status");
    assert_eq!(item["status"], "pending_review");
    let id = item["id"].as_str().unwrap().to_string();
    assert!(items(&t, "ideas", "").await.is_empty());
    let pending = items(&t, "ideas", "?status=pending_review").await;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["id"], id.as_str());
    assert_eq!(
        pending[0]["data"],
        json!({"title": "  A better search  ", "score": 7})
    );
    assert_eq!(pending[0]["position"], 0);
    assert_eq!(pending[0]["owner_user_id"], Value::Null);
    // Staff publish it with the keyed API.
    t.patch(&format!("/cms/ideas/{id}"), json!({"status": "published"}))
        .await
        .expect(200);
    assert_eq!(items(&t, "ideas", "").await.len(), 1);

    // Auto moderation: published at once, and in the (cached) public list right away.
    upsert(&t, "ideas", Some(json!({"moderation": "auto"})))
        .await
        .expect(200);
    assert_eq!(items(&t, "ideas", "").await.len(), 1);
    let r = submit(
        &t,
        "ideas",
        json!({"data": {"title": "Dark mode"}, "reference_code": ""}),
    )
    .await;
    r.expect(201);
    assert_eq!(r.body["item"]["status"], "published");
    assert_eq!(items(&t, "ideas", "").await.len(), 2);

    // The CORS preflight lets any site's page send it.
    let pre = t
        .client
        .request(Method::OPTIONS, format!("{}/api/cms/ideas/submit", t.base))
        .header("origin", "https://www.example.org")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap();
    assert_eq!(pre.status(), 204);
    assert_eq!(pre.headers()["access-control-allow-origin"], "*");
    assert_eq!(pre.headers()["access-control-allow-methods"], "POST");
    assert_eq!(
        pre.headers()["access-control-allow-headers"],
        "content-type"
    );
}

async fn refused_submissions_store_nothing(b: Backend) {
    let t = TestApp::spawn(b).await;
    upsert(
        &t,
        "ideas",
        Some(json!({"allow_public_submit": true, "moderation": "auto"})),
    )
    .await
    .expect(201);
    upsert(&t, "closed", None).await.expect(201);
    // A collection without the rule, and one that does not exist: the same 404.
    let closed = submit(&t, "closed", json!({"data": {"title": "x"}})).await;
    closed.expect_error(404, "not_found");
    let missing = submit(&t, "nowhere", json!({"data": {"title": "x"}})).await;
    missing.expect_error(404, "not_found");
    assert_eq!(
        closed.body["error"]["message"],
        missing.body["error"]["message"]
    );
    // The schema: every failing field at once.
    let r = submit(&t, "ideas", json!({"data": {"title": "", "score": 11}})).await;
    r.expect_error(422, "schema_validation_failed");
    assert_eq!(r.error_fields(), ["data.title", "data.score"]);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    // The body's own fields.
    let r = submit(&t, "ideas", json!({"data": "x", "status": "published"})).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["data", "status"]);
    // The trap field filled in.
    let r = submit(
        &t,
        "ideas",
        json!({"data": {"title": "Buy now"}, "reference_code": "X-1"}),
    )
    .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["reference_code"]);
    // Larger than a board form (256 KiB), and not JSON.
    let big = "x".repeat(300 * 1024);
    let r = submit(&t, "ideas", json!({"data": {"title": big}})).await;
    r.expect_error(413, "payload_too_large");
    assert_eq!(r.body["error"]["details"]["limit_bytes"], 256 * 1024);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    let r = Resp::read(
        t.client
            .post(format!("{}/api/cms/ideas/submit", t.base))
            .header("content-type", "text/plain")
            .body("title=x")
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.expect_error(415, "unsupported_media_type");
    assert!(items(&t, "ideas", "").await.is_empty(), "nothing stored");
    // A key is not needed, and a wrong one changes nothing.
    let r = Resp::read(
        submit_req(&t, "ideas", json!({"data": {"title": "With a bad key"}}))
            .header("x-api-key", "jb_wrong")
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.expect(201);
}

async fn submissions_count_per_address(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.form_limit = 2).await;
    upsert(
        &t,
        "ideas",
        Some(json!({"allow_public_submit": true, "moderation": "auto"})),
    )
    .await
    .expect(201);
    for i in 0..2 {
        submit(&t, "ideas", json!({"data": {"title": format!("idea {i}")}}))
            .await
            .expect(201);
    }
    let r = submit(&t, "ideas", json!({"data": {"title": "one too many"}})).await;
    r.expect_error(429, "rate_limited");
    assert!(r.header("retry-after").is_some());
    assert_eq!(r.body["error"]["details"]["limit"], 2);
    assert_eq!(items(&t, "ideas", "").await.len(), 2);
}

async fn submissions_never_cross_organizations(b: Backend) {
    let t = TestApp::spawn(b).await;
    // Organization 1 (any host) has a closed collection; the second board's host has an
    // open one with the same slug.
    upsert(&t, "ideas", None).await.expect(201);
    let org = jobboard_domain::orgs::create_with(t.db(), "Second board", Some("jobs.example.test"))
        .await
        .unwrap();
    let key = t.new_key(org.id, "*", 1000, 1000).await;
    t.req(Method::POST, "/cms")
        .key(&key)
        .json(json!({"slug": "ideas", "name": "Theirs", "schema": schema(), "rules": {"allow_public_submit": true}}))
        .send()
        .await
        .expect(201);
    t.req(Method::POST, "/cms")
        .key(&key)
        .json(json!({"slug": "open", "name": "Open", "schema": schema(), "rules": {"allow_public_submit": true, "moderation": "auto"}}))
        .send()
        .await
        .expect(201);
    // Through the second board's host: stored in its collection.
    let r = Resp::read(
        submit_req(&t, "ideas", json!({"data": {"title": "For them"}}))
            .header("host", "jobs.example.test")
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.expect(201);
    let theirs = t
        .req(Method::GET, "/cms/ideas?status=pending_review")
        .key(&key)
        .send()
        .await;
    assert_eq!(theirs.body["items"].as_array().unwrap().len(), 1);
    // Through any other host: organization 1, whose `ideas` is closed and which has no
    // `open` collection.
    submit(&t, "ideas", json!({"data": {"title": "x"}}))
        .await
        .expect_error(404, "not_found");
    submit(&t, "open", json!({"data": {"title": "x"}}))
        .await
        .expect_error(404, "not_found");
    assert!(
        items(&t, "ideas", "?status=pending_review")
            .await
            .is_empty()
    );
}
