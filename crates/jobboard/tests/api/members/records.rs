//! The member record: created with defaults, later syncs replacing only the fields sent,
//! validation errors, integral numbers and null identifiers, scope and tenancy.

use reqwest::Method;
use serde_json::{Value, json};

use super::*;
use crate::backends;

backends!(
    first_sync_creates_with_defaults,
    later_syncs_update_and_replace_only_sent_fields,
    sync_validation_errors,
    members_are_scoped_to_their_organization,
    sync_needs_members_write,
    integral_numbers_and_null_identifiers,
);

async fn first_sync_creates_with_defaults(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = sync(&t, json!({"email": "Jane.Doe@Example.com"})).await;
    r.expect(201);
    let d = &r.body["data"];
    assert_eq!(d["created"], true);
    assert_eq!(d["access"], Value::Null);
    assert_eq!(d["payment"], Value::Null);
    let m = &d["member"];
    assert_eq!(m["organizationId"], t.org_id.0);
    assert_eq!(m["email"], "Jane.Doe@Example.com");
    assert_eq!(m["name"], "Jane.Doe", "name defaults to the local part");
    assert_eq!(m["role"], "jobseeker");
    assert_eq!(m["approvalStatus"], "approved");
    assert_eq!(m["profilePicture"], Value::Null);
    assert_eq!(m["description"], Value::Null);
    assert_eq!(m["customFields"], Value::Null);
    let id = m["id"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok());
    assert_eq!(
        events(&t).await,
        [(
            "user.created".to_string(),
            json!({"user_id": id, "email": "Jane.Doe@Example.com", "name": "Jane.Doe", "role": "jobseeker"})
        )]
    );
    // Every field given on creation is stored.
    let r = sync(
        &t,
        json!({"email": "boss@example.com", "name": "The Boss", "role": "employer",
               "approvalStatus": "pending", "profilePicture": "https://cdn.example.com/b.png",
               "description": "Hiring.", "customFields": {"company": "Acme", "size": 12}}),
    )
    .await;
    r.expect(201);
    let m = &r.body["data"]["member"];
    assert_eq!(m["name"], "The Boss");
    assert_eq!(m["role"], "employer");
    assert_eq!(m["approvalStatus"], "pending");
    assert_eq!(m["profilePicture"], "https://cdn.example.com/b.png");
    assert_eq!(m["description"], "Hiring.");
    assert_eq!(m["customFields"], json!({"company": "Acme", "size": 12}));
    assert_eq!(event_names(&t).await, ["user.created", "user.created"]);
}

