//! What the public board's forms refuse and limit (found by an outside probe): address
//! variants of one mailbox, confirmation mails per recipient and day across forms, boards
//! and nodes, an alert link opened on another board, and apply links that a browser would
//! read otherwise than they read.

use std::time::Duration;

use jobboard_store::Ts;

use jobboard_store::dispatch;

use jobboard_domain::{Input, alerts, orgs};

use jobboard::{config::Config, delivery::mail::drain};
use reqwest::Method;
use serde_json::json;

use crate::{
    backends,
    board::{form_token, post_form, sel},
    common::*,
    mail::mail_to,
    smtp_sink::SmtpSink,
};

backends!(
    address_variants_are_refused_and_one_mailbox_is_limited_once,
    confirmations_are_capped_per_recipient_and_day,
    an_alert_link_on_another_board_changes_nothing,
    deceptive_apply_links_are_refused_and_the_host_is_shown,
);

async fn spawn(b: Backend, sink: &SmtpSink) -> TestApp {
    let mailing = mail_to(sink, &[60]);
    TestApp::spawn_with(b, move |c: &mut Config| {
        mailing(c);
        c.form_limit = 100;
    })
    .await
}

/// Subscribes `email` through the form of `/` (on `host` when given).
async fn subscribe(t: &TestApp, email: &str, host: Option<&str>) -> Resp {
    let mut rb = t.page_req(Method::GET, "/");
    if let Some(h) = host {
        rb = rb.header("host", h);
    }
    let page = Resp::read(rb.send().await.unwrap()).await;
    page.expect(200);
    let doc = page.html();
    let value = |name: &str| {
        doc.select(&sel(&format!("form.alert-form input[name={name}]")))
            .next()
            .unwrap()
            .value()
            .attr("value")
            .unwrap()
            .to_string()
    };
    let (token, query) = (value("_token"), value("query"));
    let mut headers = Vec::new();
    if let Some(h) = host {
        headers.push(("host", h));
    }
    post_form(
        t,
        "/alerts",
        &[
            ("_token", token.as_str()),
            ("query", query.as_str()),
            ("email", email),
            ("frequency", "daily"),
            ("reference_code", ""),
        ],
        &headers,
    )
    .await
}

async fn address_variants_are_refused_and_one_mailbox_is_limited_once(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    for variant in [
        "n0 <victim@example.com>",
        "\"victim\"@example.com",
        "<victim@example.com>",
        "victim@example.com (hi)",
    ] {
        let r = subscribe(&t, variant, None).await;
        r.expect(422);
        let doc = r.html();
        let message: String = doc
            .select(&sel("#e-email"))
            .next()
            .unwrap_or_else(|| panic!("{variant}: {}", r.text))
            .text()
            .collect();
        assert!(!message.contains("Invalid input"), "{message}");
    }
    assert_eq!(drain(&t.app).await, 0, "no mail for a variant");
    // Case variants are one mailbox: the per-address limit (3 a minute) counts them
    // together.
    for email in [
        "victim@example.com",
        "VICTIM@example.com",
        "Victim@Example.com",
    ] {
        subscribe(&t, email, None).await.expect(303);
    }
    subscribe(&t, "victim@EXAMPLE.com", None).await.expect(429);
    assert_eq!(drain(&t.app).await, 3);
}

fn later(secs: u64) -> Ts {
    Ts::now().later_by(Duration::from_secs(secs))
}

async fn confirmations_are_capped_per_recipient_and_day(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    let other = orgs::create(t.db(), "Other board").await.unwrap().id;
    // Twelve subscriptions with other filters, on two boards, in two spellings.
    for i in 0..12 {
        let org = if i % 2 == 0 { t.org_id } else { other };
        let email = if i % 3 == 0 {
            "Victim@example.com"
        } else {
            "victim@example.com"
        };
        let mut body = serde_json::Map::new();
        body.insert("email".into(), json!(email));
        body.insert("query".into(), json!(format!("search=word{i}")));
        alerts::subscribe(t.db(), org, Input::new(body), Ts::now())
            .await
            .unwrap();
    }
    assert_eq!(drain(&t.app).await, 10);
    assert_eq!(sink.received().len(), 10);
    // Another recipient is not held up; a day later the recipient may get mail again.
    let mut body = serde_json::Map::new();
    body.insert("email".into(), json!("ada@example.com"));
    alerts::subscribe(t.db(), t.org_id, Input::new(body.clone()), Ts::now())
        .await
        .unwrap();
    assert_eq!(drain(&t.app).await, 1);
    let mut body = serde_json::Map::new();
    body.insert("email".into(), json!("victim@example.com"));
    body.insert("query".into(), json!("search=tomorrow"));
    alerts::subscribe(t.db(), t.org_id, Input::new(body), later(86_401))
        .await
        .unwrap();
    let queued: i64 = dispatch!(t.db().reader(), p => {
        sqlx::query_scalar("SELECT COUNT(*) FROM mail_outbox WHERE to_identity = 'victim@example.com'")
            .fetch_one(p).await.unwrap()
    });
    assert_eq!(queued, 11, "the cap counts the last 24 hours");
}

