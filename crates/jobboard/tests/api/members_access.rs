//! `POST /members/access`: every action on an access record, which record it picks, the
//! moves it refuses, its events, and `delete_member` (the member and its records go, its
//! payments stay with no member).

use jobboard_store::events::list_for_org;
use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    actions_move_the_record_and_emit_their_events,
    the_record_is_chosen_by_subscription_then_plan_then_latest,
    refused_moves_and_bad_requests,
    delete_member_keeps_payments_detached,
    other_organizations_and_scopes_see_nothing,
    upgrading_keeps_every_payment,
);

async fn plan(t: &TestApp, name: &str) -> String {
    let r = t
        .post(
            "/plans",
            json!({"name": name, "price": 10, "currency": "EUR", "interval": "month", "jobsIncluded": 3}),
        )
        .await;
    r.expect(201);
    r.body["data"]["id"].as_str().unwrap().to_string()
}

async fn sync(t: &TestApp, body: Value) -> Value {
    let r = t.post("/members/sync", body).await;
    assert!(r.status.is_success(), "{}", r.text);
    r.body["data"].clone()
}

async fn act(t: &TestApp, body: Value) -> Resp {
    t.post("/members/access", body).await
}

/// The event types written since `from` (an index into the organization's events).
async fn events_since(t: &TestApp, from: usize) -> Vec<(String, Value)> {
    list_for_org(t.db(), t.org_id)
        .await
        .unwrap()
        .into_iter()
        .skip(from)
        .map(|e| (e.event_type, e.data.0))
        .collect()
}

async fn event_count(t: &TestApp) -> usize {
    list_for_org(t.db(), t.org_id).await.unwrap().len()
}

fn in_days(days: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::days(days)).to_rfc3339()
}

