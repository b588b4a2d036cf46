//! Mail to employers through a real SMTP server on 127.0.0.1: to a job's contact address
//! when the job goes live (posted active, or approved), a reminder before it expires
//! (once per expiry, also with two nodes), and on each application; each switchable per
//! organization, none without a contact address or without an SMTP server.

use std::time::Duration;

use jobboard::{config::Config, delivery::mail::drain, server::App};
use jobboard_domain::mail::store;
use serde_json::json;

use crate::{
    backends,
    common::*,
    mail::with_smtp,
    smtp_sink::{Received, SmtpSink},
};

backends!(
    a_job_going_live_is_mailed_once,
    jobs_created_together_are_each_mailed_once,
    each_application_is_mailed,
    expiry_reminders_go_once_per_expiry,
    each_mail_can_be_switched_off,
    nothing_is_queued_without_an_smtp_server,
);

/// Links name the listen address when no `public_url` is set (tests leave it unset: it
/// is a setting of the whole process).
const PUBLIC: &str = "http://127.0.0.1:0";

async fn spawn(b: Backend, sink: &SmtpSink) -> TestApp {
    let url = sink.url();
    TestApp::spawn_with(b, move |c: &mut Config| {
        c.worker = false;
        c.scheduler = false;
        c.mail = with_smtp(&c.mail, &url, vec![Duration::from_secs(60)]);
    })
    .await
}

fn text_of(m: &Received) -> String {
    m.parsed().body_text(0).unwrap_or_default().to_string()
}

fn subjects(sink: &SmtpSink) -> Vec<String> {
    sink.received()
        .iter()
        .map(|m| m.parsed().subject().unwrap_or_default().to_string())
        .collect()
}

async fn job(t: &TestApp, body: serde_json::Value) -> serde_json::Value {
    let mut body = body;
    let o = body.as_object_mut().unwrap();
    o.entry("description").or_insert(json!("<p>Work.</p>"));
    o.entry("company_name").or_insert(json!("Acme"));
    let r = t.post("/jobs", body).await;
    r.expect(201);
    r.body["data"].clone()
}

async fn a_job_going_live_is_mailed_once(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    // Posted active with a contact address: mailed.
    let live = job(
        &t,
        json!({"title": "Baker", "status": "active", "contact_email": "hr@acme.example"}),
    )
    .await;
    // Pending: nothing until approved; without a contact address: never.
    let pending = job(
        &t,
        json!({"title": "Cook", "contact_email": "chef@acme.example"}),
    )
    .await;
    job(&t, json!({"title": "Nobody to tell", "status": "active"})).await;
    assert_eq!(drain(&t.app).await, 1);
    let got = sink.received();
    assert_eq!(got[0].to, ["hr@acme.example"]);
    assert_eq!(subjects(&sink), ["Your job is live: Baker"]);
    let slug = live["slug"].as_str().unwrap();
    let text = text_of(&got[0]);
    assert!(text.contains(&format!("{PUBLIC}/jobs/{slug}")), "{text}");
    assert!(
        got[0]
            .parsed()
            .body_html(0)
            .unwrap()
            .contains(&format!("href=\"{PUBLIC}/jobs/{slug}\""))
    );
    // Approval mails once; a later edit of the live job does not.
    let id = pending["id"].as_str().unwrap();
    t.patch(&format!("/jobs/{id}"), json!({"status": "active"}))
        .await
        .expect(200);
    t.patch(&format!("/jobs/{id}"), json!({"title": "Head cook"}))
        .await
        .expect(200);
    assert_eq!(drain(&t.app).await, 1);
    assert_eq!(subjects(&sink)[1], "Your job is live: Cook");
    assert_eq!(sink.received()[1].to, ["chef@acme.example"]);
    // A board with its own domain links there.
    jobboard_domain::orgs::update(
        t.db(),
        t.org_id,
        jobboard_domain::Input::new(
            json!({"domain": "jobs.acme.example"})
                .as_object()
                .unwrap()
                .clone(),
        ),
    )
    .await
    .unwrap();
    let third = job(
        &t,
        json!({"title": "Driver", "status": "active", "contact_email": "hr@acme.example"}),
    )
    .await;
    drain(&t.app).await;
    let text = text_of(&sink.received()[2]);
    assert!(
        text.contains(&format!(
            "https://jobs.acme.example/jobs/{}",
            third["slug"].as_str().unwrap()
        )),
        "{text}"
    );
    // The mail went with its cause: a job refused by validation queues nothing.
    t.post(
        "/jobs",
        json!({"title": "", "status": "active", "contact_email": "hr@acme.example"}),
    )
    .await
    .expect_error(422, "validation_failed");
    assert_eq!(drain(&t.app).await, 0);
    assert_eq!(store::list(t.db(), t.org_id, 100).await.unwrap().len(), 3);
}

