//! The hosted application form, `GET|POST /jobs/<slug>/apply`: an application created as
//! the API creates it (same validation, `application.received` delivered to a subscribed
//! receiver), the job page and its
//! structured data saying candidates apply on the board, and refusals that store nothing.

use std::time::Duration;

use reqwest::{Method, redirect::Policy};
use serde_json::{Value, json};

use crate::{
    backends,
    board::{job, post_form, sel},
    common::*,
    webhook_receiver::Receiver,
};

backends!(
    a_candidate_applies_on_the_board,
    each_problem_is_shown_beside_its_field,
    refused_applications_store_nothing,
    only_hosted_jobs_take_applications,
);

/// The anti-forgery token of the application form of `slug`.
async fn token(t: &TestApp, slug: &str) -> String {
    let r = t.page(&format!("/jobs/{slug}/apply")).await;
    r.expect(200);
    assert_eq!(r.header("cache-control"), Some("private, no-store"));
    let doc = r.html();
    let input = doc
        .select(&sel("input[name=_token]"))
        .next()
        .expect("a token");
    input.value().attr("value").unwrap().to_string()
}

/// Posts the form of `slug` as a browser on this board does, plus `headers`.
async fn send(t: &TestApp, slug: &str, fields: &[(&str, &str)], headers: &[(&str, &str)]) -> Resp {
    post_form(t, &format!("/jobs/{slug}/apply"), fields, headers).await
}

async fn applications(t: &TestApp) -> Vec<Value> {
    t.get("/applications").await.body["data"]
        .as_array()
        .unwrap()
        .clone()
}

/// The schema.org `JobPosting` of a job page.
async fn posting(t: &TestApp, slug: &str) -> Value {
    let doc = t.page(&format!("/jobs/{slug}")).await.html();
    let script = doc
        .select(&sel("script[type=\"application/ld+json\"]"))
        .next()
        .expect("structured data");
    serde_json::from_str(&script.inner_html()).unwrap()
}

async fn a_candidate_applies_on_the_board(b: Backend) {
    let t = TestApp::spawn(b).await;
    let rx = Receiver::start().await;
    t.post(
        "/webhooks",
        json!({"event": "application.received", "target_type": "webhook", "target_url": rx.url("/hook")}),
    )
    .await
    .expect(201);
    let slug = job(
        &t,
        json!({"title": "Baker", "how_to_apply_method": "form", "location": "Lyon"}),
    )
    .await;
    // The job page sends candidates to the form, and says so to search engines.
    let doc = t.page(&format!("/jobs/{slug}")).await.html();
    let a = doc.select(&sel(".apply a.button")).next().unwrap();
    assert_eq!(
        a.value().attr("href"),
        Some(format!("/jobs/{slug}/apply").as_str())
    );
    assert_eq!(a.text().collect::<String>(), "Apply on this board");
    assert_eq!(posting(&t, &slug).await["directApply"], true);

    let tok = token(&t, &slug).await;
    let r = send(
        &t,
        &slug,
        &[
            ("_token", &tok),
            ("name", "Grace Hopper"),
            ("email", "grace@example.com"),
            ("resume_url", "https://grace.example/cv.pdf"),
            ("cover_letter", "I <b>bake</b> well."),
            ("reference_code", ""),
            // Fields the form does not have are not taken.
            ("status", "hired"),
        ],
        &[],
    )
    .await;
    r.expect(303);
    assert_eq!(
        r.header("location"),
        Some(format!("/jobs/{slug}/apply?sent=1").as_str())
    );
    let done = t.page(&format!("/jobs/{slug}/apply?sent=1")).await;
    assert!(
        done.text.contains("your application was sent"),
        "{}",
        done.text
    );

    let apps = applications(&t).await;
    assert_eq!(apps.len(), 1);
    assert_eq!(apps[0]["name"], "Grace Hopper");
    assert_eq!(apps[0]["email"], "grace@example.com");
    assert_eq!(apps[0]["resume_url"], "https://grace.example/cv.pdf");
    assert_eq!(apps[0]["cover_letter"], "I <b>bake</b> well.");
    assert_eq!(apps[0]["status"], "new");
    assert_eq!(apps[0]["job_title"], "Baker");
    // The same event as the API's, written with the application.
    let events = t.get("/analytics?period=7d").await;
    assert_eq!(events.body["data"]["applications"], 1);
    let events = jobboard_store::events::list_for_org(t.db(), t.org_id)
        .await
        .unwrap();
    let received: Vec<_> = events
        .iter()
        .filter(|e| e.event_type == "application.received")
        .collect();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].data.0["application_id"], apps[0]["id"]);
    // ... and delivered to the subscribed receiver, like one made through the API.
    assert!(
        rx.wait_until(Duration::from_secs(20), |h| !h.is_empty())
            .await,
        "no delivery"
    );
    let hit = rx.hits("/hook")[0].json();
    assert_eq!(hit["event"], "application.received");
    assert_eq!(hit["data"]["application_id"], apps[0]["id"]);

    // A job without any link or address to apply at is hosted too.
    let slug = job(
        &t,
        json!({"title": "Letter", "how_to_apply": "Write to 1 Main Street"}),
    )
    .await;
    let tok = token(&t, &slug).await;
    send(
        &t,
        &slug,
        &[
            ("_token", &tok),
            ("name", "Ada"),
            ("email", "ada@example.com"),
        ],
        &[],
    )
    .await
    .expect(303);
    assert_eq!(applications(&t).await.len(), 2);
}

