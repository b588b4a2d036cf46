//! `POST /members/sync`: members, access records, payments, their events, atomicity,
//! concurrency and tenancy.

use reqwest::Method;
use serde_json::{Value, json};

use crate::{backends, common::*, plans::create_plan};

backends!(
    first_sync_creates_with_defaults,
    later_syncs_update_and_replace_only_sent_fields,
    user_id_matching_and_conflicts,
    sync_validation_errors,
    access_block_creates_and_updates_the_subscription,
    access_plan_lookup,
    payment_block_is_exact_and_idempotent,
    payment_status_changes_and_conflicts,
    failure_in_payment_rolls_back_everything,
    concurrent_first_syncs_create_one_member,
    members_are_scoped_to_their_organization,
    sync_needs_members_write,
    emails_match_ignoring_ascii_case_only,
    upgrading_recomputes_stored_email_identities,
    integral_numbers_and_null_identifiers,
);

async fn events(t: &TestApp) -> Vec<(String, Value)> {
    jobboard_store::events::list_for_org(t.db(), t.org_id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.event_type, e.data.0))
        .collect()
}

async fn event_names(t: &TestApp) -> Vec<String> {
    events(t).await.into_iter().map(|(n, _)| n).collect()
}

async fn sync(t: &TestApp, body: Value) -> Resp {
    t.post("/members/sync", body).await
}

async fn pro_plan(t: &TestApp) -> Value {
    create_plan(
        t,
        json!({"name": "Pro", "processorPriceId": "price_pro", "altProcessorPlanId": "P-PRO",
               "price": 49.99, "currency": "USD", "interval": "month", "jobsIncluded": 5}),
    )
    .await
}

