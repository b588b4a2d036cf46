//! The dashboard in headless Chromium: the first staff user's whole journey (the setup
//! link, sign-in, a key created in Settings > API keys and used on `/api`, a pending job
//! approved with `job.approved` arriving at a subscribed receiver and the job on the
//! board, the key revoked and refused), then every dashboard page checked by axe-core
//! and for controls taken out of the keyboard order.

use std::time::Duration;

use jobboard_domain::users::setup;
use serde_json::json;

use crate::{
    accessible,
    common::{Backend, TestApp},
    harness::Browser,
    webhook_receiver::Receiver,
};

const PASSWORD: &str = "correct horse battery staple";

/// Fails when a link, button or form control of the page is out of the keyboard order
/// (a negative `tabindex`), or when the page has a control without a name.
async fn keyboard_reachable(b: &Browser, page: &str) {
    let out = b
        .eval(
            "return Array.from(document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary'))\
               .filter(e => e.tabIndex < 0 && !e.closest('[aria-hidden=true]'))\
               .map(e => e.outerHTML.slice(0, 120));",
        )
        .await;
    assert_eq!(out, json!([]), "{page}: out of the keyboard order");
}

async fn check(b: &Browser, axe: bool, page: &str) {
    keyboard_reachable(b, page).await;
    if axe {
        accessible(b, page).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_staff_user_runs_the_board() {
    let Some(b) = Browser::start("the_first_staff_user_runs_the_board").await else {
        return;
    };
    let axe = b.has_axe("the_first_staff_user_runs_the_board (axe-core)");
    let t = TestApp::spawn(Backend::Sqlite).await;
    let rx = Receiver::start().await;
    rx.secret("/hook", "a-secret-of-sixteen-or-more");
    t.post(
        "/webhooks",
        json!({"event": "job.approved", "target_type": "webhook", "target_url": rx.url("/hook"), "secret": "a-secret-of-sixteen-or-more"}),
    )
    .await
    .expect(201);

    // The setup link (what `serve` prints on first start): create the first user.
    let token = setup::create_link(t.db(), t.org_id, t.app.clock.now(), setup::DEFAULT_LIFETIME)
        .await
        .unwrap();
    b.goto(&format!("{}/dashboard/setup/{token}", t.base)).await;
    check(&b, axe, "the setup page").await;
    b.find("#f-email")
        .await
        .send_keys("ada@example.com")
        .await
        .unwrap();
    b.find("#f-password")
        .await
        .send_keys(PASSWORD)
        .await
        .unwrap();
    b.find("#f-password_confirm")
        .await
        .send_keys(PASSWORD)
        .await
        .unwrap();
    b.follow(b.find("form button[type=submit]").await).await;
    assert_eq!(b.path().await, "/dashboard");
    check(&b, axe, "the overview").await;
    // Sign out, and in again with the sign-in form.
    b.follow(b.find(".account button[type=submit]").await).await;
    assert!(b.path().await.starts_with("/dashboard/login"));
    check(&b, axe, "the sign-in page").await;
    b.find("#email")
        .await
        .send_keys("ada@example.com")
        .await
        .unwrap();
    b.find("#password").await.send_keys(PASSWORD).await.unwrap();
    b.follow(b.find("form button[type=submit]").await).await;
    assert_eq!(b.path().await, "/dashboard");

    // Settings > API keys: create a key; it works on /api at once.
    b.follow(b.find("a[href='/dashboard/settings/api-keys']").await)
        .await;
    check(&b, axe, "Settings > API keys").await;
    b.find("#f-name")
        .await
        .send_keys("careers site")
        .await
        .unwrap();
    b.follow(
        b.find("form[action='/dashboard/settings/api-keys'] button[type=submit]")
            .await,
    )
    .await;
    let key = b
        .eval("return document.getElementById('new-key').value;")
        .await
        .as_str()
        .unwrap()
        .to_string();
    check(&b, axe, "the new key").await;
    let api = |method: reqwest::Method, path: &str| {
        t.client
            .request(method, format!("{}/api{path}", t.base))
            .header("x-api-key", key.clone())
    };
    assert_eq!(
        api(reqwest::Method::GET, "/jobs")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let created = api(reqwest::Method::POST, "/jobs")
        .json(&json!({"title": "Lighthouse keeper", "company_name": "Coast Co", "description": "<p>Keep the light.</p>"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let job: serde_json::Value = created.json().await.unwrap();
    assert_eq!(job["data"]["status"], "pending");
    let slug = job["data"]["slug"].as_str().unwrap().to_string();

    // Approve it from the pending queue.
    b.follow(b.find("a[href='/dashboard/jobs']").await).await;
    check(&b, axe, "the jobs list").await;
    assert_eq!(
        b.text("table.jobs tbody td:first-child a").await,
        "Lighthouse keeper"
    );
    b.follow(b.find("table.jobs form button.small:not(.secondary)").await)
        .await;
    assert!(b.text(".notice.ok").await.contains("approved"));
    assert!(
        rx.wait_until(Duration::from_secs(20), |h| h
            .iter()
            .any(|x| x.header("x-service-event") == Some("job.approved")))
            .await,
        "job.approved arrived"
    );
    let hit = rx.hits("/hook").pop().unwrap();
    assert_eq!(
        hit.signature_valid,
        Some(true),
        "signed with the subscription's secret"
    );
    assert_eq!(hit.json()["data"]["title"], "Lighthouse keeper");
    // On the public board.
    b.goto(&format!("{}/", t.base)).await;
    let listed: Vec<String> = {
        let mut v = Vec::new();
        for a in b.find_all("ol.jobs li h2 a").await {
            v.push(a.text().await.unwrap());
        }
        v
    };
    assert_eq!(listed, ["Lighthouse keeper"]);
    b.goto(&format!("{}/jobs/{slug}", t.base)).await;
    assert_eq!(b.text("main h1").await, "Lighthouse keeper");

    // Revoke the key: the API refuses it.
    b.goto(&format!("{}/dashboard/settings/api-keys", t.base))
        .await;
    b.follow(b.find("form[action$='/revoke'] button").await)
        .await;
    assert!(b.text(".notice.ok").await.contains("revoked"));
    assert_eq!(
        api(reqwest::Method::GET, "/jobs")
            .send()
            .await
            .unwrap()
            .status(),
        401
    );

    // Every other page, with something on it.
    t.post(
        "/plans",
        json!({"name": "Pro", "price": 9, "currency": "EUR", "interval": "month", "jobsIncluded": 1}),
    )
    .await
    .expect(201);
    let member = t
        .post(
            "/members/sync",
            json!({"email": "kate@example.com", "name": "Kate", "access": {"planName": "Pro"}}),
        )
        .await;
    let member = member.body["data"]["member"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let job_id = job["data"]["id"].as_str().unwrap().to_string();
    t.post(
        &format!("/jobs/{job_id}/applications"),
        json!({"name": "Grace", "email": "grace@example.com", "resume_url": "https://cv.example/grace"}),
    )
    .await
    .expect(201);
    t.post(
        "/cms",
        json!({"slug": "events", "name": "Events", "rules": {"allow_public_submit": true}, "schema": [
            {"name": "title", "type": "text", "required": true}, {"name": "seats", "type": "number"},
            {"name": "kind", "type": "select", "options": ["talk", "workshop"]}, {"name": "free", "type": "boolean"}]}),
    )
    .await
    .expect(201);
    let item = t
        .post(
            "/cms/events",
            json!({"data": {"title": "Meetup"}, "status": "pending_review"}),
        )
        .await;
    let item = item.body["item"]["id"].as_str().unwrap().to_string();
    let hooks = t.get("/webhooks").await;
    let hook = hooks.body["data"][0]["id"].as_str().unwrap().to_string();
    t.post(
        "/analytics/events",
        json!({"events": [{"type": "job_view", "job_id": job_id, "visitor_id": "v1"}, {"type": "page_view", "visitor_id": "v1"}]}),
    )
    .await
    .expect(200);
    for (path, name) in [
        ("/dashboard/jobs/new".to_string(), "the new job form"),
        (format!("/dashboard/jobs/{job_id}"), "a job's page"),
        (
            format!("/dashboard/jobs/{job_id}/delete"),
            "the delete confirmation",
        ),
        ("/dashboard/applications".to_string(), "applications"),
        (
            format!("/dashboard/applications?job={job_id}"),
            "a job's applications",
        ),
        ("/dashboard/members".to_string(), "members"),
        (format!("/dashboard/members/{member}"), "a member's page"),
        ("/dashboard/payments".to_string(), "payments"),
        ("/dashboard/settings/prices".to_string(), "prices"),
        ("/dashboard/cms".to_string(), "CMS collections"),
        ("/dashboard/cms/new".to_string(), "a new collection"),
        (
            "/dashboard/cms/events/edit".to_string(),
            "a collection's form",
        ),
        (
            "/dashboard/cms/events/items".to_string(),
            "the review queue",
        ),
        ("/dashboard/cms/events/items/new".to_string(), "a new entry"),
        (
            format!("/dashboard/cms/events/items/{item}"),
            "an entry's form",
        ),
        ("/dashboard/webhooks".to_string(), "webhooks"),
        (
            format!("/dashboard/webhooks/{hook}"),
            "a webhook's delivery log",
        ),
        ("/dashboard/analytics".to_string(), "analytics, 30 days"),
        (
            "/dashboard/analytics?period=12mo".to_string(),
            "analytics, 12 months",
        ),
        (
            "/dashboard/settings/board".to_string(),
            "Settings > Board look",
        ),
        (
            "/dashboard/settings/staff".to_string(),
            "Settings > Staff users",
        ),
        (
            "/dashboard/settings/password".to_string(),
            "Settings > Your password",
        ),
        (
            "/dashboard/settings/audit".to_string(),
            "Settings > Audit log",
        ),
        ("/dashboard/imports".to_string(), "Imports"),
    ] {
        b.goto(&format!("{}{path}", t.base)).await;
        b.find("main h1").await;
        check(&b, axe, name).await;
    }
    // A refused form is accessible too: a collection without a name.
    b.goto(&format!("{}/dashboard/cms/new", t.base)).await;
    b.find("#f-slug").await.send_keys("talks").await.unwrap();
    b.follow(b.find("form button[type=submit]:not(.secondary)").await)
        .await;
    b.find("#problems").await;
    check(&b, axe, "a refused collection form").await;
    // Publish the waiting entry with the keyboard alone: focus its button, press Enter.
    b.goto(&format!("{}/dashboard/cms/events/items", t.base))
        .await;
    let publish = b
        .find("table.items form button.small:not(.secondary)")
        .await;
    b.press_enter(publish).await;
    assert!(b.text(".notice.ok").await.contains("moved"));
    assert_eq!(t.get("/cms/events").await.body["total"], 1);
    b.close().await;
}
