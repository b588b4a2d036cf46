//! The webhooks pages: subscriptions managed from the dashboard, with their delivery log.

use super::*;
use crate::{backends, webhook_receiver::Receiver};

backends!(webhooks_are_managed_with_their_delivery_log);

async fn webhooks_are_managed_with_their_delivery_log(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.webhooks.retry_schedule = Vec::new();
    })
    .await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let rx = Receiver::start().await;
    rx.status("/hook", 500);
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let page = ada.get("/dashboard/webhooks").await;
    page.expect(200);
    assert!(page.text.contains("No subscriptions yet."));
    let token = csrf_of(&page);
    // The API's validation, beside the fields; nothing stored.
    let r = ada
        .post(
            "/dashboard/webhooks",
            &[
                ("event", "job.approved"),
                ("target_type", "webhook"),
                ("target_url", "ftp://example.com/x"),
                ("secret", "short"),
                ("csrf", &token),
            ],
        )
        .await;
    r.expect(422);
    let doc = r.html();
    assert!(doc.select(&sel("#f-target_url-error")).next().is_some());
    assert!(doc.select(&sel("#f-secret-error")).next().is_some());
    assert_eq!(
        doc.select(&sel("#f-secret"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some(""),
        "a secret is never shown back"
    );
    assert_eq!(t.get("/webhooks").await.body["meta"]["total"], 0);
    // Created: the API lists it.
    let r = ada
        .post(
            "/dashboard/webhooks",
            &[
                ("event", "*"),
                ("target_type", "webhook"),
                ("target_url", &rx.url("/hook")),
                ("secret", "a-secret-of-sixteen-or-more"),
                ("csrf", &token),
            ],
        )
        .await;
    let to = redirect(&r);
    let id = to
        .strip_prefix("/dashboard/webhooks/")
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_string();
    let api = t.get(&format!("/webhooks/{id}")).await;
    api.expect(200);
    assert_eq!(api.body["data"]["event"], "*");
    // A test ping fails at the receiver (500): its attempt is in the log.
    let r = ada
        .post(
            &format!("/dashboard/webhooks/{id}/test"),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(
        redirect(&r),
        format!("/dashboard/webhooks/{id}?notice=ping_queued")
    );
    assert!(
        rx.wait_until(std::time::Duration::from_secs(20), |h| !h.is_empty())
            .await
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let log = loop {
        let page = ada.get(&format!("/dashboard/webhooks/{id}")).await;
        if page.text.contains("status-failed") || std::time::Instant::now() > deadline {
            break page;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(
        text_of(&log, ".delivery h3")
            .as_deref()
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")),
        Some("ping failed".to_string())
    );
    assert_eq!(
        text_of(&log, "table.attempts tbody td:nth-child(3)").as_deref(),
        Some("500")
    );
    assert!(
        text_of(&log, "table.attempts tbody td:nth-child(4)")
            .unwrap()
            .contains("500")
    );
    // Retry: it succeeds once the receiver recovers.
    rx.status("/hook", 200);
    let delivery = t.get(&format!("/webhooks/{id}/deliveries")).await.body["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = ada
        .post(
            &format!("/dashboard/webhooks/{id}/deliveries/{delivery}/retry"),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(
        redirect(&r),
        format!("/dashboard/webhooks/{id}?notice=retry_queued")
    );
    assert!(
        rx.wait_until(std::time::Duration::from_secs(20), |h| h.len() >= 2)
            .await
    );
    // Disable, then enable: as PATCH is_enabled.
    ada.post(
        &format!("/dashboard/webhooks/{id}/enabled"),
        &[("enabled", "false"), ("csrf", &token)],
    )
    .await;
    assert_eq!(
        t.get(&format!("/webhooks/{id}")).await.body["data"]["is_enabled"],
        false
    );
    let r = ada
        .post(
            &format!("/dashboard/webhooks/{id}/test"),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(
        redirect(&r),
        format!("/dashboard/webhooks/{id}?notice=webhook_disabled_first")
    );
    ada.post(
        &format!("/dashboard/webhooks/{id}/enabled"),
        &[("enabled", "true"), ("csrf", &token)],
    )
    .await;
    assert_eq!(
        t.get(&format!("/webhooks/{id}")).await.body["data"]["is_enabled"],
        true
    );
    // Delete.
    let r = ada
        .post(
            &format!("/dashboard/webhooks/{id}/delete"),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(redirect(&r), "/dashboard/webhooks?notice=webhook_deleted");
    t.get(&format!("/webhooks/{id}")).await.expect(404);
}
