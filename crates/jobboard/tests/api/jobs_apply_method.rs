//! `how_to_apply_method`: `phone` as a method, and the method derived from `how_to_apply`
//! when none is given (email address, http(s) URL, phone number, else `form`), returned
//! and stored; the board follows it.

use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    the_method_is_derived_from_how_to_apply,
    phone_is_a_method_with_its_own_check,
);

async fn create(t: &TestApp, extra: Value) -> Resp {
    let mut body = json!({"title": "Welder", "company_name": "Acme", "description": "Weld.", "status": "active"});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    t.post("/jobs", body).await
}

async fn method_of(t: &TestApp, id: &str) -> Value {
    t.get(&format!("/jobs/{id}")).await.body["data"]["how_to_apply_method"].clone()
}

async fn the_method_is_derived_from_how_to_apply(b: Backend) {
    let t = TestApp::spawn(b).await;
    for (target, method) in [
        ("jobs@acme.example", "email"),
        ("mailto:jobs@acme.example", "email"),
        ("https://acme.example/apply", "website"),
        ("+44 20 7946 0958", "phone"),
        ("tel:+1 (555) 010-9999", "phone"),
        ("Write to 1 Main Street", "form"),
        ("javascript:alert(1)", "form"),
    ] {
        let r = create(&t, json!({"how_to_apply": target})).await;
        r.expect(201);
        let id = r.body["data"]["id"].as_str().unwrap().to_string();
        assert_eq!(method_of(&t, &id).await, method, "{target}");
    }
    // Given explicitly, the method is kept.
    let r = create(
        &t,
        json!({"how_to_apply": "https://forms.example/f", "how_to_apply_method": "form-external"}),
    )
    .await;
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    assert_eq!(method_of(&t, &id).await, "form-external");
    // Without how_to_apply nothing is derived.
    let r = create(&t, json!({})).await;
    let bare = r.body["data"]["id"].as_str().unwrap().to_string();
    assert_eq!(method_of(&t, &bare).await, Value::Null);
    // A patch that sets how_to_apply on a job without a method derives it, and says so.
    let r = t
        .patch(
            &format!("/jobs/{bare}"),
            json!({"how_to_apply": "hr@acme.example"}),
        )
        .await;
    r.expect(200);
    assert_eq!(method_of(&t, &bare).await, "email");
    // A stored method is kept when only how_to_apply changes (and checked against it).
    t.patch(
        &format!("/jobs/{id}"),
        json!({"how_to_apply": "https://forms.example/g"}),
    )
    .await
    .expect(200);
    assert_eq!(method_of(&t, &id).await, "form-external");
    let r = t
        .patch(
            &format!("/jobs/{id}"),
            json!({"how_to_apply": "not a link"}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["how_to_apply"]);
}

async fn phone_is_a_method_with_its_own_check(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = create(
        &t,
        json!({"how_to_apply": "+33 1 23 45 67 89", "how_to_apply_method": "phone"}),
    )
    .await;
    r.expect(201);
    let slug = r.body["data"]["slug"].as_str().unwrap().to_string();
    for bad in [
        "call us",
        "12",
        "https://acme.example",
        "+33 1 23 45 67 89 ext. 7",
    ] {
        let r = create(
            &t,
            json!({"how_to_apply": bad, "how_to_apply_method": "phone"}),
        )
        .await;
        r.expect_error(422, "validation_failed");
        assert_eq!(r.error_fields(), ["how_to_apply"], "{bad}");
    }
    // The board's apply link calls the number.
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = client
        .get(format!("{}/jobs/{slug}/apply", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(
        r.headers()["location"].to_str().unwrap(),
        "tel:+33%201%2023%2045%2067%2089"
    );
}