async fn first_sync_creates_with_defaults(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = sync(&t, json!({"email": "Jane.Doe@Example.com"})).await;
    r.expect(201);
    let d = &r.body["data"];
    assert_eq!(d["created"], true);
    assert_eq!(d["access"], Value::Null);
    assert_eq!(d["payment"], Value::Null);
    let m = &d["member"];
    assert_eq!(m["organizationId"], t.org_id);
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

async fn user_id_matching_and_conflicts(b: Backend) {
    let t = TestApp::spawn(b).await;
    let uid = uuid::Uuid::now_v7().to_string();
    // Created with the given userId as its id.
    let r = sync(&t, json!({"email": "a@example.com", "userId": uid})).await;
    r.expect(201);
    assert_eq!(r.body["data"]["member"]["id"], uid.as_str());
    // Found by userId: its email may change.
    let r = sync(&t, json!({"email": "a.new@example.com", "userId": uid})).await;
    r.expect(200);
    assert_eq!(r.body["data"]["member"]["id"], uid.as_str());
    assert_eq!(r.body["data"]["member"]["email"], "a.new@example.com");
    assert_eq!(r.body["data"]["member"]["name"], "a", "the name is kept");
    // The old address is free again: a sync of it creates another member.
    let r = sync(&t, json!({"email": "a@example.com"})).await;
    r.expect(201);
    let other = r.body["data"]["member"]["id"].as_str().unwrap().to_string();
    // Moving the first member to the other's address is a conflict.
    let r = sync(&t, json!({"email": "A@example.com", "userId": uid})).await;
    r.expect_error(409, "conflict");
    assert_eq!(r.body["error"]["details"]["field"], "email");
    // The address found with a different userId is a conflict too.
    let stranger = uuid::Uuid::now_v7().to_string();
    let r = sync(&t, json!({"email": "a@example.com", "userId": stranger})).await;
    r.expect_error(409, "conflict");
    assert_eq!(r.body["error"]["details"]["field"], "userId");
    // Found by email with its own userId: fine.
    let r = sync(
        &t,
        json!({"email": "a@example.com", "userId": other, "name": "Al"}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["data"]["member"]["name"], "Al");
    // Nothing changed by the conflicts.
    let members = jobboard_domain::members::list(t.db(), t.org_id)
        .await
        .unwrap();
    assert_eq!(members.len(), 2);
    assert_eq!(members[0].email, "a.new@example.com");
    assert_eq!(members[1].email, "a@example.com");
    assert_eq!(event_names(&t).await, ["user.created", "user.created"]);
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

async fn access_block_creates_and_updates_the_subscription(b: Backend) {
    let t = TestApp::spawn(b).await;
    let plan = pro_plan(&t).await;
    let r = sync(
        &t,
        json!({"email": "sub@example.com",
               "access": {"planName": "Pro", "processorSubscriptionId": "sub_1",
                          "currentPeriodStart": "2026-01-01T00:00:00Z",
                          "currentPeriodEnd": "2026-02-01T00:00:00+01:00",
                          "metadata": {"source": "checkout"}}}),
    )
    .await;
    r.expect(201);
    let member = r.body["data"]["member"]["id"].clone();
    let a = r.body["data"]["access"].clone();
    assert_eq!(a["organizationId"], t.org_id);
    assert_eq!(a["userId"], member);
    assert_eq!(a["planId"], plan["id"]);
    assert_eq!(a["status"], "active", "status defaults to active");
    assert_eq!(a["jobsRemaining"], 5, "defaults to the plan's jobsIncluded");
    assert_eq!(a["processorSubscriptionId"], "sub_1");
    assert_eq!(a["currentPeriodStart"], "2026-01-01T00:00:00Z");
    assert_eq!(a["currentPeriodEnd"], "2026-01-31T23:00:00Z");
    assert_eq!(a["cancelAt"], Value::Null);
    assert_eq!(a["canceledAt"], Value::Null);
    assert_eq!(a["metadata"], json!({"source": "checkout"}));
    let ev = events(&t).await;
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0].0, "user.created");
    assert_eq!(
        ev[1],
        (
            "subscription.created".to_string(),
            json!({"access_id": a["id"], "user_id": member, "plan_id": plan["id"], "status": "active"})
        )
    );
    // The same subscription again: the record is updated, not added.
    let r = sync(
        &t,
        json!({"email": "sub@example.com",
               "access": {"processorPriceId": "price_pro", "processorSubscriptionId": "sub_1",
                          "status": "past_due", "jobsRemaining": 2, "cancelAt": "2026-03-01T00:00:00Z"}}),
    )
    .await;
    r.expect(200);
    let a2 = &r.body["data"]["access"];
    assert_eq!(a2["id"], a["id"]);
    assert_eq!(a2["status"], "past_due");
    assert_eq!(a2["jobsRemaining"], 2);
    assert_eq!(a2["cancelAt"], "2026-03-01T00:00:00Z");
    assert_eq!(a2["currentPeriodStart"], "2026-01-01T00:00:00Z", "kept");
    assert_eq!(a2["metadata"], json!({"source": "checkout"}), "kept");
    // Canceling emits subscription.canceled once and stamps canceledAt.
    let r = sync(
        &t,
        json!({"email": "sub@example.com", "access": {"planName": "Pro", "status": "canceled",
               "currentPeriodEnd": null}}),
    )
    .await;
    r.expect(200);
    let a3 = &r.body["data"]["access"];
    assert_eq!(a3["id"], a["id"], "found by plan without a subscription id");
    assert_eq!(a3["status"], "canceled");
    assert!(a3["canceledAt"].as_str().is_some());
    assert_eq!(a3["currentPeriodEnd"], Value::Null, "null clears");
    let r = sync(
        &t,
        json!({"email": "sub@example.com", "access": {"planName": "Pro", "status": "canceled"}}),
    )
    .await;
    assert_eq!(r.body["data"]["access"]["canceledAt"], a3["canceledAt"]);
    let ev = events(&t).await;
    assert_eq!(
        ev.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
        [
            "user.created",
            "subscription.created",
            "subscription.canceled"
        ]
    );
    assert_eq!(
        ev[2].1,
        json!({"access_id": a["id"], "user_id": member, "plan_id": plan["id"], "status": "canceled"})
    );
    // A sync without the block leaves the access record alone.
    let r = sync(&t, json!({"email": "sub@example.com"})).await;
    assert_eq!(r.body["data"]["access"], Value::Null);
    let uid = uuid::Uuid::parse_str(member.as_str().unwrap()).unwrap();
    let stored = jobboard_domain::members::access_of(t.db(), t.org_id, uid)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].jobs_remaining, 2);
    // A new subscription id on the same plan is a new record (a new subscription).
    let r = sync(
        &t,
        json!({"email": "sub@example.com", "access": {"planId": plan["id"], "processorSubscriptionId": "sub_2",
               "status": "trialing"}}),
    )
    .await;
    assert_ne!(r.body["data"]["access"]["id"], a["id"]);
    assert_eq!(r.body["data"]["access"]["jobsRemaining"], 5);
    // The same subscription moving to another plan starts from that plan's allowance.
    let gold = create_plan(
        &t,
        json!({"name": "Gold", "price": 99, "currency": "USD", "interval": "year", "jobsIncluded": 20}),
    )
    .await;
    let r = sync(
        &t,
        json!({"email": "sub@example.com", "access": {"planName": "Gold", "processorSubscriptionId": "sub_2"}}),
    )
    .await;
    let moved = &r.body["data"]["access"];
    assert_eq!(moved["planId"], gold["id"]);
    assert_eq!(moved["jobsRemaining"], 20);
    assert_eq!(moved["status"], "trialing", "kept");
    // A period ending before it starts is refused.
    let r = sync(
        &t,
        json!({"email": "sub@example.com", "access": {"planName": "Gold", "processorSubscriptionId": "sub_2",
               "currentPeriodStart": "2026-05-01T00:00:00Z", "currentPeriodEnd": "2026-04-01T00:00:00Z"}}),
    )
    .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["access.currentPeriodEnd"]);
    // A subscription of another member is a conflict.
    let r = sync(
        &t,
        json!({"email": "someone@example.com", "access": {"planName": "Pro", "processorSubscriptionId": "sub_1"}}),
    )
    .await;
    r.expect_error(409, "conflict");
    assert_eq!(
        r.body["error"]["details"]["field"],
        "access.processorSubscriptionId"
    );
    assert_eq!(
        jobboard_domain::members::list(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        1,
        "the conflicting sync stored no member"
    );
    // Created directly as canceled: one subscription.created, stamped.
    let r = sync(
        &t,
        json!({"email": "late@example.com", "access": {"planName": "Pro", "status": "canceled"}}),
    )
    .await;
    assert!(r.body["data"]["access"]["canceledAt"].as_str().is_some());
    let names = event_names(&t).await;
    assert_eq!(
        names
            .iter()
            .filter(|n| *n == "subscription.created")
            .count(),
        3
    );
    assert_eq!(
        names
            .iter()
            .filter(|n| *n == "subscription.canceled")
            .count(),
        1
    );
}