async fn an_alert_link_on_another_board_changes_nothing(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    orgs::create_with(t.db(), "Other board", Some("other.example"))
        .await
        .unwrap();
    subscribe(&t, "ada@example.com", None).await.expect(303);
    drain(&t.app).await;
    let text = sink.received()[0]
        .parsed()
        .body_text(0)
        .unwrap()
        .to_string();
    let at = text.find("/alerts/confirm/").unwrap();
    let link: String = text[at..]
        .split(|c: char| c.is_whitespace())
        .next()
        .unwrap()
        .to_string();
    let elsewhere = Resp::read(
        t.page_req(Method::GET, &link)
            .header("host", "other.example")
            .send()
            .await
            .unwrap(),
    )
    .await;
    elsewhere.expect(404);
    let listed = t.get("/alerts").await;
    assert_eq!(listed.body["data"][0]["status"], "pending");
    // The stop link too.
    let stop = link.replace("/alerts/confirm/", "/alerts/unsubscribe/");
    let r = t
        .client
        .post(format!("{}{stop}", t.base))
        .header("host", "other.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(t.get("/alerts").await.body["data"][0]["status"], "pending");
    // On its own board it works.
    t.page(&link).await.expect(200);
    assert_eq!(t.get("/alerts").await.body["data"][0]["status"], "active");
}

async fn deceptive_apply_links_are_refused_and_the_host_is_shown(b: Backend) {
    let t = TestApp::spawn(b).await;
    for bad in [
        "https://evil.example\\@good.example/",
        "https://good.example@evil.example/",
        "https://user:secret@evil.example/apply",
    ] {
        let r = t
            .post(
                "/jobs",
                json!({"title": "Pilot", "company_name": "Acme", "description": "x",
                       "how_to_apply_method": "website", "how_to_apply": bad}),
            )
            .await;
        r.expect_error(422, "validation_failed");
        assert_eq!(
            r.body["error"]["details"]["fields"][0]["field"], "how_to_apply",
            "{bad}"
        );
        let r = t
            .post(
                "/jobs",
                json!({"title": "Pilot", "company_name": "Acme", "description": "x",
                       "company_website": bad}),
            )
            .await;
        r.expect_error(422, "validation_failed");
        // The board's form refuses it beside the field.
        let token = form_token(&t.page("/post-a-job").await);
        let r = post_form(
            &t,
            "/post-a-job",
            &[
                ("_token", token.as_str()),
                ("title", "Pilot"),
                ("company_name", "Acme"),
                ("description", "Fly."),
                ("how_to_apply_method", "website"),
                ("how_to_apply", bad),
                ("reference_code", ""),
            ],
            &[],
        )
        .await;
        r.expect(422);
        assert!(
            r.html().select(&sel("#e-how_to_apply")).next().is_some(),
            "{bad}"
        );
    }
    assert_eq!(
        t.get("/jobs?status=all").await.body["meta"]["pagination"]["total_items"],
        0
    );
    // A job page says which host its apply button opens.
    let r = t
        .post(
            "/jobs",
            json!({"title": "Pilot", "company_name": "Acme", "description": "x", "status": "active",
                   "how_to_apply_method": "website", "how_to_apply": "https://Jobs.Acme.example/apply?id=7"}),
        )
        .await;
    r.expect(201);
    let slug = r.body["data"]["slug"].as_str().unwrap();
    let page = t.page(&format!("/jobs/{slug}")).await;
    let doc = page.html();
    let shown: String = doc
        .select(&sel(".apply p.muted"))
        .next()
        .unwrap()
        .text()
        .collect();
    assert_eq!(shown, "Opens jobs.acme.example");
}
