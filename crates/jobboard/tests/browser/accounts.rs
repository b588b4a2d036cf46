//! Members in headless Chromium, with mail going to an SMTP server on 127.0.0.1: an
//! employer signs up from the mailed link, posts a job, sees it pending, staff approve it
//! in the dashboard, and the employer sees it live with its counts; a job seeker signs
//! in, saves a job and downloads their data. axe-core checks every page of the account.

use std::time::Duration;

use jobboard_domain::{Input, orgs, users};
use serde_json::{Value, json};

use crate::{
    accessible,
    common::TestApp,
    harness::{self, Browser},
    job,
    smtp_sink::SmtpSink,
};

const PASSWORD: &str = "correct horse battery staple";

async fn switches(t: &TestApp, signup: &str) {
    let Value::Object(map) = json!({"member_signup": signup}) else {
        unreachable!()
    };
    orgs::update(t.db(), t.org_id, Input::new(map))
        .await
        .unwrap();
}

/// Asks for a link for `email` on the sign-in page and opens the one the mail brings.
async fn sign_in(b: &Browser, t: &TestApp, sink: &SmtpSink, email: &str, axe: bool) {
    b.goto(&format!("{}/account/sign-in", t.base)).await;
    if axe {
        accessible(b, "the sign-in page").await;
    }
    b.find("#f-email").await.send_keys(email).await.unwrap();
    if let Ok(role) = b
        .client
        .find(fantoccini::Locator::Css("#f-role-employer"))
        .await
        && email.starts_with("employer")
    {
        role.click().await.unwrap();
    }
    let before = sink.received().len();
    b.follow(b.find("form.post-form button[type=submit]").await)
        .await;
    assert_eq!(b.text("main h1").await, "Check your mail");
    if axe {
        accessible(b, "the check-your-mail page").await;
    }
    assert!(
        sink.wait_until(Duration::from_secs(20), |s| s.received().len() > before)
            .await,
        "the sign-in mail arrived"
    );
    let text = sink.received()[before]
        .parsed()
        .body_text(0)
        .unwrap_or_default()
        .to_string();
    let at = text.find("/account/sign-in/").expect("a sign-in link");
    let link: String = text[at..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    b.goto(&format!("{}{link}", t.base)).await;
    assert!(b.path().await.starts_with("/account"));
    assert_eq!(b.text("main h1").await, "Your account");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_employer_posts_and_sees_the_job_go_live() {
    let test = "an_employer_posts_and_sees_the_job_go_live";
    let Some(b) = Browser::start(test).await else {
        return;
    };
    let axe = b.has_axe(&format!("{test} (axe-core)"));
    let sink = SmtpSink::start().await;
    let t = harness::mailing_app(&sink).await;
    switches(&t, "open").await;
    sign_in(&b, &t, &sink, "employer@example.com", axe).await;
    if axe {
        accessible(&b, "the account").await;
    }
    assert_eq!(b.text(".member-role").await, "employer");

    b.follow(b.find("a[href=\"/account/jobs/new\"]").await)
        .await;
    if axe {
        accessible(&b, "the member's post form").await;
    }
    b.find("#f-title")
        .await
        .send_keys("Night baker")
        .await
        .unwrap();
    b.find("#f-description")
        .await
        .send_keys("Bake bread at night.\n\nGood pay.")
        .await
        .unwrap();
    b.find("#f-company_name")
        .await
        .send_keys("Crumbs Ltd")
        .await
        .unwrap();
    b.follow(b.find("form.post-form button[type=submit]").await)
        .await;
    assert_eq!(b.path().await, "/account/jobs?notice=posted");
    assert_eq!(b.text(".job-row .status").await, "pending");
    if axe {
        accessible(&b, "the member's jobs").await;
    }

    // Staff approve it in the dashboard (in the same browser: another cookie).
    let Value::Object(map) = json!({"email": "staff@example.com", "password": PASSWORD}) else {
        unreachable!()
    };
    users::create(t.db(), t.org_id, Input::new(map), t.app.clock.now())
        .await
        .unwrap();
    b.goto(&format!("{}/dashboard/login", t.base)).await;
    b.find("#email")
        .await
        .send_keys("staff@example.com")
        .await
        .unwrap();
    b.find("#password").await.send_keys(PASSWORD).await.unwrap();
    b.follow(b.find("form button[type=submit]").await).await;
    b.goto(&format!("{}/dashboard/jobs?status=pending", t.base))
        .await;
    b.follow(
        b.find("form[action$=\"/status\"] input[value=active] ~ button")
            .await,
    )
    .await;

    // The member sees it live, with its counts, and the board lists it.
    b.goto(&format!("{}/account/jobs", t.base)).await;
    assert_eq!(b.text(".job-row .status").await, "active");
    assert_eq!(b.text(".job-row .views").await, "0");
    assert_eq!(b.text(".job-row .applications").await, "0");
    b.follow(b.find(".job-row .applications a").await).await;
    assert_eq!(b.text("main h1").await, "Applications: Night baker");
    if axe {
        accessible(&b, "the applications of a job").await;
    }
    b.goto(&format!("{}/account/jobs", t.base)).await;
    b.follow(b.find(".job-row a[href$=\"/edit\"]").await).await;
    if axe {
        accessible(&b, "the member's edit form").await;
    }
    b.goto(&format!("{}/account/jobs", t.base)).await;
    b.follow(b.find(".job-row td a").await).await;
    assert_eq!(b.text("main h1").await, "Night baker");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_seeker_saves_a_job_and_exports_their_data() {
    let test = "a_job_seeker_saves_a_job_and_exports_their_data";
    let Some(b) = Browser::start(test).await else {
        return;
    };
    let axe = b.has_axe(&format!("{test} (axe-core)"));
    let sink = SmtpSink::start().await;
    let t = harness::mailing_app(&sink).await;
    t.post("/members/sync", json!({"email": "seeker@example.com"}))
        .await
        .expect(201);
    let slug = job(&t, json!({"title": "Rust engineer"})).await;
    sign_in(&b, &t, &sink, "seeker@example.com", axe).await;

    b.goto(&format!("{}/jobs/{slug}", t.base)).await;
    b.follow(b.find("p.save a").await).await;
    if axe {
        accessible(&b, "the save page").await;
    }
    b.follow(b.find("form[action$=\"/save\"] button[type=submit]").await)
        .await;
    assert_eq!(b.path().await, "/account/saved");
    assert!(b.text("li.saved-job").await.contains("Rust engineer"));
    if axe {
        accessible(&b, "the saved jobs").await;
    }

    // The export, as the download link fetches it (with the session's cookie).
    b.goto(&format!("{}/account", t.base)).await;
    let doc = b
        .eval(
            "var x = new XMLHttpRequest(); x.open('GET', '/account/export', false); x.send(); \
             return JSON.parse(x.responseText);",
        )
        .await;
    assert_eq!(doc["member"]["email"], "seeker@example.com");
    assert_eq!(doc["saved_jobs"][0]["title"], "Rust engineer");

    b.follow(b.find("a[href=\"/account/delete\"]").await).await;
    if axe {
        accessible(&b, "the delete page").await;
    }
    b.close().await;
}
