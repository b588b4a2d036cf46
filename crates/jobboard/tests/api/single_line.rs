//! Single-line fields (titles, names, company, location, board name) refuse line breaks
//! and other control characters at every door, and mail made from text stored before
//! that rule still goes: one alert whose mail cannot be made never holds up the others,
//! in its own organization or any other.

use std::time::Duration;

use jobboard_store::Ts;

use jobboard_store::dispatch;

use jobboard_domain::{Input, OrgId, alerts, orgs};

use jobboard::delivery::mail::drain;
use reqwest::Method;
use serde_json::{Value, json};

use crate::{
    backends,
    board::{form_token, job, post_form, sel},
    common::*,
    mail::mail_to,
    smtp_sink::SmtpSink,
};

backends!(
    line_breaks_are_refused_by_the_api,
    line_breaks_are_refused_by_the_boards_forms,
    a_board_name_is_one_line,
    one_alert_that_cannot_be_mailed_does_not_stop_the_others,
    stored_titles_with_line_breaks_still_make_mail,
);

const BROKEN: &[&str] = &[
    "Rust engineer\nsecond line",
    "Rust\r\nBcc: victim@example.com",
    "tab\there",
    "Rust\u{2028}engineer",
    "bell\u{7}",
];

fn field_codes(r: &Resp) -> Vec<(String, String)> {
    r.body["error"]["details"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["field"].as_str().unwrap().to_string(),
                f["code"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

async fn line_breaks_are_refused_by_the_api(b: Backend) {
    let t = TestApp::spawn(b).await;
    for bad in BROKEN {
        let r = t
            .post(
                "/jobs",
                json!({"title": bad, "company_name": bad, "location": bad,
                       "description": "<p>Two\nlines are fine here.</p>"}),
            )
            .await;
        r.expect(422);
        assert_eq!(
            field_codes(&r),
            [
                ("title".to_string(), "invalid_format".to_string()),
                ("company_name".to_string(), "invalid_format".to_string()),
                ("location".to_string(), "invalid_format".to_string()),
            ],
            "{bad:?}"
        );
        let cat = t.post("/categories", json!({"name": bad})).await;
        cat.expect(422);
        assert_eq!(cat.body["error"]["details"]["fields"][0]["field"], "name");
    }
    assert_eq!(
        t.get("/jobs?status=all").await.body["meta"]["pagination"]["total_items"],
        0
    );
    // Surrounding blanks are still trimmed; what is kept is one line.
    let ok = t
        .post(
            "/jobs",
            json!({"title": " Rust engineer\n", "company_name": "Acme", "description": "x"}),
        )
        .await;
    ok.expect(201);
    assert_eq!(ok.body["data"]["title"], "Rust engineer");
    let id = ok.body["data"]["id"].as_str().unwrap().to_string();
    let r = t
        .patch(&format!("/jobs/{id}"), json!({"title": "A\nB"}))
        .await;
    r.expect(422);
    assert_eq!(
        t.get(&format!("/jobs/{id}")).await.body["data"]["title"],
        "Rust engineer"
    );
    // Applications: the applicant's name.
    let r = t
        .post(
            &format!("/jobs/{id}/applications"),
            json!({"name": "Grace\r\nHopper", "email": "grace@example.com"}),
        )
        .await;
    r.expect(422);
    assert_eq!(field_codes(&r), [("name".into(), "invalid_format".into())]);
    assert_eq!(
        t.get("/applications").await.body["data"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

/// The anti-forgery token of the form at `path`.
async fn token(t: &TestApp, path: &str) -> String {
    let r = t.page(path).await;
    r.expect(200);
    form_token(&r)
}

/// The message shown beside field `name` of a refused form.
fn message_beside(r: &Resp, name: &str) -> String {
    let doc = r.html();
    let field = doc
        .select(&sel(&format!("#f-{name}")))
        .next()
        .unwrap_or_else(|| panic!("no field {name}"));
    assert_eq!(field.value().attr("aria-invalid"), Some("true"), "{name}");
    doc.select(&sel(&format!("#e-{name}")))
        .next()
        .unwrap()
        .text()
        .collect()
}

async fn line_breaks_are_refused_by_the_boards_forms(b: Backend) {
    let t = TestApp::spawn(b).await;
    let tok = token(&t, "/post-a-job").await;
    let r = post_form(
        &t,
        "/post-a-job",
        &[
            ("_token", tok.as_str()),
            ("title", "Night baker\r\nBcc: victim@example.com"),
            ("company_name", "Bread & Co"),
            ("description", "We bake.\nEvery night."),
            ("location", "Lyon\nCentre"),
            ("reference_code", ""),
        ],
        &[],
    )
    .await;
    r.expect(422);
    for name in ["title", "location"] {
        assert_eq!(
            message_beside(&r, name),
            "Must be one line: no line breaks, tabs or other control characters.",
        );
    }
    assert_eq!(
        t.get("/jobs?status=all").await.body["meta"]["pagination"]["total_items"],
        0
    );

    let slug = job(&t, json!({"title": "Baker", "how_to_apply_method": "form"})).await;
    let path = format!("/jobs/{slug}/apply");
    let tok = token(&t, &path).await;
    let r = post_form(
        &t,
        &path,
        &[
            ("_token", tok.as_str()),
            ("name", "Grace\nHopper"),
            ("email", "grace@example.com"),
            ("reference_code", ""),
        ],
        &[],
    )
    .await;
    r.expect(422);
    assert!(message_beside(&r, "name").starts_with("Must be one line"));
    assert_eq!(
        t.get("/applications").await.body["data"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

async fn a_board_name_is_one_line(b: Backend) {
    let t = TestApp::spawn(b).await;
    let e = orgs::create(t.db(), "Jobs\r\nBcc: victim@example.com")
        .await
        .unwrap_err();
    assert!(format!("{e:?}").contains("invalid_format"), "{e:?}");
    let mut body = serde_json::Map::new();
    body.insert("name".into(), json!("Jobs\nin Lyon"));
    let e = orgs::update(t.db(), t.org_id, Input::new(body))
        .await
        .unwrap_err();
    assert!(format!("{e:?}").contains("invalid_format"), "{e:?}");
    assert_eq!(orgs::get(t.db(), t.org_id).await.unwrap().name, "Test org");
}

async fn spawn_with_mail(b: Backend, sink: &SmtpSink) -> TestApp {
    TestApp::spawn_with(b, mail_to(sink, &[60])).await
}

/// An active instant alert of `org` for every live job, made through the subscription
/// operation and switched on directly.
async fn alert(t: &TestApp, org: OrgId, email: &str) {
    let mut body = serde_json::Map::new();
    body.insert("email".into(), json!(email));
    body.insert("frequency".into(), json!("instant"));
    alerts::subscribe(t.db(), org, Input::new(body), Ts::now())
        .await
        .unwrap();
    dispatch!(t.db().writer(), p => {
        sqlx::query("UPDATE job_alerts SET status = 'active', confirmed_at = $1 WHERE email = $2")
            .bind(Ts::now()).bind(email).execute(p).await.unwrap();
    });
}

fn later(secs: u64) -> Ts {
    Ts::now().later_by(Duration::from_secs(secs))
}

async fn one_alert_that_cannot_be_mailed_does_not_stop_the_others(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn_with_mail(b, &sink).await;
    let (other, other_key) = t.new_org("Other board", "*", 1000, 1000).await;
    alert(&t, t.org_id, "broken@example.com").await;
    alert(&t, t.org_id, "ada@example.com").await;
    alert(&t, other, "grace@example.com").await;
    drain(&t.app).await;
    let confirmations = sink.received().len();
    // An address stored under an older, looser rule, that no mail can be sent to now.
    dispatch!(t.db().writer(), p => {
        sqlx::query("UPDATE job_alerts SET email = 'not an address' WHERE email = 'broken@example.com'")
            .execute(p).await.unwrap();
    });
    let body = json!({"title": "Rust engineer", "company_name": "Acme", "description": "x", "status": "active"});
    t.post("/jobs", body.clone()).await.expect(201);
    t.req(Method::POST, "/jobs")
        .key(&other_key)
        .json(body)
        .send()
        .await
        .expect(201);
    assert_eq!(alerts::run(t.db(), later(10), 7).await.unwrap(), 2);
    assert_eq!(drain(&t.app).await, 2);
    let mut to: Vec<String> = sink.received()[confirmations..]
        .iter()
        .flat_map(|m| m.to.clone())
        .collect();
    to.sort();
    assert_eq!(to, ["ada@example.com", "grace@example.com"]);
    // The failure is recorded for that alert alone, and nothing is mailed twice.
    let listed = t.get("/alerts").await;
    listed.expect(200);
    let rows = listed.body["data"].as_array().unwrap();
    let by = |email: &str| -> &Value { rows.iter().find(|a| a["email"] == email).unwrap() };
    let broken = by("not an address");
    assert!(
        broken["last_error"].as_str().unwrap().contains("address"),
        "{broken}"
    );
    assert!(broken["last_error_at"].is_string());
    assert!(broken["last_sent_at"].is_null());
    assert!(by("ada@example.com")["last_error"].is_null());
    assert_eq!(alerts::run(t.db(), later(11), 7).await.unwrap(), 0);
}

async fn stored_titles_with_line_breaks_still_make_mail(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn_with_mail(b, &sink).await;
    alert(&t, t.org_id, "ada@example.com").await;
    let r = t
        .post(
            "/jobs",
            json!({"title": "Rust engineer", "company_name": "Acme", "description": "x",
                   "status": "active", "contact_email": "hr@acme.example"}),
        )
        .await;
    r.expect(201);
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    drain(&t.app).await;
    let before = sink.received().len();
    // A title and an applicant's name stored before the rule.
    dispatch!(t.db().writer(), p => {
        sqlx::query("UPDATE jobs SET title = $1")
            .bind("Rust engineer\nBcc: victim@example.com").execute(p).await.unwrap();
    });
    assert_eq!(alerts::run(t.db(), later(10), 7).await.unwrap(), 1);
    t.post(
        &format!("/jobs/{id}/applications"),
        json!({"name": "Grace Hopper", "email": "grace@example.com"}),
    )
    .await
    .expect(201);
    assert_eq!(drain(&t.app).await, 2);
    let mut subjects: Vec<String> = sink.received()[before..]
        .iter()
        .map(|m| m.parsed().subject().unwrap_or_default().to_string())
        .collect();
    subjects.sort();
    assert_eq!(
        subjects,
        [
            "New application for Rust engineer Bcc: victim@example.com from Grace Hopper",
            "New job on Test org: Rust engineer Bcc: victim@example.com",
        ]
    );
    for m in &sink.received()[before..] {
        assert_eq!(m.to.len(), 1, "no recipient was added");
    }
}
