//! Access records with `cancelAt` move to `canceled` when it comes, by the scheduler, with
//! `subscription.canceled`, once: also when several scheduler passes (and, on PostgreSQL,
//! two nodes) run at the same moment.

use jobboard_store::events::list_for_org;

use jobboard::{config::Config, server::App};
use serde_json::json;

use crate::{backends, common::*};

backends!(access_is_canceled_when_cancel_at_comes_once);

async fn access_is_canceled_when_cancel_at_comes_once(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    t.post(
        "/plans",
        json!({"name": "Pro", "price": 9.5, "currency": "EUR", "interval": "month", "jobsIncluded": 1}),
    )
    .await
    .expect(201);
    let past = (chrono::Utc::now() - chrono::Duration::minutes(5)).to_rfc3339();
    let future = (chrono::Utc::now() + chrono::Duration::days(30)).to_rfc3339();
    for (email, status, cancel_at) in [
        ("due@example.com", "active", Some(past.as_str())),
        ("trial@example.com", "trialing", Some(past.as_str())),
        ("later@example.com", "active", Some(future.as_str())),
        ("never@example.com", "active", None),
        ("gone@example.com", "expired", Some(past.as_str())),
    ] {
        let mut access = json!({"planName": "Pro", "status": status});
        if let Some(at) = cancel_at {
            access["cancelAt"] = json!(at);
        }
        let r = t
            .post(
                "/members/sync",
                json!({"email": email, "name": "M", "access": access}),
            )
            .await;
        assert!(r.status.is_success(), "{}", r.text);
    }
    let canceled_events = || async {
        list_for_org(t.db(), t.org_id)
            .await
            .unwrap()
            .into_iter()
            .filter(|e| e.event_type == "subscription.canceled")
            .count()
    };
    assert_eq!(canceled_events().await, 0);

    // Several passes at once; on PostgreSQL also a second node's.
    let second = match b {
        Backend::Postgres => {
            let mut config = Config::with_database(&t.database_url);
            config.scheduler = false;
            config.worker = false;
            Some(App::start(config).await.unwrap())
        }
        Backend::Sqlite => None,
    };
    let other = second.clone().unwrap_or_else(|| t.app.clone());
    let (a, b2, c, d) = tokio::join!(
        jobboard::scheduler::tick(&t.app),
        jobboard::scheduler::tick(&other),
        jobboard::scheduler::tick(&t.app),
        jobboard::scheduler::tick(&other),
    );
    assert_eq!(a + b2 + c + d, 2, "two records moved, once each");
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 0, "idempotent");
    assert_eq!(canceled_events().await, 2);

    for (email, status, open) in [
        ("due@example.com", "canceled", false),
        ("trial@example.com", "canceled", false),
        ("later@example.com", "active", true),
        ("never@example.com", "active", true),
        ("gone@example.com", "expired", false),
    ] {
        let r = t.get(&format!("/members/{email}")).await;
        r.expect(200);
        let access = &r.body["data"]["subscriptions"][0];
        assert_eq!(access["status"], status, "{email}");
        assert_eq!(
            r.body["data"]["hasValidPaywallSubscription"], open,
            "{email}"
        );
        if status == "canceled" {
            // Canceled at the moment it was due.
            assert_eq!(access["canceledAt"], access["cancelAt"], "{email}");
        }
    }
}