async fn actions_move_the_record_and_emit_their_events(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    plan(&t, "Pro").await;
    let period_end = in_days(20);
    let synced = sync(
        &t,
        json!({"email": "ann@example.com", "access": {"planName": "Pro", "currentPeriodStart": in_days(-10), "currentPeriodEnd": period_end}}),
    )
    .await;
    let access_id = synced["access"]["id"].clone();
    let user_id = synced["member"]["id"].clone();

    // mark_past_due: active -> past_due, subscription.updated; a repeat changes nothing.
    let n = event_count(&t).await;
    let r = act(
        &t,
        json!({"email": "ANN@example.com", "action": "mark_past_due"}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["data"]["access"]["status"], "past_due");
    assert_eq!(r.body["data"]["access"]["id"], access_id);
    assert_eq!(r.body["data"]["member"]["id"], user_id);
    let ev = events_since(&t, n).await;
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0].0, "subscription.updated");
    assert_eq!(ev[0].1["previous_status"], "active");
    assert_eq!(ev[0].1["status"], "past_due");
    assert_eq!(ev[0].1["access_id"], access_id);
    let n = event_count(&t).await;
    act(&t, json!({"userId": user_id, "action": "mark_past_due"}))
        .await
        .expect(200);
    assert!(
        events_since(&t, n).await.is_empty(),
        "a repeat emits nothing"
    );

    // cancel_at_period_end: cancelAt = currentPeriodEnd, status kept; reactivate undoes it.
    let r = act(
        &t,
        json!({"email": "ann@example.com", "action": "cancel_at_period_end"}),
    )
    .await;
    r.expect(200);
    let a = &r.body["data"]["access"];
    assert_eq!(a["status"], "past_due");
    assert_eq!(a["cancelAt"], a["currentPeriodEnd"]);
    assert!(a["cancelAt"].is_string());
    let n = event_count(&t).await;
    let r = act(
        &t,
        json!({"email": "ann@example.com", "action": "reactivate"}),
    )
    .await;
    r.expect(200);
    assert!(r.body["data"]["access"]["cancelAt"].is_null());
    assert_eq!(r.body["data"]["access"]["status"], "past_due");
    let ev = events_since(&t, n).await;
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].0, "subscription.updated");
    assert!(ev[0].1["cancel_at"].is_null());

    // activate: past_due -> active.
    let r = act(
        &t,
        json!({"email": "ann@example.com", "action": "activate"}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["data"]["access"]["status"], "active");

    // cancel_now: canceled at once, the period ends now, subscription.canceled; the member
    // no longer passes the paywall.
    let n = event_count(&t).await;
    let r = act(
        &t,
        json!({"email": "ann@example.com", "action": "cancel_now"}),
    )
    .await;
    r.expect(200);
    let a = r.body["data"]["access"].clone();
    assert_eq!(a["status"], "canceled");
    assert!(a["canceledAt"].is_string());
    assert_eq!(a["currentPeriodEnd"], a["canceledAt"]);
    let ev = events_since(&t, n).await;
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].0, "subscription.canceled");
    assert_eq!(ev[0].1["status"], "canceled");
    let look = t.get("/members/ann@example.com").await;
    look.expect(200);
    assert_eq!(look.body["data"]["hasValidPaywallSubscription"], false);
    // Its period has ended: reactivate is refused, activate starts it again.
    act(
        &t,
        json!({"email": "ann@example.com", "action": "reactivate"}),
    )
    .await
    .expect_error(409, "conflict");
    let r = act(
        &t,
        json!({"email": "ann@example.com", "action": "activate", "effectiveAt": in_days(-1)}),
    )
    .await;
    r.expect(200);
    let a = &r.body["data"]["access"];
    assert_eq!(a["status"], "active");
    assert!(a["canceledAt"].is_null());
    assert!(
        a["currentPeriodEnd"].is_null(),
        "a period that has ended no longer bounds it"
    );

    // A cancellation while the paid period lasts can be undone by reactivate.
    sync(
        &t,
        json!({"email": "ann@example.com", "access": {"planName": "Pro", "status": "canceled", "currentPeriodEnd": in_days(5)}}),
    )
    .await;
    let n = event_count(&t).await;
    let r = act(
        &t,
        json!({"email": "ann@example.com", "action": "reactivate"}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["data"]["access"]["status"], "active");
    assert!(r.body["data"]["access"]["canceledAt"].is_null());
    let ev = events_since(&t, n).await;
    assert_eq!(ev[0].1["previous_status"], "canceled");
    assert_eq!(ev[0].1["status"], "active");

    // expire_now at a given past time: expired, the period ends then; expired records
    // refuse every move but activate and expire_now.
    let at = (chrono::Utc::now() - chrono::Duration::hours(1)).to_rfc3339();
    // (The record's period started a day ago, at the activation above.)
    let r = act(
        &t,
        json!({"email": "ann@example.com", "action": "expire_now", "effectiveAt": at}),
    )
    .await;
    r.expect(200);
    let a = &r.body["data"]["access"];
    assert_eq!(a["status"], "expired");
    let end =
        chrono::DateTime::parse_from_rfc3339(a["currentPeriodEnd"].as_str().unwrap()).unwrap();
    let sent = chrono::DateTime::parse_from_rfc3339(&at).unwrap();
    assert!((end - sent).num_milliseconds().abs() < 2, "{end} {sent}");
    for action in [
        "cancel_now",
        "cancel_at_period_end",
        "reactivate",
        "mark_past_due",
    ] {
        let r = act(&t, json!({"email": "ann@example.com", "action": action})).await;
        r.expect_error(409, "conflict");
        assert_eq!(r.body["error"]["details"]["status"], "expired", "{action}");
    }
    act(
        &t,
        json!({"email": "ann@example.com", "action": "expire_now"}),
    )
    .await
    .expect(200);

    // activate creates a record when the member has none of the plan: 201 and
    // subscription.created.
    let other = plan(&t, "Team").await;
    let n = event_count(&t).await;
    let r = act(&t, json!({"email": "ann@example.com", "action": "activate", "planId": other, "processorSubscriptionId": "sub_team"})).await;
    r.expect(201);
    let a = &r.body["data"]["access"];
    assert_eq!(a["status"], "active");
    assert_eq!(a["planId"], other.as_str());
    assert_eq!(a["processorSubscriptionId"], "sub_team");
    assert_eq!(a["jobsRemaining"], 3);
    let ev = events_since(&t, n).await;
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].0, "subscription.created");

    // cancel_at_period_end with effectiveAt in the past: the scheduler cancels it, once.
    let past = (chrono::Utc::now() - chrono::Duration::minutes(1)).to_rfc3339();
    act(&t, json!({"email": "ann@example.com", "action": "cancel_at_period_end", "processorSubscriptionId": "sub_team", "effectiveAt": past}))
        .await
        .expect(200);
    let n = event_count(&t).await;
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 1);
    let ev = events_since(&t, n).await;
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].0, "subscription.canceled");
}