async fn access_plan_lookup(b: Backend) {
    let t = TestApp::spawn(b).await;
    let plan = pro_plan(&t).await;
    let basic = create_plan(
        &t,
        json!({"name": "Basic", "price": 0, "currency": "USD", "interval": "one_time", "jobsIncluded": 1}),
    )
    .await;
    for (i, access) in [
        json!({"planId": plan["id"]}),
        json!({"processorPriceId": "price_pro"}),
        json!({"altProcessorPlanId": "P-PRO"}),
        json!({"planName": "Pro"}),
        json!({"planName": "Pro", "processorPriceId": "price_pro"}),
    ]
    .into_iter()
    .enumerate()
    {
        let r = sync(
            &t,
            json!({"email": format!("m{i}@example.com"), "access": access}),
        )
        .await;
        r.expect(201);
        assert_eq!(r.body["data"]["access"]["planId"], plan["id"], "{access}");
    }
    // No plan, or identifiers naming different plans: 422 on `access`, nothing stored.
    for access in [
        json!({"planName": "Gold"}),
        json!({"planId": uuid::Uuid::now_v7()}),
        json!({"processorPriceId": "price_nope"}),
        json!({"altProcessorPlanId": "nope"}),
        json!({"planName": "Basic", "processorPriceId": "price_pro"}),
        json!({"planId": basic["id"], "planName": "Pro"}),
        json!({"status": "active"}),
    ] {
        let r = sync(&t, json!({"email": "nobody@example.com", "access": access})).await;
        r.expect_error(422, "validation_failed");
        assert_eq!(r.error_fields(), ["access"], "{access}");
    }
    assert_eq!(
        jobboard_domain::members::list(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        5
    );
    // A plan of another organization is not found.
    let (other_org, other) = t.new_org("Other", "*", 100, 30).await;
    let r = t
        .req(Method::POST, "/members/sync")
        .key(&other)
        .json(json!({"email": "o@example.com", "access": {"planId": plan["id"]}}))
        .send()
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["access"]);
    assert!(
        jobboard_domain::members::list(t.db(), other_org)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn payment_block_is_exact_and_idempotent(b: Backend) {
    let t = TestApp::spawn(b).await;
    let plan = pro_plan(&t).await;
    let job = t.insert_job(t.org_id, "Rust engineer").await.to_string();
    let body = json!({"email": "pay@example.com",
        "access": {"planName": "Pro"},
        "payment": {"jobId": job, "amount": 19.99, "currency": "usd",
                    "processorPaymentIntentId": "pi_1", "metadata": {"order": 7}}});
    let r = sync(&t, body.clone()).await;
    r.expect(201);
    let p = r.body["data"]["payment"].clone();
    let member = r.body["data"]["member"]["id"].clone();
    assert!(
        r.text.contains("\"amount\":19.99,"),
        "the amount is returned exactly: {}",
        r.text
    );
    assert_eq!(p["organizationId"], t.org_id);
    assert_eq!(p["userId"], member);
    assert_eq!(p["jobId"], job.as_str());
    assert_eq!(p["planId"], plan["id"], "the access block's plan");
    assert_eq!(p["currency"], "USD", "upper-cased");
    assert_eq!(p["status"], "succeeded", "default status");
    assert_eq!(p["paymentProvider"], "processor", "default provider");
    assert_eq!(p["processorPaymentIntentId"], "pi_1");
    assert_eq!(p["processorSessionId"], Value::Null);
    assert_eq!(p["metadata"], json!({"order": 7}));
    // Stored exactly (no binary floating point) on both backends.
    let stored = jobboard_domain::members::payments(t.db(), t.org_id)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].amount.to_string(), "19.99");
    let ev = events(&t).await;
    assert_eq!(
        ev.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
        ["user.created", "subscription.created", "payment.received"]
    );
    assert_eq!(
        ev[2].1,
        json!({"payment_id": p["id"], "user_id": member, "job_id": job, "amount": 19.99,
               "currency": "USD", "payment_provider": "processor"})
    );
    // The same sync retried: the same payment, no second one, no new event.
    let r = sync(&t, body.clone()).await;
    r.expect(200);
    assert_eq!(r.body["data"]["payment"]["id"], p["id"]);
    assert_eq!(r.body["data"]["payment"]["updatedAt"], p["updatedAt"]);
    assert_eq!(
        jobboard_domain::members::payments(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(events(&t).await.len(), 3);
    // Matched by session id too; sent fields replace.
    let r = sync(
        &t,
        json!({"email": "pay@example.com", "payment": {"jobId": job, "amount": 1234567.0001,
               "currency": "EUR", "processorSessionId": "cs_1", "paymentProvider": "alt_processor",
               "status": "pending"}}),
    )
    .await;
    let p2 = r.body["data"]["payment"].clone();
    assert_ne!(p2["id"], p["id"]);
    assert_eq!(p2["planId"], Value::Null, "no access block, no plan");
    assert!(r.text.contains("\"amount\":1234567.0001,"), "{}", r.text);
    let r = sync(
        &t,
        json!({"email": "pay@example.com", "payment": {"jobId": job, "amount": 0.1,
               "currency": "EUR", "processorSessionId": "cs_1", "processorPaymentIntentId": "pi_2"}}),
    )
    .await;
    let p3 = &r.body["data"]["payment"];
    assert_eq!(p3["id"], p2["id"]);
    assert_eq!(p3["processorPaymentIntentId"], "pi_2");
    assert_eq!(p3["paymentProvider"], "alt_processor", "kept");
    assert_eq!(p3["status"], "pending", "kept");
    assert!(r.text.contains("\"amount\":0.1,"), "{}", r.text);
    // Without processor ids every sync records a new payment.
    for _ in 0..2 {
        sync(
            &t,
            json!({"email": "pay@example.com", "payment": {"jobId": job, "amount": 5,
                   "currency": "USD", "paymentProvider": "manual", "planId": plan["id"]}}),
        )
        .await
        .expect(200);
    }
    let all = jobboard_domain::members::payments(t.db(), t.org_id)
        .await
        .unwrap();
    assert_eq!(all.len(), 4);
    assert_eq!(all[3].amount.to_string(), "5");
}

async fn payment_status_changes_and_conflicts(b: Backend) {
    let t = TestApp::spawn(b).await;
    let job = t.insert_job(t.org_id, "Designer").await.to_string();
    let pending = json!({"email": "p@example.com", "payment": {"jobId": job, "amount": 10,
        "currency": "USD", "processorSessionId": "cs_9", "status": "pending"}});
    sync(&t, pending.clone()).await.expect(201);
    assert_eq!(event_names(&t).await, ["user.created"]);
    // Pending -> succeeded: payment.received, once.
    let mut done = pending.clone();
    done["payment"]["status"] = json!("succeeded");
    sync(&t, done.clone()).await.expect(200);
    sync(&t, done).await.expect(200);
    assert_eq!(event_names(&t).await, ["user.created", "payment.received"]);
    let mut refunded = pending.clone();
    refunded["payment"]["status"] = json!("refunded");
    let r = sync(&t, refunded).await;
    assert_eq!(r.body["data"]["payment"]["status"], "refunded");
    assert_eq!(events(&t).await.len(), 2);
    // A processor id of another member's payment is a conflict; nothing is stored.
    let r = sync(
        &t,
        json!({"email": "q@example.com", "payment": {"jobId": job, "amount": 10,
               "currency": "USD", "processorSessionId": "cs_9"}}),
    )
    .await;
    r.expect_error(409, "conflict");
    assert_eq!(r.body["error"]["details"]["field"], "payment");
    // Intent and session naming two different payments is a conflict.
    sync(
        &t,
        json!({"email": "p@example.com", "payment": {"jobId": job, "amount": 3,
               "currency": "USD", "processorPaymentIntentId": "pi_x"}}),
    )
    .await
    .expect(200);
    let r = sync(
        &t,
        json!({"email": "p@example.com", "payment": {"jobId": job, "amount": 3,
               "currency": "USD", "processorPaymentIntentId": "pi_x", "processorSessionId": "cs_9"}}),
    )
    .await;
    r.expect_error(409, "conflict");
    // A plan id that is no plan of the organization.
    let r = sync(
        &t,
        json!({"email": "p@example.com", "payment": {"jobId": job, "amount": 3,
               "currency": "USD", "planId": uuid::Uuid::now_v7()}}),
    )
    .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["payment.planId"]);
    assert_eq!(
        jobboard_domain::members::list(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        jobboard_domain::members::payments(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        2
    );
}

async fn failure_in_payment_rolls_back_everything(b: Backend) {
    let t = TestApp::spawn(b).await;
    pro_plan(&t).await;
    let (other_org, _) = t.new_org("Other", "*", 100, 30).await;
    let foreign_job = t.insert_job(other_org, "Not ours").await;
    // The member and the access record are written first, inside the transaction; the
    // payment's job check then fails, and nothing of the request may remain.
    let body = json!({"email": "atomic@example.com", "name": "Atomic",
        "access": {"planName": "Pro", "processorSubscriptionId": "sub_atomic"},
        "payment": {"jobId": foreign_job, "amount": 19.99, "currency": "USD",
                    "processorPaymentIntentId": "pi_atomic"}});
    let r = sync(&t, body.clone()).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["payment.jobId"]);
    assert!(
        jobboard_domain::members::list(t.db(), t.org_id)
            .await
            .unwrap()
            .is_empty(),
        "no member"
    );
    assert!(
        jobboard_domain::members::payments(t.db(), t.org_id)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(events(&t).await.is_empty(), "no event");
    // The same on an existing member: its update and the new access record roll back too.
    sync(&t, json!({"email": "atomic@example.com", "name": "Before"}))
        .await
        .expect(201);
    let r = sync(&t, body.clone()).await;
    r.expect_error(422, "validation_failed");
    let members = jobboard_domain::members::list(t.db(), t.org_id)
        .await
        .unwrap();
    assert_eq!(members.len(), 1);
    assert_eq!(members[0].name, "Before");
    assert!(
        jobboard_domain::members::access_of(t.db(), t.org_id, members[0].id)
            .await
            .unwrap()
            .is_empty(),
        "no access record"
    );
    assert_eq!(event_names(&t).await, ["user.created"]);
    // With a job of the organization the same request succeeds whole.
    let mut ok = body;
    ok["payment"]["jobId"] = json!(t.insert_job(t.org_id, "Ours").await);
    let r = sync(&t, ok).await;
    r.expect(200);
    assert_eq!(r.body["data"]["member"]["name"], "Atomic");
    assert_eq!(
        event_names(&t).await,
        ["user.created", "subscription.created", "payment.received"]
    );
}

async fn concurrent_first_syncs_create_one_member(b: Backend) {
    let t = TestApp::spawn(b).await;
    pro_plan(&t).await;
    let job = t.insert_job(t.org_id, "Dev").await.to_string();
    for round in 0..3 {
        let email = format!("race{round}@example.com");
        let body = json!({"email": email, "access": {"planName": "Pro", "processorSubscriptionId": format!("sub_{round}")},
            "payment": {"jobId": job, "amount": 9.5, "currency": "USD",
                        "processorPaymentIntentId": format!("pi_{round}")}});
        let requests = (0..8).map(|i| {
            let mut b = body.clone();
            if i % 2 == 1 {
                b["email"] = json!(email.to_uppercase());
            }
            t.post("/members/sync", b)
        });
        let results = futures_join_all(requests).await;
        let mut created = 0;
        let mut ids = std::collections::HashSet::new();
        for r in &results {
            assert!(
                r.status.as_u16() == 200 || r.status.as_u16() == 201,
                "status {}: {}",
                r.status,
                r.text
            );
            if r.status.as_u16() == 201 {
                created += 1;
            }
            ids.insert(r.body["data"]["member"]["id"].as_str().unwrap().to_string());
        }
        assert_eq!(created, 1, "exactly one request created the member");
        assert_eq!(ids.len(), 1, "every request saw the same member");
    }
    assert_eq!(
        jobboard_domain::members::list(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        jobboard_domain::members::payments(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        3
    );
    let names = event_names(&t).await;
    for (name, n) in [
        ("user.created", 3),
        ("subscription.created", 3),
        ("payment.received", 3),
    ] {
        assert_eq!(names.iter().filter(|e| *e == name).count(), n, "{name}");
    }
    // The same with a userId: one member with that id.
    let uid = uuid::Uuid::now_v7().to_string();
    let results = futures_join_all((0..6).map(|_| {
        t.post(
            "/members/sync",
            json!({"email": "uid@example.com", "userId": uid}),
        )
    }))
    .await;
    assert_eq!(
        results.iter().filter(|r| r.status.as_u16() == 201).count(),
        1
    );
    assert!(
        results
            .iter()
            .all(|r| r.body["data"]["member"]["id"] == uid.as_str())
    );
}

/// Runs the requests concurrently and returns their responses in order.
pub async fn futures_join_all<F: std::future::Future<Output = Resp>>(
    futs: impl Iterator<Item = F>,
) -> Vec<Resp> {
    let mut pinned: Vec<std::pin::Pin<Box<F>>> = futs.map(Box::pin).collect();
    let mut results: Vec<Option<Resp>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        for (f, slot) in pinned.iter_mut().zip(results.iter_mut()) {
            if slot.is_none()
                && let std::task::Poll::Ready(r) = f.as_mut().poll(cx)
            {
                *slot = Some(r);
            }
        }
        if results.iter().all(Option::is_some) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    results.into_iter().map(Option::unwrap).collect()
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
    assert_eq!(r.body["data"]["member"]["organizationId"], other_org);
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
    assert_eq!(r.body["data"]["member"]["organizationId"], other_org);
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

async fn emails_match_ignoring_ascii_case_only(b: Backend) {
    let t = TestApp::spawn(b).await;
    let kate = sync(&t, json!({"email": "kate@example.com", "name": "Kate"})).await;
    kate.expect(201);
    let kate_id = kate.body["data"]["member"]["id"].clone();
    // The Kelvin sign (U+212A) lower-cases to `k` under Unicode rules, but it is another
    // address: another member, and Kate is left alone.
    let kelvin = sync(&t, json!({"email": "\u{212A}ate@example.com"})).await;
    kelvin.expect(201);
    assert_ne!(kelvin.body["data"]["member"]["id"], kate_id);
    assert_eq!(
        kelvin.body["data"]["member"]["email"],
        "\u{212A}ate@example.com"
    );
    // The same for a dotted capital I (U+0130) and `i` followed by U+0307.
    let ivan = sync(&t, json!({"email": "i\u{307}van@example.com"})).await;
    ivan.expect(201);
    let dotted = sync(&t, json!({"email": "\u{130}van@example.com"})).await;
    dotted.expect(201);
    assert_ne!(
        dotted.body["data"]["member"]["id"],
        ivan.body["data"]["member"]["id"]
    );
    let stored = jobboard_domain::members::list(t.db(), t.org_id)
        .await
        .unwrap();
    let emails: Vec<&str> = stored.iter().map(|m| m.email.as_str()).collect();
    assert_eq!(
        emails,
        [
            "kate@example.com",
            "\u{212A}ate@example.com",
            "i\u{307}van@example.com",
            "\u{130}van@example.com"
        ],
        "four members, each with its address as sent"
    );
    // ASCII letters still match in any case: the same member, its address as last sent.
    let again = sync(&t, json!({"email": "Kate@Example.com"})).await;
    again.expect(200);
    assert_eq!(again.body["data"]["member"]["id"], kate_id);
    assert_eq!(again.body["data"]["member"]["name"], "Kate");
    assert_eq!(again.body["data"]["member"]["email"], "Kate@Example.com");
    // Each sync of a new address created one member; the others created none.
    assert_eq!(
        event_names(&t).await,
        [
            "user.created",
            "user.created",
            "user.created",
            "user.created"
        ]
    );
    // A member found by userId may not take an address that matches another's.
    let r = sync(
        &t,
        json!({"email": "KATE@example.com", "userId": kelvin.body["data"]["member"]["id"]}),
    )
    .await;
    r.expect_error(409, "conflict");
    assert_eq!(r.body["error"]["details"]["field"], "email");
}

/// The stored `email_lower` of every member of the organization, by address.
async fn stored_identities(t: &TestApp) -> Vec<(String, String)> {
    jobboard_store::dispatch!(t.db().reader(), p => {
        sqlx::query_as("SELECT email, email_lower FROM members WHERE org_id = $1 ORDER BY created_at, id")
            .bind(t.org_id)
            .fetch_all(p)
            .await
            .unwrap()
    })
}

async fn upgrading_recomputes_stored_email_identities(b: Backend) {
    let t = TestApp::spawn(b).await;
    let addresses = [
        "\u{212A}ate@Example.com",
        "\u{C9}Lodie@Example.COM",
        "\u{130}van@example.com",
        "Plain@Example.com",
    ];
    for email in addresses {
        sync(&t, json!({ "email": email })).await.expect(201);
    }
    // The database as versions before 11 left it: addresses folded with Unicode rules.
    jobboard_store::dispatch!(t.db().writer(), p => {
        for email in addresses {
            sqlx::query("UPDATE members SET email_lower = $1 WHERE org_id = $2 AND email = $3")
                .bind(email.to_lowercase())
                .bind(t.org_id)
                .bind(email)
                .execute(p)
                .await
                .unwrap();
        }
        sqlx::query("DELETE FROM schema_migrations WHERE version = 11")
            .execute(p)
            .await
            .unwrap();
    });
    assert_eq!(stored_identities(&t).await[0].1, "kate@example.com");
    let applied = t.db().migrate().await.unwrap();
    assert_eq!(applied, ["0011_member_email_identity"]);
    assert_eq!(
        stored_identities(&t).await,
        [
            ("\u{212A}ate@Example.com", "\u{212A}ate@example.com"),
            ("\u{C9}Lodie@Example.COM", "\u{C9}lodie@example.com"),
            ("\u{130}van@example.com", "\u{130}van@example.com"),
            ("Plain@Example.com", "plain@example.com"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    // Upgraded members are found by their own address in any ASCII case, and no longer
    // by the addresses Unicode folding confused them with.
    let r = sync(&t, json!({"email": "\u{212A}ATE@example.com"})).await;
    r.expect(200);
    assert_eq!(r.body["data"]["member"]["email"], "\u{212A}ATE@example.com");
    sync(&t, json!({"email": "plain@example.com"}))
        .await
        .expect(200);
    sync(&t, json!({"email": "kate@example.com"}))
        .await
        .expect(201);
    sync(&t, json!({"email": "\u{E9}lodie@example.com"}))
        .await
        .expect(201);
    assert_eq!(
        jobboard_domain::members::list(t.db(), t.org_id)
            .await
            .unwrap()
            .len(),
        6
    );
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
    let doc = serde_json::to_value(jobboard::http::openapi()).unwrap();
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
