//! The featured upgrade of a live job: paid through the same checkout, the job listed
//! first until `featured_until`, when the scheduler ends it.

use std::time::Duration;

use super::*;
use crate::{accounts, backends};

backends!(a_featured_upgrade_is_sticky_until_its_end);

async fn a_featured_upgrade_is_sticky_until_its_end(b: Backend) {
    let sink = SmtpSink::start().await;
    let test = "a_featured_upgrade_is_sticky_until_its_end";
    let Some((t, p, _)) = paid_board(b, test, &sink).await else {
        return;
    };
    let Value::Object(body) = json!({"name": "Featured week", "amount": 1500, "currency": "EUR",
                                     "days": 30, "featured_days": 7})
    else {
        unreachable!()
    };
    payments::create_price(t.db(), t.org_id, Input::new(body))
        .await
        .unwrap();
    let member = accounts::member(&t, "boss@example.com", "employer", "approved").await;
    let r = t
        .post(
            "/jobs",
            json!({"title": "Live job", "description": "x", "company_name": "Acme",
                   "status": "active", "owner_user_id": member}),
        )
        .await;
    let job = r.body["data"]["id"].as_str().unwrap().to_string();
    let m = accounts::signed_in(&t, &sink, "boss@example.com", None).await;
    let list = m.get("/account/jobs").await;
    list.expect(200);
    assert!(
        list.text.contains("Feature for 7 days (15.00 EUR)"),
        "{}",
        list.text
    );
    let price = accounts::input(&list, "price_id");
    let token = accounts::input(&list, "csrf");
    let r = m
        .post(
            &format!("/account/jobs/{job}/feature"),
            &[("csrf", token.as_str()), ("price_id", price.as_str())],
        )
        .await;
    r.expect(303);
    let session = session_of(r.header("location").unwrap());
    assert_eq!(p.control("pay", &session).await["delivered"], 200);
    let featured = t.get(&format!("/jobs/{job}")).await;
    assert_eq!(featured.body["data"]["is_sticky"], true);
    assert_eq!(
        featured.body["data"]["status"], "active",
        "the upgrade changes no status"
    );
    let until =
        jobboard_store::Ts::parse(featured.body["data"]["featured_until"].as_str().unwrap())
            .unwrap();
    assert_eq!(
        (until.micros() - t.app.clock.now().micros()) / 86_400_000_000,
        6
    );
    // The week passes: the scheduler ends it, with job.updated.
    let updates = events_named(&t, "job.updated").await;
    t.app.clock.advance(Duration::from_secs(7 * 86_400 + 60));
    jobboard::scheduler::tick(&t.app).await;
    let ended = t.get(&format!("/jobs/{job}")).await;
    assert_eq!(ended.body["data"]["is_sticky"], false);
    assert!(ended.body["data"]["featured_until"].is_null());
    assert_eq!(events_named(&t, "job.updated").await, updates + 1);
    // A job that is not live cannot be featured (signed in again: a week ended the
    // session).
    t.patch(&format!("/jobs/{job}"), json!({"status": "expired"}))
        .await
        .expect(200);
    let m = accounts::signed_in(&t, &sink, "boss@example.com", None).await;
    let token = accounts::input(&m.get("/account").await, "csrf");
    m.post(
        &format!("/account/jobs/{job}/feature"),
        &[("csrf", token.as_str()), ("price_id", price.as_str())],
    )
    .await
    .expect(409);
}
