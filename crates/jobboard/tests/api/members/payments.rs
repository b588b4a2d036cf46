//! The `payment` block of a sync: exact and idempotent, status changes and conflicts, and a
//! failure that rolls the whole sync back.

use serde_json::{Value, json};

use super::*;
use crate::backends;

backends!(
    payment_block_is_exact_and_idempotent,
    payment_status_changes_and_conflicts,
    failure_in_payment_rolls_back_everything,
);

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
    assert_eq!(p["organizationId"], t.org_id.0);
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
        json!({"payment_id": p["id"], "user_id": member, "job_id": job, "plan_id": p["planId"],
               "amount": 19.99, "currency": "USD", "payment_provider": "processor"})
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
