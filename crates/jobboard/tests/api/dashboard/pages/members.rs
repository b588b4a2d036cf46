//! The members page: search, and each member shown with access and payments.

use serde_json::json;

use super::*;
use crate::backends;

backends!(members_are_searched_and_shown_with_access_and_payments);

async fn members_are_searched_and_shown_with_access_and_payments(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    t.post(
        "/plans",
        json!({"name": "Pro", "price": 9.5, "currency": "EUR", "interval": "month", "jobsIncluded": 3}),
    )
    .await
    .expect(201);
    let job = t.insert_job(t.org_id, "Paid").await;
    let r = t
        .post(
            "/members/sync",
            json!({"email": "kate@example.com", "name": "Kate Bell", "access": {"planName": "Pro", "processorSubscriptionId": "sub_9"},
                   "payment": {"jobId": job, "amount": 19.99, "currency": "EUR"}}),
        )
        .await;
    r.expect(201);
    let kate = r.body["data"]["member"]["id"].as_str().unwrap().to_string();
    t.post(
        "/members/sync",
        json!({"email": "tom@example.com", "name": "Tom"}),
    )
    .await
    .expect(201);
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let list = ada.get("/dashboard/members").await;
    list.expect(200);
    assert_eq!(
        texts(&list, "table.members tbody td:first-child a"),
        ["Tom", "Kate Bell"]
    );
    let found = ada.get("/dashboard/members?search=BELL").await;
    assert_eq!(
        texts(&found, "table.members tbody td:first-child a"),
        ["Kate Bell"]
    );
    let none = ada.get("/dashboard/members?search=nobody").await;
    assert!(none.text.contains("No members match"));
    let page = ada.get(&format!("/dashboard/members/{kate}")).await;
    page.expect(200);
    assert_eq!(text_of(&page, "h1").as_deref(), Some("Kate Bell"));
    assert_eq!(text_of(&page, "table.access .plan").as_deref(), Some("Pro"));
    assert_eq!(
        text_of(&page, "table.access .subscription").as_deref(),
        Some("sub_9")
    );
    assert_eq!(
        text_of(&page, "dd.paywall").as_deref(),
        Some("Open: a subscription is valid")
    );
    assert_eq!(
        text_of(&page, "table.payments tbody td:nth-child(2)").as_deref(),
        Some("19.99 EUR")
    );
    // After cancel_now through the API, the page says so.
    t.post(
        "/members/access",
        json!({"email": "kate@example.com", "action": "cancel_now"}),
    )
    .await
    .expect(200);
    let page = ada.get(&format!("/dashboard/members/{kate}")).await;
    assert_eq!(
        text_of(&page, "dd.paywall").as_deref(),
        Some("Closed: no valid subscription")
    );
    ada.get(&format!("/dashboard/members/{}", uuid::Uuid::now_v7()))
        .await
        .expect(404);
    ada.get("/dashboard/members/not-an-id").await.expect(404);
}
