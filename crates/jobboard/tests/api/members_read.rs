//! `GET /members` (newest first, search, filters, paging) and `GET /members/{lookup}` (by
//! id or by address in any ASCII case, with access records, payments and the paywall
//! answer); tenancy and scopes.

use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    members_are_listed_newest_first_with_filters,
    a_member_is_looked_up_by_id_or_address,
    the_paywall_answer_follows_the_access_records,
    members_of_another_organization_are_not_found,
);

async fn sync(t: &TestApp, body: Value) -> Value {
    let r = t.post("/members/sync", body).await;
    assert!(r.status.is_success(), "{}", r.text);
    r.body["data"].clone()
}

/// Creates the plan "Pro" that access records name.
async fn plan(t: &TestApp) {
    t.post(
        "/plans",
        json!({"name": "Pro", "price": 9.5, "currency": "EUR", "interval": "month", "jobsIncluded": 1}),
    )
    .await
    .expect(201);
}

fn emails(r: &Resp) -> Vec<String> {
    r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["email"].as_str().unwrap().to_string())
        .collect()
}

async fn members_are_listed_newest_first_with_filters(b: Backend) {
    let t = TestApp::spawn(b).await;
    sync(
        &t,
        json!({"email": "ada@example.com", "name": "Ada Lovelace", "role": "employer"}),
    )
    .await;
    sync(
        &t,
        json!({"email": "grace@example.com", "name": "Grace Hopper", "approvalStatus": "pending"}),
    )
    .await;
    sync(
        &t,
        json!({"email": "kate_50%@example.com", "name": "Kate Johnson"}),
    )
    .await;
    let r = t.get("/members").await;
    r.expect(200);
    assert_eq!(
        emails(&r),
        [
            "kate_50%@example.com",
            "grace@example.com",
            "ada@example.com"
        ]
    );
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": 1, "per_page": 20, "total_items": 3, "total_pages": 1, "has_more": false})
    );
    assert_eq!(
        r.body["meta"]["filters"],
        json!({"search": null, "role": null, "approvalStatus": null})
    );
    // Search: email or name, ignoring case; `%` and `_` are characters, not patterns.
    assert_eq!(
        emails(&t.get("/members?search=HOPPER").await),
        ["grace@example.com"]
    );
    assert_eq!(
        emails(&t.get("/members?search=ADA@").await),
        ["ada@example.com"]
    );
    assert_eq!(
        emails(&t.get("/members?search=_50%25").await),
        ["kate_50%@example.com"]
    );
    assert!(emails(&t.get("/members?search=%25%25").await).is_empty());
    assert_eq!(
        emails(&t.get("/members?role=employer").await),
        ["ada@example.com"]
    );
    assert_eq!(
        emails(&t.get("/members?approvalStatus=pending").await),
        ["grace@example.com"]
    );
    let r = t.get("/members?per_page=2&page=2").await;
    assert_eq!(emails(&r), ["ada@example.com"]);
    assert_eq!(r.body["meta"]["pagination"]["total_pages"], 2);
    assert_eq!(r.body["meta"]["pagination"]["has_more"], false);
    let r = t
        .get("/members?role=king&per_page=0&page=0&approvalStatus=x")
        .await;
    r.expect_error(422, "validation_failed");
    let mut fields = r.error_fields();
    fields.sort();
    assert_eq!(fields, ["approvalStatus", "page", "per_page", "role"]);
    t.get("/members?color=red")
        .await
        .expect_error(422, "validation_failed");
}