async fn each_problem_is_shown_beside_its_field(b: Backend) {
    let t = TestApp::spawn(b).await;
    let slug = job(&t, json!({"title": "Baker", "how_to_apply_method": "form"})).await;
    let tok = token(&t, &slug).await;
    let r = send(
        &t,
        &slug,
        &[
            ("_token", &tok),
            ("name", "  "),
            ("email", "not an address"),
            ("resume_url", "javascript:alert(1)"),
            ("cover_letter", "Kept as typed"),
        ],
        &[],
    )
    .await;
    r.expect(422);
    let doc = r.html();
    for field in ["name", "email", "resume_url"] {
        let input = doc.select(&sel(&format!("#f-{field}"))).next().unwrap();
        assert_eq!(input.value().attr("aria-invalid"), Some("true"), "{field}");
        let error = doc.select(&sel(&format!("#e-{field}"))).next().unwrap();
        assert!(
            !error.text().collect::<String>().trim().is_empty(),
            "{field}"
        );
    }
    // What was typed is kept, escaped.
    let letter = doc.select(&sel("#f-cover_letter")).next().unwrap();
    assert_eq!(letter.text().collect::<String>(), "Kept as typed");
    let resume = doc.select(&sel("#f-resume_url")).next().unwrap();
    assert_eq!(resume.value().attr("value"), Some("javascript:alert(1)"));
    assert!(doc.select(&sel(".notice.error li a")).count() == 3);
    assert!(applications(&t).await.is_empty());
}

async fn refused_applications_store_nothing(b: Backend) {
    let t = TestApp::spawn(b).await;
    let slug = job(&t, json!({"title": "Baker", "how_to_apply_method": "form"})).await;
    let other = job(&t, json!({"title": "Cook", "how_to_apply_method": "form"})).await;
    let tok = token(&t, &slug).await;
    let ok = [
        ("_token", tok.as_str()),
        ("name", "Ada"),
        ("email", "ada@example.com"),
    ];
    // From another site.
    send(&t, &slug, &ok, &[("origin", "https://evil.example")])
        .await
        .expect(403);
    // Without a token, with a forged one, or with the token of another job's form.
    send(
        &t,
        &slug,
        &[("name", "Ada"), ("email", "ada@example.com")],
        &[],
    )
    .await
    .expect(403);
    send(
        &t,
        &slug,
        &[
            ("_token", "1.AAAA"),
            ("name", "Ada"),
            ("email", "ada@example.com"),
        ],
        &[],
    )
    .await
    .expect(403);
    let r = send(&t, &other, &ok, &[]).await;
    r.expect(403);
    // The form is shown again with what was typed.
    let name = r
        .html()
        .select(&sel("#f-name"))
        .next()
        .unwrap()
        .value()
        .attr("value")
        .map(str::to_string);
    assert_eq!(name.as_deref(), Some("Ada"));
    // The trap field filled in, as bots do.
    send(
        &t,
        &slug,
        &[ok[0], ok[1], ok[2], ("reference_code", "x")],
        &[],
    )
    .await
    .expect(400);
    assert!(applications(&t).await.is_empty());
}

async fn only_hosted_jobs_take_applications(b: Backend) {
    let t = TestApp::spawn(b).await;
    let external = job(
        &t,
        json!({"title": "Web", "how_to_apply_method": "website", "how_to_apply": "https://acme.example/apply", "location": "Lyon"}),
    )
    .await;
    assert_eq!(posting(&t, &external).await["directApply"], false);
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(Policy::none())
        .build()
        .unwrap();
    let r = client
        .request(Method::GET, format!("{}/jobs/{external}/apply", t.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(
        r.headers()["location"].to_str().unwrap(),
        "https://acme.example/apply"
    );
    let tok = token(
        &t,
        &job(
            &t,
            json!({"title": "Hosted", "how_to_apply_method": "form", "location": "Lyon"}),
        )
        .await,
    )
    .await;
    send(
        &t,
        &external,
        &[
            ("_token", &tok),
            ("name", "Ada"),
            ("email", "ada@example.com"),
        ],
        &[],
    )
    .await
    .expect(404);
    let expired = job(
        &t,
        json!({"title": "Gone", "status": "expired", "how_to_apply_method": "form"}),
    )
    .await;
    send(
        &t,
        &expired,
        &[
            ("_token", &tok),
            ("name", "Ada"),
            ("email", "ada@example.com"),
        ],
        &[],
    )
    .await
    .expect(410);
    send(
        &t,
        "no-such-job",
        &[
            ("_token", &tok),
            ("name", "Ada"),
            ("email", "ada@example.com"),
        ],
        &[],
    )
    .await
    .expect(404);
    assert!(applications(&t).await.is_empty());
}
