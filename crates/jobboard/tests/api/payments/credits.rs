//! A member's job credits: posts without a checkout while the plan has posts left, never
//! more than it has, whatever the concurrency; then the checkout.

use super::*;
use crate::{accounts, backends, members::futures_join_all};

backends!(twenty_posts_on_five_credits_are_five_free_and_fifteen_checkouts);

async fn twenty_posts_on_five_credits_are_five_free_and_fifteen_checkouts(b: Backend) {
    let sink = SmtpSink::start().await;
    let test = "twenty_posts_on_five_credits_are_five_free_and_fifteen_checkouts";
    let Some((t, p, price)) = paid_board(b, test, &sink).await else {
        return;
    };
    let plan = t
        .post(
            "/plans",
            json!({"name": "Pack of 5", "price": 100, "currency": "EUR", "interval": "month",
                   "jobsIncluded": 5}),
        )
        .await;
    plan.expect(201);
    let plan = plan.body["data"]["id"].as_str().unwrap().to_string();
    t.post(
        "/members/sync",
        json!({"email": "pack@example.com", "role": "employer", "access": {"planId": plan}}),
    )
    .await
    .expect(201);
    let m = accounts::signed_in(&t, &sink, "pack@example.com", None).await;
    let form = m.get("/account/jobs/new").await;
    form.expect(200);
    assert!(
        form.text.contains("Your plan has 5 job posts left"),
        "{}",
        form.text
    );
    let token = accounts::input(&form, "csrf");
    let titles: Vec<String> = (0..20).map(|i| format!("Job {i}")).collect();
    let forms: Vec<[(&str, &str); 5]> = titles
        .iter()
        .map(|title| {
            [
                ("csrf", token.as_str()),
                ("title", title.as_str()),
                ("description", "Bake."),
                ("company_name", "Crumbs"),
                ("price_id", price.as_str()),
            ]
        })
        .collect();
    let answers = futures_join_all(forms.iter().map(|f| m.post("/account/jobs/new", f))).await;
    let places: Vec<String> = answers
        .iter()
        .map(|r| {
            r.expect(303);
            r.header("location").unwrap().to_string()
        })
        .collect();
    let free = places
        .iter()
        .filter(|l| *l == "/account/jobs?notice=posted")
        .count();
    let checkouts = places
        .iter()
        .filter(|l| l.starts_with(&format!("{}/pay/", p.base)))
        .count();
    assert_eq!((free, checkouts), (5, 15), "{places:?}");
    let member = t.get("/members/pack@example.com").await;
    assert_eq!(member.body["data"]["subscriptions"][0]["jobsRemaining"], 0);
    let all = all_jobs(&t).await;
    assert_eq!(all.iter().filter(|(_, s)| s == "active").count(), 5);
    assert_eq!(all.iter().filter(|(_, s)| s == "draft").count(), 15);
    // With no posts left, the form offers the prices.
    let form = m.get("/account/jobs/new").await;
    assert!(form.text.contains("Standard: 49.00 EUR"));
    assert!(!form.text.contains("job posts left"));
}