async fn later_syncs_update_and_replace_only_sent_fields(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = sync(
        &t,
        json!({"email": "sam@example.com", "name": "Sam", "role": "both", "description": "Hi",
               "customFields": {"a": 1}, "profilePicture": "https://x.example/p.png"}),
    )
    .await;
    let first = r.body["data"]["member"].clone();
    // Same address in another case: the same member, updated, 200.
    let r = sync(
        &t,
        json!({"email": "SAM@example.com", "approvalStatus": "rejected"}),
    )
    .await;
    r.expect(200);
    let d = &r.body["data"];
    assert_eq!(d["created"], false);
    assert_eq!(d["access"], Value::Null);
    assert_eq!(d["payment"], Value::Null);
    let m = &d["member"];
    assert_eq!(m["id"], first["id"]);
    assert_eq!(m["email"], "SAM@example.com", "the email as last sent");
    assert_eq!(m["approvalStatus"], "rejected");
    // Omitted fields keep their values.
    assert_eq!(m["name"], "Sam");
    assert_eq!(m["role"], "both");
    assert_eq!(m["description"], "Hi");
    assert_eq!(m["customFields"], json!({"a": 1}));
    assert_eq!(m["createdAt"], first["createdAt"]);
    // Sent fields replace, null clears the nullable ones.
    let r = sync(
        &t,
        json!({"email": "sam@example.com", "name": "Samantha", "role": "employee",
               "description": null, "customFields": {"b": 2}, "profilePicture": null}),
    )
    .await;
    r.expect(200);
    let m = &r.body["data"]["member"];
    assert_eq!(m["name"], "Samantha");
    assert_eq!(m["role"], "employee");
    assert_eq!(m["description"], Value::Null);
    assert_eq!(m["profilePicture"], Value::Null);
    assert_eq!(m["customFields"], json!({"b": 2}));
    assert_eq!(m["approvalStatus"], "rejected");
    // Only one member, one user.created.
    assert_eq!(
        jobboard_domain::members::list(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(event_names(&t).await, ["user.created"]);
}

async fn sync_validation_errors(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = sync(&t, json!({})).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["email"]);
    let r = sync(
        &t,
        json!({"email": "not-an-email", "userId": "123", "name": "", "role": "admin",
               "approvalStatus": "maybe", "profilePicture": "ftp://x", "description": 5,
               "customFields": [1], "nickname": "x"}),
    )
    .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        r.error_fields(),
        [
            "email",
            "userId",
            "name",
            "role",
            "approvalStatus",
            "profilePicture",
            "description",
            "customFields",
            "nickname"
        ]
    );
    // Non-nullable fields may be omitted but not sent as null; blank names are refused.
    let r = sync(
        &t,
        json!({"email": "x@example.com", "name": null, "role": null, "approvalStatus": null}),
    )
    .await;
    assert_eq!(r.error_fields(), ["name", "role", "approvalStatus"]);
    let r = sync(&t, json!({"email": "x@example.com", "name": "   "})).await;
    assert_eq!(r.error_fields(), ["name"]);
    // Blocks must be objects.
    let r = sync(
        &t,
        json!({"email": "x@example.com", "access": [], "payment": "x"}),
    )
    .await;
    assert_eq!(r.error_fields(), ["access", "payment"]);
    // Every bad field of the blocks, with its path.
    let r = sync(
        &t,
        json!({"email": "x@example.com",
               "access": {"status": "paused", "jobsRemaining": -1, "currentPeriodStart": "soon",
                          "cancelAt": 5, "metadata": "m", "processorSubscriptionId": "", "seats": 2},
               "payment": {"amount": -5, "currency": "US", "status": "done",
                           "paymentProvider": "cash", "metadata": [], "planId": "x", "extra": 1}}),
    )
    .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        r.error_fields(),
        [
            "access",
            "access.status",
            "access.jobsRemaining",
            "access.processorSubscriptionId",
            "access.currentPeriodStart",
            "access.cancelAt",
            "access.metadata",
            "access.seats",
            "payment.jobId",
            "payment.planId",
            "payment.amount",
            "payment.currency",
            "payment.status",
            "payment.paymentProvider",
            "payment.metadata",
            "payment.extra"
        ]
    );
    // Lengths, formats and ranges of the remaining fields.
    let long = "x".repeat(256);
    let r = sync(
        &t,
        json!({"email": format!("{}@example.com", "a".repeat(250)), "userId": 5,
               "name": long, "description": "d".repeat(10_001),
               "access": {"planId": "nope", "processorPriceId": long, "altProcessorPlanId": "",
                          "planName": "p".repeat(101), "currentPeriodEnd": "2026-13-01T00:00:00Z",
                          "canceledAt": "yesterday", "jobsRemaining": 1.5},
               "payment": {"jobId": "123", "amount": 1, "currency": 840,
                           "processorSessionId": "", "processorPaymentIntentId": long}}),
    )
    .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        r.error_fields(),
        [
            "email",
            "userId",
            "name",
            "description",
            "access.planId",
            "access.processorPriceId",
            "access.altProcessorPlanId",
            "access.planName",
            "access.jobsRemaining",
            "access.currentPeriodEnd",
            "access.canceledAt",
            "payment.jobId",
            "payment.currency",
            "payment.processorSessionId",
            "payment.processorPaymentIntentId"
        ]
    );
    let r = sync(
        &t,
        json!({"email": "x@example.com", "access": {"planName": "Pro", "jobsRemaining": 1_000_000_001}}),
    )
    .await;
    assert_eq!(r.error_fields(), ["access.jobsRemaining"]);
    assert_eq!(
        r.body["error"]["details"]["fields"][0]["code"],
        "out_of_range"
    );
    // Amounts: numbers only, at most 4 decimals, under 10^12.
    let job = t.insert_job(t.org_id, "Dev").await.to_string();
    for (amount, code) in [
        (json!("19.99"), "invalid_type"),
        (json!(1.00001), "invalid_format"),
        (json!(1e12), "out_of_range"),
        (json!(-0.01), "out_of_range"),
    ] {
        let r = sync(
            &t,
            json!({"email": "x@example.com", "payment": {"jobId": job, "amount": amount, "currency": "USD"}}),
        )
        .await;
        assert_eq!(r.error_fields(), ["payment.amount"], "{amount}");
        assert_eq!(r.body["error"]["details"]["fields"][0]["code"], code);
    }
    // Payment required fields.
    let r = sync(&t, json!({"email": "x@example.com", "payment": {}})).await;
    assert_eq!(
        r.error_fields(),
        ["payment.jobId", "payment.amount", "payment.currency"]
    );
    // Nothing was stored by any of these.
    assert!(
        jobboard_domain::members::list(t.db(), t.org_id)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(events(&t).await.is_empty());
}

