//! A pack of job posts (a plan with `jobsIncluded` and the processor's price) bought
//! through the same checkout as a post: its posts once, whatever the events, and taken
//! back by a refund.

use super::*;
use crate::{accounts, backends};

backends!(
    a_pack_is_bought_once_and_refunded,
    a_member_deleted_before_paying_leaves_the_payment,
);

async fn a_pack_is_bought_once_and_refunded(b: Backend) {
    let sink = SmtpSink::start().await;
    let test = "a_pack_is_bought_once_and_refunded";
    let Some((t, p, _)) = paid_board(b, test, &sink).await else {
        return;
    };
    // The pack's price lives at the processor; the plan names it.
    let price = p.create_price(9900, "eur", "Five posts").await;
    let plan = t
        .post(
            "/plans",
            json!({"name": "Five posts", "processorPriceId": price, "price": 99,
                   "currency": "EUR", "interval": "one_time", "jobsIncluded": 5}),
        )
        .await;
    plan.expect(201);
    let plan = plan.body["data"]["id"].as_str().unwrap().to_string();
    // A monthly plan is not a pack, and is not offered.
    t.post(
        "/plans",
        json!({"name": "Monthly", "processorPriceId": "price_monthly", "price": 10,
               "currency": "EUR", "interval": "month", "jobsIncluded": 3}),
    )
    .await
    .expect(201);
    t.post(
        "/members/sync",
        json!({"email": "buyer@example.com", "role": "employer"}),
    )
    .await
    .expect(201);
    let m = accounts::signed_in(&t, &sink, "buyer@example.com", None).await;
    let home = m.get("/account").await;
    home.expect(200);
    let buttons: Vec<String> = home
        .html()
        .select(&sel("ul.packs form button"))
        .map(|b| b.text().collect())
        .collect();
    assert_eq!(
        buttons,
        vec!["Buy Five posts: 5 job posts for 99.00 EUR".to_string()]
    );
    let csp = home.header("content-security-policy").unwrap();
    assert!(
        csp.contains(&format!("form-action 'self' {}", p.base)),
        "{csp}"
    );
    let token = accounts::input(&home, "csrf");
    // A form without its token buys nothing.
    m.post(&format!("/account/packs/{plan}"), &[("csrf", "forged")])
        .await
        .expect(403);
    let r = m
        .post(
            &format!("/account/packs/{plan}"),
            &[("csrf", token.as_str())],
        )
        .await;
    r.expect(303);
    let location = r.header("location").unwrap().to_string();
    assert!(
        location.starts_with(&format!("{}/pay/", p.base)),
        "{location}"
    );
    let session = session_of(&location);
    let opened = p
        .sessions()
        .await
        .into_iter()
        .find(|s| s["id"] == session.as_str())
        .unwrap();
    assert_eq!(opened["amount_total"], 9900);
    assert_eq!(opened["metadata"]["plan_id"], plan.as_str());
    assert!(opened["metadata"].get("job_id").is_none(), "{opened}");
    // Paid on the hosted page; the event then arrives five more times.
    let back = p.pay_page(&session).await;
    p.control("resend", &format!("{session}?times=5")).await;
    let path = back.split_once("://").unwrap().1;
    let thanks = m.get(&path[path.find('/').unwrap()..]).await;
    thanks.expect(200);
    assert!(
        thanks
            .text
            .contains("5 job posts of “Five posts” were added to your account"),
        "{}",
        thanks.text
    );
    let member = t.get("/members/buyer@example.com").await;
    let subs = member.body["data"]["subscriptions"].as_array().unwrap();
    assert_eq!(subs.len(), 1, "{subs:?}");
    assert_eq!(subs[0]["planId"], plan.as_str());
    assert_eq!(subs[0]["status"], "active");
    assert_eq!(subs[0]["jobsRemaining"], 5);
    let pays = t.get("/payments?member=buyer@example.com").await;
    pays.expect(200);
    let list = pays.body["data"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["jobId"], Value::Null);
    assert_eq!(list[0]["planId"], plan.as_str());
    assert_eq!(list[0]["amount"], json!(99));
    assert_eq!(list[0]["currency"], "EUR");
    assert_eq!(list[0]["status"], "succeeded");
    assert_eq!(list[0]["processorSessionId"], session.as_str());
    assert_eq!(events_named(&t, "payment.received").await, 1);
    assert_eq!(events_named(&t, "subscription.created").await, 1);
    // The posts are spent without a checkout.
    let form = m.get("/account/jobs/new").await;
    assert!(
        form.text.contains("Your plan has 5 job posts left"),
        "{}",
        form.text
    );
    let csrf = accounts::input(&form, "csrf");
    m.post(
        "/account/jobs/new",
        &[
            ("csrf", csrf.as_str()),
            ("title", "Baker"),
            ("description", "Bake."),
            ("company_name", "Crumbs"),
        ],
    )
    .await
    .expect(303);
    let member = t.get("/members/buyer@example.com").await;
    assert_eq!(member.body["data"]["subscriptions"][0]["jobsRemaining"], 4);
    // A refund takes back the posts left; the job posted with one stays.
    p.control("refund", &session).await;
    p.control("resend", &format!("{session}?times=2")).await;
    let member = t.get("/members/buyer@example.com").await;
    let sub = &member.body["data"]["subscriptions"][0];
    assert_eq!(sub["status"], "canceled");
    assert_eq!(sub["jobsRemaining"], 0);
    let pays = t.get("/payments?member=buyer@example.com").await;
    assert_eq!(pays.body["data"][0]["status"], "refunded");
    assert_eq!(events_named(&t, "subscription.canceled").await, 1);
    assert_eq!(all_jobs(&t).await, vec![("Baker".into(), "active".into())]);
    // A job seeker buys no posts.
    t.post(
        "/members/sync",
        json!({"email": "seeker@example.com", "role": "jobseeker"}),
    )
    .await
    .expect(201);
    let s = accounts::signed_in(&t, &sink, "seeker@example.com", None).await;
    let home = s.get("/account").await;
    assert_eq!(home.html().select(&sel("ul.packs")).count(), 0);
    let token = accounts::input(&home, "csrf");
    s.post(
        &format!("/account/packs/{plan}"),
        &[("csrf", token.as_str())],
    )
    .await
    .expect(409);
    assert_eq!(p.sessions().await.len(), 1, "no second session was opened");
}