async fn jobs_created_together_are_each_mailed_once(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    // 12 creations at once (on SQLite committed in batches): eight live with a contact
    // address, two live without one, two pending.
    let bodies: Vec<serde_json::Value> = (0..12)
        .map(|i| {
            let mut body = json!({"title": format!("Role {i}"), "company_name": "Acme", "description": "<p>Work.</p>", "status": "active", "contact_email": format!("hr{i}@acme.example")});
            if i >= 8 {
                body["status"] = json!("pending");
            }
            if i >= 10 {
                body["status"] = json!("active");
                body.as_object_mut().unwrap().remove("contact_email");
            }
            body
        })
        .collect();
    let results =
        crate::members::futures_join_all(bodies.iter().map(|b| t.post("/jobs", b.clone()))).await;
    for r in &results {
        r.expect(201);
    }
    assert_eq!(drain(&t.app).await, 8);
    let mut got: Vec<(String, String)> = sink
        .received()
        .iter()
        .map(|m| {
            (
                m.to[0].clone(),
                m.parsed().subject().unwrap_or_default().to_string(),
            )
        })
        .collect();
    got.sort();
    let mut expected: Vec<(String, String)> = (0..8)
        .map(|i| {
            (
                format!("hr{i}@acme.example"),
                format!("Your job is live: Role {i}"),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(got, expected);
}

async fn each_application_is_mailed(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    let j = job(
        &t,
        json!({"title": "Pilot", "status": "active", "contact_email": "ops@air.example"}),
    )
    .await;
    let id = j["id"].as_str().unwrap();
    drain(&t.app).await;
    for (name, email) in [
        ("Amelia Earhart", "amelia@example.com"),
        ("Bessie <Coleman>", "bessie@example.com"),
    ] {
        t.post(
            &format!("/jobs/{id}/applications"),
            json!({"name": name, "email": email, "resume_url": "https://cv.example/x", "cover_letter": "Secret letter"}),
        )
        .await
        .expect(201);
    }
    assert_eq!(drain(&t.app).await, 2);
    let mut got = sink.received();
    got.remove(0);
    got.sort_by_key(|m| m.parsed().subject().unwrap_or_default().to_string());
    let mut subjects = subjects(&sink)[1..].to_vec();
    subjects.sort();
    assert_eq!(
        subjects,
        [
            "New application for Pilot from Amelia Earhart",
            "New application for Pilot from Bessie <Coleman>"
        ]
    );
    let text = text_of(&got[0]);
    assert!(text.contains("Email: amelia@example.com"), "{text}");
    assert!(
        text.contains(&format!("{PUBLIC}/dashboard/applications?job={id}")),
        "{text}"
    );
    assert!(
        !text.contains("Secret letter"),
        "no cover letter in the mail"
    );
    let html = got[1].parsed().body_html(0).unwrap().to_string();
    assert!(html.contains("Bessie &lt;Coleman&gt;"), "escaped: {html}");
    assert_eq!(got[0].parsed().attachment_count(), 0);
}

async fn expiry_reminders_go_once_per_expiry(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    let soon = (chrono::Utc::now() + chrono::Duration::days(2)).to_rfc3339();
    let later = (chrono::Utc::now() + chrono::Duration::days(20)).to_rfc3339();
    let j = job(&t, json!({"title": "Welder", "status": "active", "contact_email": "hr@acme.example", "expires_at": soon})).await;
    job(&t, json!({"title": "Far off", "status": "active", "contact_email": "hr@acme.example", "expires_at": later})).await;
    job(&t, json!({"title": "Draft", "status": "draft", "contact_email": "hr@acme.example", "expires_at": soon})).await;
    drain(&t.app).await;
    let before = sink.received().len();
    // Several passes at once (on PostgreSQL also a second node's): one reminder.
    let second = match b {
        Backend::Postgres => {
            // A second node of the same installation: the same settings (its links name
            // the same public address, whichever node queues the mail).
            let mut config = Config::with_database(&t.database_url);
            config.scheduler = false;
            config.worker = false;
            config.mail = t.app.config.mail.clone();
            config.public_url = t.app.config.public_url.clone();
            Some(App::start(config).await.unwrap())
        }
        Backend::Sqlite => None,
    };
    let other = second.clone().unwrap_or_else(|| t.app.clone());
    let now = jobboard_store::Ts::now();
    let (a, b2, c) = tokio::join!(
        jobboard_domain::jobs::remind_expiring(t.db(), now),
        jobboard_domain::jobs::remind_expiring(&other.db, now),
        jobboard_domain::jobs::remind_expiring(t.db(), now),
    );
    assert_eq!(a.unwrap() + b2.unwrap() + c.unwrap(), 1);
    assert_eq!(
        jobboard::scheduler::tick(&t.app).await,
        0,
        "nothing more to do"
    );
    assert_eq!(drain(&t.app).await, 1);
    let got = sink.received();
    assert_eq!(got.len(), before + 1);
    assert_eq!(
        subjects(&sink).last().unwrap(),
        "Your job expires soon: Welder"
    );
    let id = j["id"].as_str().unwrap();
    assert!(text_of(got.last().unwrap()).contains(&format!("{PUBLIC}/dashboard/jobs/{id}")));
    // A moved expiry (still within the window) gets a reminder of its own.
    let moved = (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339();
    t.patch(&format!("/jobs/{id}"), json!({"expires_at": moved}))
        .await
        .expect(200);
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 1);
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 0);
    assert_eq!(drain(&t.app).await, 1);
}

async fn each_mail_can_be_switched_off(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink).await;
    jobboard_domain::orgs::update(
        t.db(),
        t.org_id,
        jobboard_domain::Input::new(
            json!({"mail_job_live": false, "mail_expiry_days": 0, "mail_applications": false})
                .as_object()
                .unwrap()
                .clone(),
        ),
    )
    .await
    .unwrap();
    let soon = (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339();
    let j = job(&t, json!({"title": "Quiet", "status": "active", "contact_email": "hr@acme.example", "expires_at": soon})).await;
    t.post(
        &format!("/jobs/{}/applications", j["id"].as_str().unwrap()),
        json!({"name": "Ann", "email": "ann@example.com"}),
    )
    .await
    .expect(201);
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 0);
    assert_eq!(drain(&t.app).await, 0);
    assert!(sink.received().is_empty());
    // Bad settings are refused beside the field.
    let err = jobboard_domain::orgs::update(
        t.db(),
        t.org_id,
        jobboard_domain::Input::new(json!({"mail_expiry_days": 61}).as_object().unwrap().clone()),
    )
    .await
    .unwrap_err();
    assert!(format!("{err:?}").contains("mail_expiry_days"), "{err:?}");
}

async fn nothing_is_queued_without_an_smtp_server(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let soon = (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339();
    let j = job(&t, json!({"title": "Silent", "status": "active", "contact_email": "hr@acme.example", "expires_at": soon})).await;
    t.post(
        &format!("/jobs/{}/applications", j["id"].as_str().unwrap()),
        json!({"name": "Ann", "email": "ann@example.com"}),
    )
    .await
    .expect(201);
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 0);
    assert!(store::list(t.db(), t.org_id, 100).await.unwrap().is_empty());
}
