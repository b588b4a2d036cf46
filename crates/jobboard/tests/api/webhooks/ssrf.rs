//! Server-side request forgery: private targets refused at registration (with the other bad
//! fields) and at connect time, and a CIDR allow-list letting a range through.

use std::time::Duration;

use jobboard::delivery::webhooks::drain;
use jobboard_domain::webhooks::{self as store, EventName, TargetType};
use serde_json::{Value, json};

use super::*;
use crate::{backends, webhook_receiver::Receiver};

backends!(
    ssrf_refused_at_registration,
    a_refused_target_is_listed_with_the_other_bad_fields,
    ssrf_refused_at_connect_time,
    cidr_allow_list_lets_a_range_through,
);

async fn ssrf_refused_at_registration(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.webhooks.allow_private_targets = false;
    })
    .await;
    for url in [
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://10.0.0.1/hook",
        "http://172.16.5.4/hook",
        "http://192.168.1.1/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://0.0.0.0/hook",
        "http://224.0.0.1/hook",
        "http://[fe80::1]/hook",
        "http://[fd00::1]/hook",
        "http://2130706433/hook",
    ] {
        let r = t
            .post(
                "/webhooks",
                json!({"event": "*", "target_type": "webhook", "target_url": url}),
            )
            .await;
        r.expect_error(422, "validation_failed");
        assert_eq!(r.error_fields(), ["target_url"], "{url}");
    }
    // A public address literal is accepted (no connection is made at registration).
    let r = t
        .post(
            "/webhooks",
            json!({"event": "*", "target_type": "webhook", "target_url": "http://93.184.216.34/hook"}),
        )
        .await;
    r.expect(201);
    // PATCH checks the new URL too.
    let id = r.body["data"]["id"].as_str().unwrap();
    let r = t
        .patch(
            &format!("/webhooks/{id}"),
            json!({"target_url": "http://127.0.0.1/x"}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["target_url"]);
}

async fn a_refused_target_is_listed_with_the_other_bad_fields(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.webhooks.allow_private_targets = false;
    })
    .await;
    let codes = |r: &Resp| -> Vec<String> {
        r.body["error"]["details"]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{}:{}",
                    f["field"].as_str().unwrap(),
                    f["code"].as_str().unwrap()
                )
            })
            .collect()
    };
    let r = t
        .post(
            "/webhooks",
            json!({"event": "job.nope", "target_type": "webhook", "target_url": "http://127.0.0.1/x", "secret": "short", "extra": 1}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        codes(&r),
        [
            "event:invalid_value",
            "target_url:forbidden_target",
            "secret:too_short",
            "extra:unknown_field"
        ]
    );
    let r = t
        .post(
            "/webhooks",
            json!({"event": "*", "target_type": "webhook", "target_url": "http://93.184.216.34/hook"}),
        )
        .await;
    r.expect(201);
    let id = r.body["data"]["id"].as_str().unwrap();
    let r = t
        .patch(
            &format!("/webhooks/{id}"),
            json!({"secret": "short", "is_enabled": "yes", "target_url": "http://10.0.0.1/x"}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(
        codes(&r),
        [
            "target_url:forbidden_target",
            "is_enabled:invalid_type",
            "secret:too_short"
        ]
    );
    // Nothing was changed.
    let r = t.get(&format!("/webhooks/{id}")).await;
    assert_eq!(r.body["data"]["target_url"], "http://93.184.216.34/hook");
}

async fn ssrf_refused_at_connect_time(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.webhooks.allow_private_targets = false;
        c.webhooks.retry_schedule = vec![Duration::from_secs(1)];
    })
    .await;
    let rx = Receiver::start().await;
    // Stored as if the names had resolved to public addresses at registration (DNS
    // rebinding): at connect time they resolve to loopback and are refused.
    let port = rx.port();
    for url in [
        format!("http://localhost:{port}/rebind"),
        format!("http://127.0.0.1:{port}/literal"),
        format!("http://[::ffff:127.0.0.1]:{port}/mapped"),
    ] {
        store::upsert(
            t.db(),
            t.org_id,
            EventName::All,
            TargetType::Webhook,
            &url,
            None,
        )
        .await
        .unwrap();
    }
    emit(&t, "job.created", json!({})).await;
    assert_eq!(drain(&t.app).await, 3);
    assert!(rx.all().is_empty(), "no request reached the receiver");
    for s in store::list(t.db(), t.org_id).await.unwrap() {
        let ds = deliveries(&t, &s.id.to_string()).await;
        let log = ds[0]["attempt_log"].as_array().unwrap();
        assert_eq!(log[0]["status_code"], Value::Null);
        let err = log[0]["error"].as_str().unwrap();
        assert!(err.contains("refused"), "{}: {err}", s.target_url);
    }
}

async fn cidr_allow_list_lets_a_range_through(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.webhooks.allow_private_targets = false;
        c.webhooks.allowed_cidrs = vec!["127.0.0.0/8".into()];
    })
    .await;
    let rx = Receiver::start().await;
    subscribe(&t, "*", "webhook", &rx.url("/allowed"), None).await;
    t.post(
        "/webhooks",
        json!({"event": "*", "target_type": "webhook", "target_url": "http://10.0.0.1/x"}),
    )
    .await
    .expect_error(422, "validation_failed");
    emit(&t, "job.created", json!({})).await;
    drain(&t.app).await;
    assert_eq!(rx.hits("/allowed").len(), 1);
}
