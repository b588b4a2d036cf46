//! Browser tests: the board in headless Chromium, driven through WebDriver as a visitor
//! uses it (search, open a job, apply, post a job, propose a CMS entry), every page free of axe-core violations, and
//! no script of the OWASP filter-evasion payloads ever running.
//!
//! The server runs on SQLite here (the pages are the same on PostgreSQL, where the
//! integration tests cover them).

mod accounts;
mod alerts;
#[path = "../api/common.rs"]
mod common;
mod dashboard;
pub mod harness;
mod payments;
mod reset;
#[path = "../api/smtp_sink.rs"]
mod smtp_sink;
mod two_factor;
#[path = "../api/webhook_receiver.rs"]
mod webhook_receiver;

use common::{Backend, TestApp};
use harness::Browser;
use serde_json::{Value, json};

/// Creates an active job through the API; its slug.
pub(crate) async fn job(t: &TestApp, body: Value) -> String {
    let mut body = body;
    let o = body.as_object_mut().unwrap();
    o.entry("description").or_insert(json!("<p>A job.</p>"));
    o.entry("company_name").or_insert(json!("Acme"));
    o.entry("status").or_insert(json!("active"));
    let r = t.post("/jobs", body).await;
    r.expect(201);
    r.body["data"]["slug"].as_str().unwrap().to_string()
}

