//! The `access` block of a sync: the subscription it creates and updates, and the lookup of
//! its plan.

use reqwest::Method;
use serde_json::{Value, json};

use super::*;
use jobboard_domain::MemberId;

use crate::{backends, plans::create_plan};

backends!(
    access_block_creates_and_updates_the_subscription,
    access_plan_lookup,
);

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
    assert_eq!(a["organizationId"], t.org_id.0);
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
    let uid: MemberId = member.as_str().unwrap().parse().unwrap();
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