async fn the_record_is_chosen_by_subscription_then_plan_then_latest(b: Backend) {
    let t = TestApp::spawn(b).await;
    let basic = plan(&t, "Basic").await;
    let pro = plan(&t, "Pro").await;
    sync(&t, json!({"email": "bo@example.com", "access": {"planName": "Basic", "processorSubscriptionId": "sub_1"}})).await;
    sync(&t, json!({"email": "bo@example.com", "access": {"planName": "Pro", "processorSubscriptionId": "sub_2"}})).await;
    sync(&t, json!({"email": "cy@example.com", "access": {"planName": "Basic", "processorSubscriptionId": "sub_3"}})).await;

    // By subscription id.
    let r = act(&t, json!({"email": "bo@example.com", "action": "mark_past_due", "processorSubscriptionId": "sub_1"})).await;
    r.expect(200);
    assert_eq!(r.body["data"]["access"]["processorSubscriptionId"], "sub_1");
    // By plan.
    let r = act(
        &t,
        json!({"email": "bo@example.com", "action": "mark_past_due", "planId": pro}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["data"]["access"]["processorSubscriptionId"], "sub_2");
    // The latest record when neither is sent.
    let r = act(
        &t,
        json!({"email": "bo@example.com", "action": "cancel_now"}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["data"]["access"]["processorSubscriptionId"], "sub_2");

    let look = t.get("/members/bo@example.com").await;
    let statuses: Vec<_> = look.body["data"]["subscriptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(statuses, ["past_due", "canceled"]);

    // Another member's subscription, a subscription of another plan, an unknown one.
    act(&t, json!({"email": "bo@example.com", "action": "activate", "processorSubscriptionId": "sub_3"}))
        .await
        .expect_error(409, "conflict");
    act(&t, json!({"email": "bo@example.com", "action": "activate", "processorSubscriptionId": "sub_1", "planId": pro}))
        .await
        .expect_error(409, "conflict");
    act(&t, json!({"email": "bo@example.com", "action": "cancel_now", "processorSubscriptionId": "sub_9"}))
        .await
        .expect_error(404, "not_found");
    // A member without records: 404 unless activate names a plan.
    sync(&t, json!({"email": "dee@example.com"})).await;
    act(
        &t,
        json!({"email": "dee@example.com", "action": "cancel_now"}),
    )
    .await
    .expect_error(404, "not_found");
    act(
        &t,
        json!({"email": "dee@example.com", "action": "activate"}),
    )
    .await
    .expect_error(404, "not_found");
    act(
        &t,
        json!({"email": "dee@example.com", "action": "activate", "planId": basic}),
    )
    .await
    .expect(201);
}

async fn refused_moves_and_bad_requests(b: Backend) {
    let t = TestApp::spawn(b).await;
    plan(&t, "Pro").await;
    let ann = sync(
        &t,
        json!({"email": "ann@example.com", "access": {"planName": "Pro"}}),
    )
    .await;
    sync(
        &t,
        json!({"email": "bob@example.com", "access": {"planName": "Pro"}}),
    )
    .await;
    let n = event_count(&t).await;

    let r = act(&t, json!({"action": "activate"})).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["body"]);
    let r = act(&t, json!({"email": "ann@example.com", "action": "pause", "effectiveAt": "soon", "planId": "x"})).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["action", "planId", "effectiveAt"]);
    let r = act(
        &t,
        json!({"email": "ann@example.com", "action": "activate", "planId": uuid::Uuid::now_v7()}),
    )
    .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["planId"]);
    // The two names disagree; an unknown member.
    act(
        &t,
        json!({"email": "bob@example.com", "userId": ann["member"]["id"], "action": "activate"}),
    )
    .await
    .expect_error(409, "conflict");
    act(
        &t,
        json!({"email": "nobody@example.com", "action": "activate"}),
    )
    .await
    .expect_error(404, "not_found");
    act(
        &t,
        json!({"userId": uuid::Uuid::now_v7(), "action": "delete_member"}),
    )
    .await
    .expect_error(404, "not_found");
    // _now actions happen now; cancel_at_period_end needs a time.
    let r = act(
        &t,
        json!({"email": "ann@example.com", "action": "cancel_now", "effectiveAt": in_days(1)}),
    )
    .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["effectiveAt"]);
    let r = act(
        &t,
        json!({"email": "ann@example.com", "action": "cancel_at_period_end"}),
    )
    .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["effectiveAt"]);
    // Canceled: no past due, no second cancellation at period end.
    act(
        &t,
        json!({"email": "ann@example.com", "action": "cancel_now"}),
    )
    .await
    .expect(200);
    let m = event_count(&t).await;
    act(
        &t,
        json!({"email": "ann@example.com", "action": "mark_past_due"}),
    )
    .await
    .expect_error(409, "conflict");
    act(&t, json!({"email": "ann@example.com", "action": "cancel_at_period_end", "effectiveAt": in_days(3)}))
        .await
        .expect_error(409, "conflict");
    assert_eq!(event_count(&t).await, m, "a refused action writes nothing");
    assert_eq!(m, n + 1, "only the cancellation wrote an event");
    let look = t.get("/members/ann@example.com").await;
    assert_eq!(look.body["data"]["subscriptions"][0]["status"], "canceled");
}