/// Fails when axe-core reports anything on the current page.
async fn accessible(b: &Browser, page: &str) {
    let v = b.axe_violations().await;
    assert!(v.is_empty(), "axe-core on {page}: {v:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_visitor_searches_reads_and_posts() {
    let Some(b) = Browser::start("a_visitor_searches_reads_and_posts").await else {
        return;
    };
    let axe = b.has_axe("a_visitor_searches_reads_and_posts (axe-core)");
    let t = TestApp::spawn(Backend::Sqlite).await;
    let rust = job(
        &t,
        json!({"title": "Rust engineer", "job_type": "full-time", "location": "Berlin", "is_remote": true,
               "salary_min": 60000, "salary_max": 80000, "salary_currency": "EUR", "salary_period": "yearly",
               "how_to_apply_method": "website", "how_to_apply": "https://acme.example/apply",
               "description": "<p>Write <strong>Rust</strong>.</p><ul><li>Remote</li></ul>"}),
    )
    .await;
    job(&t, json!({"title": "Baker", "location": "Paris"})).await;
    job(&t, json!({"title": "Closed", "status": "expired"})).await;

    b.goto(&format!("{}/", t.base)).await;
    assert_eq!(b.text("main h1").await, "Latest jobs");
    assert_eq!(b.find_all("ol.jobs > li").await.len(), 2);
    if axe {
        accessible(&b, "/").await;
    }
    // Search with the form (no script on the page).
    b.find("#q-search").await.send_keys("rust").await.unwrap();
    b.follow(b.find("form[role=search] button[type=submit]").await)
        .await;
    b.find("ol.jobs").await;
    assert_eq!(
        b.path().await,
        "/?search=rust&locations=&is_remote=&country=&salary_min="
    );
    let links = b.find_all("ol.jobs li h2 a").await;
    assert_eq!(links.len(), 1);
    if axe {
        accessible(&b, "/?search=rust").await;
    }
    b.follow(links[0].clone()).await;
    assert_eq!(b.text("main h1").await, "Rust engineer");
    assert_eq!(b.path().await, format!("/jobs/{rust}"));
    let ld = b
        .eval("return document.querySelector('script[type=\"application/ld+json\"]').textContent;")
        .await;
    let ld: Value = serde_json::from_str(ld.as_str().unwrap()).unwrap();
    assert_eq!(ld["@type"], "JobPosting");
    if axe {
        accessible(&b, "the job page").await;
    }

    // Apply on the board to a job without an apply link of its own.
    let baker = t.get("/jobs?search=baker").await.body["data"][0]["slug"]
        .as_str()
        .unwrap()
        .to_string();
    b.goto(&format!("{}/jobs/{baker}", t.base)).await;
    b.follow(b.find(".apply a.button").await).await;
    assert_eq!(b.path().await, format!("/jobs/{baker}/apply"));
    if axe {
        accessible(&b, "the application form").await;
    }
    b.find("#f-name")
        .await
        .send_keys("Grace Hopper")
        .await
        .unwrap();
    b.find("#f-email")
        .await
        .send_keys("grace@example.com")
        .await
        .unwrap();
    b.find("#f-cover_letter")
        .await
        .send_keys("I bake at night.")
        .await
        .unwrap();
    b.follow(b.find(".post-form button[type=submit]").await)
        .await;
    assert!(
        b.text(".notice.ok h2")
            .await
            .contains("your application was sent")
    );
    let apps = t.get("/applications").await;
    assert_eq!(apps.body["data"][0]["name"], "Grace Hopper");
    assert_eq!(apps.body["data"][0]["job_title"], "Baker");

    // Post a job: first with a mistake, then corrected.
    b.goto(&format!("{}/post-a-job", t.base)).await;
    if axe {
        accessible(&b, "/post-a-job").await;
    }
    b.find("#f-title")
        .await
        .send_keys("Night baker")
        .await
        .unwrap();
    b.find("#f-company_name")
        .await
        .send_keys("Bread & Co")
        .await
        .unwrap();
    b.find("#f-description")
        .await
        .send_keys("We bake.\n\nEvery night.")
        .await
        .unwrap();
    b.find("#f-contact_email")
        .await
        .send_keys("not an address")
        .await
        .unwrap();
    b.follow(b.find(".post-form button[type=submit]").await)
        .await;
    let problem = b.text("#e-contact_email").await;
    assert!(!problem.is_empty(), "the problem is shown beside the field");
    if axe {
        accessible(&b, "/post-a-job with problems").await;
    }
    let email = b.find("#f-contact_email").await;
    email.clear().await.unwrap();
    email.send_keys("hello@bread.example").await.unwrap();
    b.follow(b.find(".post-form button[type=submit]").await)
        .await;
    assert!(
        b.text(".notice.ok h2")
            .await
            .contains("your job was received")
    );
    if axe {
        accessible(&b, "the confirmation").await;
    }
    let pending = t.get("/jobs?status=pending").await;
    assert_eq!(pending.body["data"][0]["title"], "Night baker");
    assert_eq!(pending.body["data"][0]["company_name"], "Bread & Co");

    // A public CMS collection, rendered from its schema.
    t.post(
        "/cms",
        json!({"slug": "events", "name": "Events", "rules": {"allow_public_submit": true}, "schema": [
            {"name": "title", "type": "text", "required": true}, {"name": "summary", "type": "longtext"},
            {"name": "site", "type": "url"}, {"name": "free", "type": "boolean"}]}),
    )
    .await
    .expect(201);
    let r = t
        .post(
            "/cms/events",
            json!({"data": {"title": "Rust meetup", "summary": "Talks.\nPizza.", "site": "https://meetup.example/"}}),
        )
        .await;
    r.expect(201);
    b.goto(&format!("{}/c/events", t.base)).await;
    assert_eq!(b.text("main h1").await, "Events");
    b.follow(b.find("ol.cms-items h2 a").await).await;
    assert_eq!(b.text("main h1").await, "Rust meetup");
    if axe {
        accessible(&b, "a CMS item page").await;
    }
    // Propose an event with the collection's form: first without its title.
    b.goto(&format!("{}/c/events", t.base)).await;
    b.follow(b.find(".submit-entry a").await).await;
    assert_eq!(b.path().await, "/c/events/submit");
    if axe {
        accessible(&b, "the CMS submission form").await;
    }
    b.find("#f-data_summary")
        .await
        .send_keys("Bring a laptop.")
        .await
        .unwrap();
    b.find("#f-data_free").await.click().await.unwrap();
    b.follow(b.find(".post-form button[type=submit]").await)
        .await;
    assert!(
        !b.text("#e-data_title").await.is_empty(),
        "the problem is beside the title"
    );
    if axe {
        accessible(&b, "the CMS submission form with a problem").await;
    }
    b.find("#f-data_title")
        .await
        .send_keys("Rust workshop")
        .await
        .unwrap();
    b.follow(b.find(".post-form button[type=submit]").await)
        .await;
    assert!(
        b.text(".notice.ok h2")
            .await
            .contains("your entry was received")
    );
    let pending = t.get("/cms/events?status=pending_review").await;
    assert_eq!(
        pending.body["items"][0]["data"],
        json!({"title": "Rust workshop", "summary": "Bring a laptop.", "free": true})
    );

    // Error pages.
    if axe {
        b.goto(&format!("{}/jobs/no-such-job", t.base)).await;
        accessible(&b, "a 404 page").await;
        let closed = t.get("/jobs?status=expired").await.body["data"][0]["slug"]
            .as_str()
            .unwrap()
            .to_string();
        b.goto(&format!("{}/jobs/{closed}", t.base)).await;
        assert_eq!(b.text("main h1").await, "This job has closed");
        accessible(&b, "a 410 page").await;
    }
    b.close().await;
}

/// The payloads of the fixture (one per line; `#` lines are comments).
fn payloads() -> Vec<String> {
    include_str!("xss-payloads.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// Fails when a script ran (the marker is set) or the page's content holds anything that
/// could run one: an event handler attribute, a script-like URL where a URL is taken, a
/// script, frame, object or style element. (Text, and values of form fields, may hold the
/// payloads: escaped, they are only text.)
async fn inert(b: &Browser, page: &str) {
    let found = b
        .eval(
            "const bad = [];
             const urls = ['href', 'src', 'action', 'formaction', 'data', 'background', 'poster',
                           'srcset', 'lowsrc', 'dynsrc', 'xlink:href', 'srcdoc'];
             if (typeof window.__xss !== 'undefined') bad.push('marker set: a payload ran');
             for (const el of document.querySelectorAll('body *')) {
               for (const a of el.attributes) {
                 if (a.name.toLowerCase().startsWith('on')) bad.push(el.tagName + ' has ' + a.name);
                 if (urls.includes(a.name.toLowerCase()) && /^\\s*(javascript|vbscript|data):/i.test(a.value))
                   bad.push(el.tagName + ' ' + a.name + '=' + a.value);
               }
               if (['SCRIPT', 'IFRAME', 'OBJECT', 'EMBED', 'BASE', 'META', 'LINK', 'STYLE', 'SVG', 'MATH']
                     .includes(el.tagName.toUpperCase())) bad.push('element ' + el.tagName);
             }
             return bad;",
        )
        .await;
    assert_eq!(found, json!([]), "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filter_evasion_payloads_run_no_script() {
    let Some(b) = Browser::start("filter_evasion_payloads_run_no_script").await else {
        return;
    };
    let t = TestApp::spawn(Backend::Sqlite).await;
    let payloads = payloads();
    assert!(payloads.len() >= 30, "a representative set");
    let mut slugs = Vec::new();
    for p in &payloads {
        // Single-line fields refuse line breaks and tabs: there the payload is sent as one
        // line (the description and instructions take it as written).
        let line = one_line(p);
        let r = t
            .post(
                "/jobs",
                json!({"title": line, "company_name": line, "description": format!("<p>Before</p>{p}<p>after</p>"),
                       "location": line, "how_to_apply": p, "status": "active"}),
            )
            .await;
        r.expect(201);
        slugs.push(r.body["data"]["slug"].as_str().unwrap().to_string());
    }
    b.goto(&format!("{}/?per_page=100", t.base)).await;
    assert_eq!(b.find_all("ol.jobs > li").await.len(), payloads.len());
    inert(&b, "the list").await;
    for (slug, p) in slugs.iter().zip(&payloads) {
        b.goto(&format!("{}/jobs/{slug}", t.base)).await;
        // The title is shown as text, exactly as written.
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(words(&b.text("main h1").await), words(p), "{p}");
        inert(&b, &format!("the job page of {p:?}")).await;
    }
    for p in payloads.iter().take(10) {
        let q: String = url_escape(p);
        b.goto(&format!("{}/?search={q}", t.base)).await;
        inert(&b, &format!("a search for {p:?}")).await;
    }
    b.close().await;
}

/// `s` with each line break, tab and other control character made a space.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

fn url_escape(s: &str) -> String {
    s.bytes()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                (c as char).to_string()
            } else {
                format!("%{c:02X}")
            }
        })
        .collect()
}