async fn a_member_is_looked_up_by_id_or_address(b: Backend) {
    let t = TestApp::spawn(b).await;
    plan(&t).await;
    let job = t.insert_job(t.org_id, "Paid post").await;
    let out = sync(
        &t,
        json!({"email": "Kate@Example.com", "name": "Kate",
               "access": {"planName": "Pro", "status": "active", "processorSubscriptionId": "sub_1"},
               "payment": {"amount": 9.5, "currency": "EUR", "status": "succeeded", "paymentProvider": "manual", "jobId": job}}),
    )
    .await;
    let id = out["member"]["id"].as_str().unwrap().to_string();
    for lookup in [
        id.as_str(),
        "kate@example.com",
        "KATE@EXAMPLE.COM",
        "Kate@Example.com",
    ] {
        let r = t.get(&format!("/members/{lookup}")).await;
        r.expect(200);
        let d = &r.body["data"];
        assert_eq!(d["member"]["id"], id.as_str(), "{lookup}");
        assert_eq!(d["member"]["email"], "Kate@Example.com");
        assert_eq!(d["subscriptions"].as_array().unwrap().len(), 1);
        assert_eq!(d["subscriptions"][0]["processorSubscriptionId"], "sub_1");
        assert_eq!(d["payments"].as_array().unwrap().len(), 1);
        assert_eq!(d["hasValidPaywallSubscription"], true);
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "member",
                "subscriptions",
                "payments",
                "hasValidPaywallSubscription"
            ]
        );
    }
    // The Kelvin sign is not a k: another address, no member.
    t.get("/members/\u{212A}ate@example.com")
        .await
        .expect_error(404, "not_found");
    t.get("/members/nobody@example.com")
        .await
        .expect_error(404, "not_found");
    t.get("/members/01a20b0f-0000-7000-8000-000000000000")
        .await
        .expect_error(404, "not_found");
}

async fn the_paywall_answer_follows_the_access_records(b: Backend) {
    let t = TestApp::spawn(b).await;
    plan(&t).await;
    let cases = [
        (json!({"status": "trialing"}), true),
        (json!({"status": "past_due"}), false),
        (json!({"status": "expired"}), false),
        (
            json!({"status": "canceled", "currentPeriodEnd": "2999-01-01T00:00:00Z"}),
            true,
        ),
        (
            json!({"status": "canceled", "currentPeriodEnd": "2001-01-01T00:00:00Z"}),
            false,
        ),
        (json!({"status": "canceled"}), false),
    ];
    for (i, (access, open)) in cases.into_iter().enumerate() {
        let email = format!("m{i}@example.com");
        let mut access = access;
        access["planName"] = json!("Pro");
        sync(&t, json!({"email": email, "name": "M", "access": access})).await;
        let r = t.get(&format!("/members/{email}")).await;
        r.expect(200);
        assert_eq!(
            r.body["data"]["hasValidPaywallSubscription"], open,
            "{access}"
        );
    }
    // Without any access record.
    sync(&t, json!({"email": "none@example.com", "name": "N"})).await;
    let r = t.get("/members/none@example.com").await;
    assert_eq!(r.body["data"]["hasValidPaywallSubscription"], false);
    assert_eq!(r.body["data"]["subscriptions"], json!([]));
}

async fn members_of_another_organization_are_not_found(b: Backend) {
    let t = TestApp::spawn(b).await;
    let out = sync(&t, json!({"email": "ada@example.com", "name": "Ada"})).await;
    let id = out["member"]["id"].as_str().unwrap().to_string();
    let (_, other) = t.new_org("Other", "*", 1000, 1000).await;
    for path in [
        format!("/members/{id}"),
        "/members/ada@example.com".to_string(),
    ] {
        t.req(reqwest::Method::GET, &path)
            .key(&other)
            .send()
            .await
            .expect_error(404, "not_found");
    }
    let r = t
        .req(reqwest::Method::GET, "/members")
        .key(&other)
        .send()
        .await;
    r.expect(200);
    assert_eq!(r.body["data"], json!([]));
    let (_, no_scope) = t.new_org("Scoped", "jobs:read", 1000, 1000).await;
    t.req(reqwest::Method::GET, "/members")
        .key(&no_scope)
        .send()
        .await
        .expect_error(403, "insufficient_scope");
}