async fn delete_member_keeps_payments_detached(b: Backend) {
    let t = TestApp::spawn(b).await;
    plan(&t, "Pro").await;
    let job = t.insert_job(t.org_id, "Paid job").await;
    let synced = sync(
        &t,
        json!({"email": "pay@example.com", "access": {"planName": "Pro"},
               "payment": {"jobId": job, "amount": 19.99, "currency": "eur", "processorPaymentIntentId": "pi_1"}}),
    )
    .await;
    let user_id = synced["member"]["id"].clone();
    let payment_id = synced["payment"]["id"].clone();
    let n = event_count(&t).await;
    let r = act(
        &t,
        json!({"userId": user_id, "email": "Pay@example.com", "action": "delete_member"}),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["data"]["member"]["id"], user_id);
    assert!(r.body["data"]["access"].is_null());
    let ev = events_since(&t, n).await;
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].0, "user.deleted");
    assert_eq!(ev[0].1["user_id"], user_id);
    assert_eq!(ev[0].1["email"], "pay@example.com");

    t.get("/members/pay@example.com")
        .await
        .expect_error(404, "not_found");
    let list = t.get("/members").await;
    assert_eq!(list.body["meta"]["pagination"]["total_items"], 0);
    let payments = jobboard_domain::members::payments(t.db(), t.org_id)
        .await
        .unwrap();
    assert_eq!(payments.len(), 1, "the payment stays");
    assert_eq!(payments[0].id.to_string(), payment_id.as_str().unwrap());
    assert_eq!(payments[0].user_id, None);
    assert_eq!(payments[0].amount.to_string(), "19.99");
    // A second delete finds no member; the address can join again as a new member.
    act(&t, json!({"userId": user_id, "action": "delete_member"}))
        .await
        .expect_error(404, "not_found");
    let again = t
        .post(
            "/members/sync",
            json!({"email": "pay@example.com", "access": {"planName": "Pro"}}),
        )
        .await;
    again.expect(201);
    assert_ne!(again.body["data"]["member"]["id"], user_id);
    assert_eq!(again.body["data"]["access"]["status"], "active");
}

async fn other_organizations_and_scopes_see_nothing(b: Backend) {
    let t = TestApp::spawn(b).await;
    plan(&t, "Pro").await;
    sync(
        &t,
        json!({"email": "ann@example.com", "access": {"planName": "Pro"}}),
    )
    .await;
    let (_, other_key) = t.new_org("Other", "*", 1000, 1000).await;
    for action in ["cancel_now", "delete_member"] {
        t.req(reqwest::Method::POST, "/members/access")
            .key(&other_key)
            .json(json!({"email": "ann@example.com", "action": action}))
            .send()
            .await
            .expect_error(404, "not_found");
    }
    let reader = t.new_key(t.org_id, "members:read", 1000, 1000).await;
    t.req(reqwest::Method::POST, "/members/access")
        .key(&reader)
        .json(json!({"email": "ann@example.com", "action": "delete_member"}))
        .send()
        .await
        .expect_error(403, "insufficient_scope");
    let look = t.get("/members/ann@example.com").await;
    look.expect(200);
    assert_eq!(look.body["data"]["subscriptions"][0]["status"], "active");
}

/// Migration 19 (payments may outlive their member) rebuilds the SQLite table: every
/// payment, its exact amount and its uniqueness rules survive it.
async fn upgrading_keeps_every_payment(b: Backend) {
    let t = TestApp::spawn(b).await;
    plan(&t, "Pro").await;
    let job = t.insert_job(t.org_id, "Paid job").await;
    for (i, amount) in [19.99, 0.0001, 12345.5].into_iter().enumerate() {
        sync(
            &t,
            json!({"email": format!("p{i}@example.com"), "access": {"planName": "Pro"},
                   "payment": {"jobId": job, "amount": amount, "currency": "EUR", "processorPaymentIntentId": format!("pi_{i}")}}),
        )
        .await;
    }
    let before = jobboard_domain::members::payments(t.db(), t.org_id)
        .await
        .unwrap();
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query("DELETE FROM schema_migrations WHERE version = 19")
            .execute(p)
            .await
            .unwrap();
    });
    let applied = t.db().migrate().await.unwrap();
    assert_eq!(applied, ["0019_payments_outlive_members"]);
    let after = jobboard_domain::members::payments(t.db(), t.org_id)
        .await
        .unwrap();
    assert_eq!(after, before);
    // A retried payment still updates the one it names instead of adding one.
    sync(
        &t,
        json!({"email": "p0@example.com", "payment": {"jobId": job, "amount": 19.99, "currency": "EUR", "processorPaymentIntentId": "pi_0", "status": "refunded"}}),
    )
    .await;
    let again = jobboard_domain::members::payments(t.db(), t.org_id)
        .await
        .unwrap();
    assert_eq!(again.len(), 3);
    assert_eq!(again[0].status.as_str(), "refunded");
}