async fn a_member_deleted_before_paying_leaves_the_payment(b: Backend) {
    let sink = SmtpSink::start().await;
    let test = "a_member_deleted_before_paying_leaves_the_payment";
    let Some((t, p, price)) = paid_board(b, test, &sink).await else {
        return;
    };
    let pack_price = p.create_price(9900, "eur", "Five posts").await;
    let plan = t
        .post(
            "/plans",
            json!({"name": "Five posts", "processorPriceId": pack_price, "price": 99,
                   "currency": "EUR", "interval": "one_time", "jobsIncluded": 5}),
        )
        .await;
    plan.expect(201);
    let plan = plan.body["data"]["id"].as_str().unwrap().to_string();
    t.post(
        "/members/sync",
        json!({"email": "gone@example.com", "role": "employer"}),
    )
    .await
    .expect(201);
    let m = accounts::signed_in(&t, &sink, "gone@example.com", None).await;
    // A paid post and a pack, both left at the checkout.
    let form = m.get("/account/jobs/new").await;
    let csrf = accounts::input(&form, "csrf");
    let post = m
        .post(
            "/account/jobs/new",
            &[
                ("csrf", csrf.as_str()),
                ("title", "Baker"),
                ("description", "Bake."),
                ("company_name", "Crumbs"),
                ("price_id", price.as_str()),
            ],
        )
        .await;
    post.expect(303);
    let post = session_of(post.header("location").unwrap());
    let home = m.get("/account").await;
    let csrf = accounts::input(&home, "csrf");
    let pack = m
        .post(
            &format!("/account/packs/{plan}"),
            &[("csrf", csrf.as_str())],
        )
        .await;
    pack.expect(303);
    let pack = session_of(pack.header("location").unwrap());
    // The member is deleted, then both are paid.
    t.post(
        "/members/access",
        json!({"email": "gone@example.com", "action": "delete_member"}),
    )
    .await
    .expect(200);
    for session in [&post, &pack] {
        assert_eq!(
            p.control("pay", session).await["delivered"],
            200,
            "{session}"
        );
    }
    // What was paid for is recorded, without the member; the job is published.
    let pays = t.get("/payments").await;
    pays.expect(200);
    let list = pays.body["data"].as_array().unwrap();
    assert_eq!(list.len(), 2, "{list:?}");
    assert!(
        list.iter()
            .all(|p| p["userId"].is_null() && p["status"] == "succeeded")
    );
    assert_eq!(events_named(&t, "payment.received").await, 2);
    assert_eq!(all_jobs(&t).await, vec![("Baker".into(), "active".into())]);
    // The pack's posts had no one to go to.
    assert_eq!(events_named(&t, "subscription.created").await, 0);
}