async fn members_are_scoped_to_their_organization(b: Backend) {
    let t = TestApp::spawn(b).await;
    let (other_org, other) = t.new_org("Other", "*", 100, 30).await;
    let r = sync(&t, json!({"email": "both@example.com", "name": "Mine"})).await;
    r.expect(201);
    let mine = r.body["data"]["member"]["id"].as_str().unwrap().to_string();
    // The same email in another organization is another member.
    let r = t
        .req(Method::POST, "/members/sync")
        .key(&other)
        .json(json!({"email": "both@example.com", "name": "Theirs"}))
        .send()
        .await;
    r.expect(201);
    assert_eq!(r.body["data"]["created"], true);
    assert_eq!(r.body["data"]["member"]["organizationId"], other_org.0);
    assert_ne!(r.body["data"]["member"]["id"], mine.as_str());
    // A userId of this organization's member is unknown to the other one: it is not
    // updated there, and the other organization gets a member of its own.
    let r = t
        .req(Method::POST, "/members/sync")
        .key(&other)
        .json(json!({"email": "elsewhere@example.com", "userId": mine, "name": "Hijack"}))
        .send()
        .await;
    r.expect(201);
    assert_eq!(r.body["data"]["member"]["organizationId"], other_org.0);
    let ours = jobboard_domain::members::list(t.db(), t.org_id)
        .await
        .unwrap();
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0].name, "Mine");
    assert_eq!(ours[0].email, "both@example.com");
    assert_eq!(
        jobboard_domain::members::list(t.db(), other_org)
            .await
            .unwrap()
            .len(),
        2
    );
    // A job of this organization is unknown to the other one.
    let job = t.insert_job(t.org_id, "Ours").await;
    let r = t
        .req(Method::POST, "/members/sync")
        .key(&other)
        .json(json!({"email": "both@example.com", "payment": {"jobId": job, "amount": 1, "currency": "USD"}}))
        .send()
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["payment.jobId"]);
    // Each organization's events are its own.
    assert_eq!(event_names(&t).await, ["user.created"]);
}

async fn sync_needs_members_write(b: Backend) {
    let t = TestApp::spawn(b).await;
    let read = t.new_key(t.org_id, "members:read", 100, 30).await;
    let r = t
        .req(Method::POST, "/members/sync")
        .key(&read)
        .json(json!({"email": "x@example.com"}))
        .send()
        .await;
    r.expect_error(403, "insufficient_scope");
    assert_eq!(r.body["error"]["details"]["required"], "members:write");
    let write = t.new_key(t.org_id, "members:write", 100, 30).await;
    t.req(Method::POST, "/members/sync")
        .key(&write)
        .json(json!({"email": "x@example.com"}))
        .send()
        .await
        .expect(201);
    t.req(Method::POST, "/members/sync")
        .no_key()
        .json(json!({"email": "x@example.com"}))
        .send()
        .await
        .expect_error(401, "missing_api_key");
    t.req(Method::POST, "/members/sync")
        .raw("{\"email\":", Some("application/json"))
        .send()
        .await
        .expect_error(400, "invalid_json");
    t.get("/members/sync")
        .await
        .expect_error(405, "method_not_allowed");
}

async fn integral_numbers_and_null_identifiers(b: Backend) {
    let t = TestApp::spawn(b).await;
    let plan = pro_plan(&t).await;
    // `jobsRemaining` written as 3.0 is the integer 3; identifiers sent as null count as
    // absent (the plan is named by the one that is not null).
    let r = t
        .req(Method::POST, "/members/sync")
        .raw(
            format!(
                r#"{{"email": "n@example.com", "userId": null,
                    "access": {{"planId": "{}", "planName": null, "processorPriceId": null,
                                "altProcessorPlanId": null, "processorSubscriptionId": null,
                                "jobsRemaining": 3.0}}}}"#,
                plan["id"].as_str().unwrap()
            ),
            Some("application/json"),
        )
        .send()
        .await;
    r.expect(201);
    assert_eq!(r.body["data"]["access"]["jobsRemaining"], 3);
    assert_eq!(r.body["data"]["access"]["planId"], plan["id"]);
    assert_eq!(
        r.body["data"]["access"]["processorSubscriptionId"],
        Value::Null
    );
    // The document says what the server accepts.
    let doc = serde_json::to_value(jobboard::api::openapi()).unwrap();
    let schemas = &doc["components"]["schemas"];
    for (schema, field) in [
        ("MemberSyncIn", "userId"),
        ("AccessIn", "planId"),
        ("AccessIn", "processorPriceId"),
        ("AccessIn", "altProcessorPlanId"),
        ("AccessIn", "planName"),
        ("AccessIn", "processorSubscriptionId"),
        ("PaymentIn", "planId"),
        ("PaymentIn", "processorSessionId"),
        ("PaymentIn", "processorPaymentIntentId"),
    ] {
        let types = &schemas[schema]["properties"][field]["type"];
        assert_eq!(types[1], "null", "{schema}.{field}: {types}");
    }
    for (schema, field) in [
        ("MemberSyncIn", "name"),
        ("AccessIn", "jobsRemaining"),
        ("PaymentIn", "currency"),
    ] {
        assert!(
            schemas[schema]["properties"][field]["type"].is_string(),
            "{schema}.{field} is not nullable"
        );
    }
}
