//! What the outside probe of the API found in its inputs, as tests: timestamps RFC 3339
//! cannot write back, links that are not http(s) where the board renders them, the nesting
//! of descriptions, repeated query parameters, and names that make no slug. (Member
//! addresses: members.rs.)

use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    timestamps_outside_years_1_to_9999_in_utc_are_refused,
    apply_links_must_be_http_urls_wherever_they_are_rendered,
    deeply_nested_descriptions_are_refused_and_the_server_keeps_answering,
    a_repeated_query_parameter_is_refused,
    every_valid_category_name_can_be_sent_alone,
);

fn job(extra: Value) -> Value {
    let mut body = json!({"title": "Welder", "company_name": "Acme", "description": "Weld."});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

/// The code of the error of one field, with the field's name checked.
fn only_field_code(r: &Resp, field: &str) -> String {
    assert_eq!(r.error_fields(), [field], "body: {}", r.text);
    r.body["error"]["details"]["fields"][0]["code"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn timestamps_outside_years_1_to_9999_in_utc_are_refused(b: Backend) {
    let t = TestApp::spawn(b).await;
    // Valid RFC 3339 on input, but +10000-01-01T13:59:59Z once in UTC: never stored.
    for at in [
        "9999-12-31T23:59:59-14:00",
        "0001-01-01T00:00:00+01:00",
        "9999-12-31T10:00:00-14:00",
    ] {
        let r = t.post("/jobs", job(json!({"expires_at": at}))).await;
        r.expect_error(422, "validation_failed");
        assert_eq!(only_field_code(&r, "expires_at"), "invalid_format", "{at}");
        let message = r.body["error"]["details"]["fields"][0]["message"]
            .as_str()
            .unwrap();
        assert!(
            message.contains("between years 1 and 9999 in UTC"),
            "{message}"
        );
    }
    // The same refusal in every body that takes an instant.
    let r = t
        .post(
            "/analytics/events",
            json!({"events": [{"type": "page_view", "path": "/", "occurred_at": "9999-12-31T23:59:59-14:00"}]}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["events[0].occurred_at"]);

    // The last representable instant, written with an offset, is kept and read back in UTC.
    let r = t
        .post(
            "/jobs",
            job(json!({"expires_at": "9999-12-31T09:59:59-14:00", "status": "draft"})),
        )
        .await;
    r.expect(201);
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let r = t.get(&format!("/jobs/{id}")).await;
    r.expect(200);
    assert_eq!(r.body["data"]["expires_at"], "9999-12-31T23:59:59Z");
    let r = t
        .patch(
            &format!("/jobs/{id}"),
            json!({"expires_at": "9999-12-31T23:59:59-14:00"}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    let r = t.get(&format!("/jobs/{id}")).await;
    assert_eq!(r.body["data"]["expires_at"], "9999-12-31T23:59:59Z");
}

async fn apply_links_must_be_http_urls_wherever_they_are_rendered(b: Backend) {
    let t = TestApp::spawn(b).await;
    for target in [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        " javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "//evil.example/apply",
        "/relative/apply",
        "http:/missing-host",
    ] {
        for method in ["website", "form-external"] {
            let r = t
                .post(
                    "/jobs",
                    job(json!({"how_to_apply": target, "how_to_apply_method": method})),
                )
                .await;
            r.expect_error(422, "validation_failed");
            assert_eq!(r.error_fields(), ["how_to_apply"], "{target} / {method}");
        }
    }
    // An email method takes an address, not a link.
    let r = t
        .post(
            "/jobs",
            job(json!({"how_to_apply": "javascript:alert(1)", "how_to_apply_method": "email"})),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["how_to_apply"]);

    // Changing only the method re-checks the stored target under the new method.
    let r = t
        .post(
            "/jobs",
            job(json!({"how_to_apply": "jobs@acme.example", "how_to_apply_method": "email"})),
        )
        .await;
    r.expect(201);
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let r = t
        .patch(
            &format!("/jobs/{id}"),
            json!({"how_to_apply_method": "website"}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["how_to_apply_method"]);

    // Real links are kept as sent.
    let r = t
        .post(
            "/jobs",
            job(json!({"how_to_apply": "https://acme.example/apply?ref=board", "how_to_apply_method": "website"})),
        )
        .await;
    r.expect(201);
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let r = t.get(&format!("/jobs/{id}")).await;
    assert_eq!(
        r.body["data"]["how_to_apply"],
        "https://acme.example/apply?ref=board"
    );
    // Other user-given links of a job follow the same policy.
    let r = t
        .post(
            "/jobs",
            job(json!({"company_website": "javascript:alert(1)", "company_logo_url": "data:image/png;base64,AAAA"})),
        )
        .await;
    r.expect_error(422, "validation_failed");
    let mut fields = r.error_fields();
    fields.sort();
    assert_eq!(fields, ["company_logo_url", "company_website"]);
}

async fn deeply_nested_descriptions_are_refused_and_the_server_keeps_answering(b: Backend) {
    let t = TestApp::spawn(b).await;
    // The probe's worst case, and the smallest nesting past the limit.
    for description in ["<ul><li>".repeat(12_000), "<div>".repeat(101)] {
        let r = t
            .post("/jobs", job(json!({"description": description})))
            .await;
        r.expect_error(422, "validation_failed");
        assert_eq!(only_field_code(&r, "description"), "too_deep");
    }
    // At the limit it is accepted, sanitised like any other.
    let deep = format!("{}Deep{}", "<div>".repeat(100), "</div>".repeat(100));
    let r = t.post("/jobs", job(json!({"description": deep}))).await;
    r.expect(201);
    // Four worst cases at once leave the server answering everything else.
    let worst = "<ul><li>".repeat(12_000);
    let posts = (0..4).map(|_| t.post("/jobs", job(json!({"description": worst.clone()}))));
    let (answers, health) = tokio::join!(
        crate::members::futures_join_all(posts),
        t.page_req(reqwest::Method::GET, "/healthz").send()
    );
    for r in answers {
        r.expect_error(422, "validation_failed");
    }
    assert_eq!(health.unwrap().status(), 200);
    // A patch is held to the same limit (paragraphs close each other: they do not nest).
    let r = t.post("/jobs", job(json!({"status": "draft"}))).await;
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let r = t
        .patch(
            &format!("/jobs/{id}"),
            json!({"description": "<div>".repeat(500)}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(only_field_code(&r, "description"), "too_deep");
}

async fn a_repeated_query_parameter_is_refused(b: Backend) {
    let t = TestApp::spawn(b).await;
    t.insert_job(t.org_id, "Listed").await;
    // A parameter of one value: the earlier value is never dropped silently, even when
    // the later one is valid.
    for q in [
        "/jobs?page=1&page=2",
        "/jobs?per_page=5&per_page=5",
        "/analytics?period=7d&period=30d",
    ] {
        let r = t.get(q).await;
        r.expect_error(422, "validation_failed");
        let code = r.body["error"]["details"]["fields"][0]["code"].clone();
        assert_eq!(code, "repeated_parameter", "{q}: {}", r.text);
    }
    // A list takes several values, comma-separated or repeated; a bad one is named.
    for q in [
        "/jobs?status=active,draft",
        "/jobs?status=active&status=draft",
    ] {
        let r = t.get(q).await;
        r.expect(200);
        assert_eq!(
            r.body["meta"]["filters"]["status"],
            json!(["active", "draft"])
        );
    }
    let r = t.get("/jobs?status=bogus&status=all").await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        r.body["error"]["details"]["fields"][0]["code"],
        "invalid_value"
    );
}

async fn every_valid_category_name_can_be_sent_alone(b: Backend) {
    let t = TestApp::spawn(b).await;
    // A name with no letter or digit to make a slug from gets `category`, as a job gets
    // `job`; a second one is a conflict on the slug, like any other repeated slug.
    let r = t.post("/categories", json!({"name": "日本"})).await;
    r.expect(201);
    assert_eq!(r.body["data"]["slug"], "category");
    t.post("/categories", json!({"name": "✓"}))
        .await
        .expect_error(409, "conflict");
    let r = t
        .post("/categories", json!({"name": "✓", "slug": "check"}))
        .await;
    r.expect(201);
    assert_eq!(r.body["data"]["slug"], "check");
}
