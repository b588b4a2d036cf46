//! Fan-out and delivery: events matched to subscriptions and signed, every event type end
//! to end, and the chat bodies of every event.

use jobboard::delivery::webhooks::drain;
use jobboard_store::{Ts, events};
use reqwest::Method;
use serde_json::json;

use super::*;
use crate::{backends, webhook_receiver::Receiver};

backends!(
    fan_out_matches_events_and_signs,
    every_event_type_end_to_end,
    chat_bodies_for_every_event,
);

async fn fan_out_matches_events_and_signs(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    for p in ["/all", "/created"] {
        rx.secret(p, SECRET);
    }
    subscribe(&t, "*", "webhook", &rx.url("/all"), Some(SECRET)).await;
    subscribe(
        &t,
        "job.created",
        "webhook",
        &rx.url("/created"),
        Some(SECRET),
    )
    .await;
    subscribe(&t, "user.created", "webhook", &rx.url("/users"), None).await;
    let off = subscribe(&t, "*", "webhook", &rx.url("/off"), None).await;
    t.patch(&format!("/webhooks/{off}"), json!({"is_enabled": false}))
        .await
        .expect(200);
    // Another organization's subscription never sees these events.
    let (_, stranger) = t.new_org("Other", "*", 100, 100).await;
    t.req(Method::POST, "/webhooks")
        .key(&stranger)
        .json(json!({"event": "*", "target_type": "webhook", "target_url": rx.url("/stranger")}))
        .send()
        .await
        .expect(201);

    emit(&t, "job.created", samples()[0].1.clone()).await;
    emit(&t, "user.created", samples()[8].1.clone()).await;
    assert_eq!(events::pending_count(t.db()).await.unwrap(), 2);
    assert_eq!(drain(&t.app).await, 4);
    assert_eq!(events::pending_count(t.db()).await.unwrap(), 0);

    let all = rx.hits("/all");
    assert_eq!(all.len(), 2);
    let created = rx.hits("/created");
    assert_eq!(created.len(), 1);
    assert_eq!(rx.hits("/users").len(), 1);
    assert!(rx.hits("/off").is_empty());
    assert!(rx.hits("/stranger").is_empty());

    let h = &created[0];
    assert_eq!(h.signature_valid, Some(true));
    let sig = h.header("x-service-signature").unwrap();
    assert_eq!(sig.len(), 64);
    assert!(
        sig.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    );
    assert_eq!(h.header("x-service-event"), Some("job.created"));
    assert_eq!(h.header("content-type"), Some("application/json"));
    assert!(
        h.header("user-agent")
            .unwrap()
            .starts_with("jobboard-webhooks/")
    );
    assert!(uuid::Uuid::parse_str(h.header("x-service-delivery").unwrap()).is_ok());
    let body = h.json();
    let mut keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    assert_eq!(keys, ["data", "event", "organization_id", "timestamp"]);
    assert_eq!(body["event"], "job.created");
    assert_eq!(body["organization_id"], t.org_id.0);
    assert_eq!(body["data"], samples()[0].1);
    assert!(Ts::parse(body["timestamp"].as_str().unwrap()).is_some());
    assert!(body["timestamp"].as_str().unwrap().ends_with('Z'));
    // No secret: no signature.
    assert!(rx.hits("/users")[0].header("x-service-signature").is_none());
    assert!(all.iter().all(|h| h.signature_valid == Some(true)));
    // A tampered body would not verify.
    assert!(!crate::webhook_receiver::verify(SECRET, b"{}", sig));
    // Nothing more is due.
    assert_eq!(drain(&t.app).await, 0);
}

async fn every_event_type_end_to_end(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    rx.secret("/all", SECRET);
    subscribe(&t, "*", "webhook", &rx.url("/all"), Some(SECRET)).await;
    for (name, data) in samples() {
        let path = format!("/{name}");
        rx.secret(&path, SECRET);
        subscribe(&t, name, "webhook", &rx.url(&path), Some(SECRET)).await;
        emit(&t, name, data).await;
    }
    drain(&t.app).await;
    assert_eq!(rx.hits("/all").len(), samples().len());
    for (name, data) in samples() {
        let hits = rx.hits(&format!("/{name}"));
        assert_eq!(hits.len(), 1, "{name}");
        assert_eq!(hits[0].signature_valid, Some(true));
        assert_eq!(hits[0].header("x-service-event"), Some(name));
        assert_eq!(hits[0].json()["event"], name);
        assert_eq!(hits[0].json()["data"], data);
    }
}

async fn chat_bodies_for_every_event(b: Backend) {
    let t = spawn_no_worker(b).await;
    let rx = Receiver::start().await;
    subscribe(&t, "*", "chat_a", &rx.url("/a"), Some(SECRET)).await;
    subscribe(&t, "*", "chat_b", &rx.url("/b"), None).await;
    let mut all = samples();
    all.push((
        "job.updated",
        json!({"job_id": "j", "title": "T".repeat(5000), "company_name": "<b>&</b>", "status": "active", "location": "x".repeat(5000), "changed": ["title"]}),
    ));
    for (name, data) in &all {
        emit(&t, name, data.clone()).await;
    }
    drain(&t.app).await;
    let a = rx.hits("/a");
    let bb = rx.hits("/b");
    assert_eq!(a.len(), all.len());
    assert_eq!(bb.len(), all.len());
    for h in a.iter().chain(bb.iter()) {
        assert!(
            h.header("x-service-signature").is_none(),
            "chat targets are not signed"
        );
        assert!(h.header("x-service-event").is_some());
    }
    for h in &a {
        let body = h.json();
        let embeds = body["embeds"].as_array().unwrap();
        assert_eq!(embeds.len(), 1);
        let e = &embeds[0];
        let title = e["title"].as_str().unwrap();
        assert!(!title.is_empty() && title.chars().count() <= 256);
        assert!(e["description"].as_str().unwrap().chars().count() <= 4096);
        let fields = e["fields"].as_array().unwrap();
        assert!(!fields.is_empty() && fields.len() <= 25);
        for f in fields {
            assert!(f["name"].as_str().unwrap().chars().count() <= 256);
            let v = f["value"].as_str().unwrap();
            assert!(!v.is_empty() && v.chars().count() <= 1024);
        }
        assert!(Ts::parse(e["timestamp"].as_str().unwrap()).is_some());
    }
    let created = a
        .iter()
        .find(|h| h.header("x-service-event") == Some("job.created"))
        .unwrap()
        .json();
    assert!(
        created["embeds"][0]["title"]
            .as_str()
            .unwrap()
            .contains("Rust engineer")
    );
    for h in &bb {
        let body = h.json();
        let text = body["text"].as_str().unwrap();
        assert!(!text.is_empty() && !text.contains('<') && !text.contains('>'));
        let blocks = body["blocks"].as_array().unwrap();
        let types: Vec<&str> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["header", "section", "context"]);
        assert_eq!(blocks[1]["text"]["type"], "mrkdwn");
        let section = blocks[1]["text"]["text"].as_str().unwrap();
        assert!(section.chars().count() <= 3000);
        assert!(blocks[0]["text"]["text"].as_str().unwrap().chars().count() <= 150);
        // Only our own link markup may carry angle brackets.
        let stripped: String = section
            .split('\n')
            .filter(|l| !(l.starts_with('<') && l.ends_with('>')))
            .collect();
        assert!(
            !stripped.contains('<') && !stripped.contains('>'),
            "{section}"
        );
    }
    let app = bb
        .iter()
        .find(|h| h.header("x-service-event") == Some("application.received"))
        .unwrap()
        .json();
    assert!(
        app["blocks"][1]["text"]["text"]
            .as_str()
            .unwrap()
            .contains("Ada &lt;script&gt;")
    );
    let long = bb
        .iter()
        .filter(|h| h.header("x-service-event") == Some("job.updated"))
        .map(|h| h.json())
        .find(|v| {
            v["blocks"][1]["text"]["text"]
                .as_str()
                .unwrap()
                .contains("&lt;b&gt;&amp;")
        })
        .expect("escaped company name");
    assert!(long["text"].as_str().unwrap().chars().count() <= 3000);
}
