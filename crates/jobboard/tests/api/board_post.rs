//! `/post-a-job` (a job created as the API creates it, always pending; refusals that
//! store nothing) and the apply redirect of `/jobs/<slug>/apply`.

use reqwest::{Method, redirect::Policy};
use serde_json::json;

use crate::{
    backends,
    board::{job, listed, post_form, sel},
    common::*,
};

backends!(
    a_posted_job_waits_for_approval,
    the_form_shows_each_problem_beside_its_field,
    refused_submissions_store_nothing,
    the_form_limit_counts_per_address,
    public_posting_can_be_turned_off,
    apply_redirects_only_to_the_jobs_own_target
);

/// The anti-forgery token of the form on `host` (the default board when `None`).
async fn token(t: &TestApp, host: Option<&str>) -> String {
    let mut rb = t.page_req(Method::GET, "/post-a-job");
    if let Some(h) = host {
        rb = rb.header("host", h);
    }
    let r = Resp::read(rb.send().await.unwrap()).await;
    r.expect(200);
    assert_eq!(r.header("cache-control"), Some("private, no-store"));
    let doc = r.html();
    let input = doc
        .select(&sel("input[name=_token]"))
        .next()
        .expect("a token");
    input.value().attr("value").unwrap().to_string()
}

/// Posts the form (as a browser on this board does unless `headers` say otherwise).
async fn submit(t: &TestApp, fields: &[(&str, &str)], headers: &[(&str, &str)]) -> Resp {
    post_form(t, "/post-a-job", fields, headers).await
}

async fn count(t: &TestApp) -> usize {
    t.get("/jobs?status=all&per_page=100").await.body["data"]
        .as_array()
        .unwrap()
        .len()
}

async fn a_posted_job_waits_for_approval(b: Backend) {
    let t = TestApp::spawn(b).await;
    let tok = token(&t, None).await;
    let r = submit(
        &t,
        &[
            ("_token", &tok),
            ("title", "Night baker"),
            ("company_name", "Bread & Co"),
            ("description", "We bake.\nEvery night.\n\nApply <soon>"),
            ("job_type", "part-time"),
            ("location", "Lyon"),
            ("is_remote", "on"),
            ("salary_min", "1,800"),
            ("salary_max", "2400"),
            ("salary_currency", "eur"),
            ("salary_period", "monthly"),
            ("how_to_apply_method", "email"),
            ("how_to_apply", "jobs@bread.example"),
            ("contact_email", "hello@bread.example"),
            ("reference_code", ""),
            // Fields the form does not have are not taken: a new job is always pending.
            ("status", "active"),
            ("is_sticky", "on"),
        ],
        &[],
    )
    .await;
    r.expect(303);
    assert_eq!(r.header("location"), Some("/post-a-job?sent=1"));
    let done = t.page("/post-a-job?sent=1").await;
    assert!(done.text.contains("your job was received"), "{}", done.text);
    let listed_by_api = t.get("/jobs?status=pending").await;
    let data = listed_by_api.body["data"].as_array().unwrap();
    assert_eq!(data.len(), 1);
    let id = data[0]["id"].as_str().unwrap().to_string();
    let slug = data[0]["slug"].as_str().unwrap().to_string();
    let stored = t.get(&format!("/jobs/{id}")).await.body["data"].clone();
    assert_eq!(stored["status"], "pending");
    assert_eq!(stored["is_sticky"], false);
    assert_eq!(stored["company_name"], "Bread & Co");
    assert_eq!(
        stored["description"],
        "<p>We bake.<br>Every night.</p><p>Apply &lt;soon&gt;</p>"
    );
    assert_eq!(stored["salary_min"], 1800.0);
    assert_eq!(stored["salary_currency"], "EUR");
    assert_eq!(stored["is_remote"], true);
    // Not on the board until approved.
    assert!(listed(&t.page("/").await.html()).is_empty());
    t.page(&format!("/jobs/{slug}")).await.expect(404);
    t.patch(&format!("/jobs/{id}"), json!({"status": "active"}))
        .await
        .expect(200);
    assert_eq!(
        listed(&t.page("/").await.html()),
        std::slice::from_ref(&slug)
    );
    t.page(&format!("/jobs/{slug}")).await.expect(200);
}

async fn the_form_shows_each_problem_beside_its_field(b: Backend) {
    let t = TestApp::spawn(b).await;
    let tok = token(&t, None).await;
    let fields = [
        ("_token", tok.as_str()),
        ("title", ""),
        ("company_name", "Acme"),
        ("description", "Fine."),
        ("company_website", "javascript:alert(1)"),
        ("contact_email", "not-an-address"),
        ("salary_min", "900"),
        ("salary_max", "100"),
    ];
    let r = submit(&t, &fields, &[]).await;
    r.expect(422);
    // The same problems, word for word, as the API answers for the same body.
    let api = t
        .post(
            "/jobs",
            json!({"company_name": "Acme", "description": "Fine.", "company_website": "javascript:alert(1)",
                   "contact_email": "not-an-address", "salary_min": 900, "salary_max": 100}),
        )
        .await;
    api.expect(422);
    let doc = r.html();
    let mut shown = Vec::new();
    for f in api.body["error"]["details"]["fields"].as_array().unwrap() {
        let name = f["field"].as_str().unwrap();
        let field = doc
            .select(&sel(&format!("#f-{name}")))
            .next()
            .unwrap_or_else(|| panic!("no field {name}"));
        assert_eq!(field.value().attr("aria-invalid"), Some("true"), "{name}");
        let message: String = doc
            .select(&sel(&format!("#e-{name}")))
            .next()
            .unwrap()
            .text()
            .collect();
        assert_eq!(message, f["message"].as_str().unwrap(), "{name}");
        shown.push(name.to_string());
    }
    assert!(shown.contains(&"title".to_string()) && shown.contains(&"contact_email".to_string()));
    // What was typed is kept.
    let company = doc.select(&sel("#f-company_name")).next().unwrap();
    assert_eq!(company.value().attr("value"), Some("Acme"));
    assert_eq!(count(&t).await, 0);
}

async fn refused_submissions_store_nothing(b: Backend) {
    let t = TestApp::spawn(b).await;
    let tok = token(&t, None).await;
    let good = |tok: &str| -> Vec<(String, String)> {
        vec![
            ("_token".into(), tok.into()),
            ("title".into(), "Cook".into()),
            ("company_name".into(), "Diner".into()),
            ("description".into(), "Cook things.".into()),
        ]
    };
    let send = |fields: Vec<(String, String)>, headers: Vec<(&'static str, String)>| {
        let t = &t;
        async move {
            let f: Vec<(&str, &str)> = fields
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            submit(t, &f, &h).await
        }
    };
    // The honeypot.
    let mut trapped = good(&tok);
    trapped.push(("reference_code".into(), "ABC".into()));
    let r = send(trapped, vec![]).await;
    r.expect(400);
    assert!(r.text.contains("was not saved"), "{}", r.text);
    // No token, a wrong token, another board's token.
    let mut none = good(&tok);
    none.remove(0);
    let r = send(none, vec![]).await;
    r.expect(403);
    assert!(r.text.contains("nothing was saved"), "{}", r.text);
    let kept = r.html();
    assert_eq!(
        kept.select(&sel("#f-title"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some("Cook"),
        "what was typed is kept for a second try"
    );
    send(good("AAAA"), vec![]).await.expect(403);
    let other = jobboard_domain::orgs::create_with(t.db(), "Other", Some("other.example.test"))
        .await
        .unwrap();
    let _ = other;
    let foreign_token = token(&t, Some("other.example.test")).await;
    send(good(&foreign_token), vec![]).await.expect(403);
    // Posted from another site (Origin, or Referer without it).
    let r = send(good(&tok), vec![("origin", "https://evil.example".into())]).await;
    r.expect(403);
    assert!(r.text.contains("another website"), "{}", r.text);
    let r = send(good(&tok), vec![("origin", "null".into())]).await;
    r.expect(403);
    // Too large.
    let mut big = good(&tok);
    big.push(("description".into(), "x".repeat(300 * 1024)));
    send(big, vec![]).await.expect(413);
    assert_eq!(count(&t).await, 0);
    // The same form, sent properly, is accepted.
    send(good(&tok), vec![]).await.expect(303);
    assert_eq!(count(&t).await, 1);
}

async fn the_form_limit_counts_per_address(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.form_limit = 2).await;
    let tok = token(&t, None).await;
    let fields = [
        ("_token", tok.as_str()),
        ("title", "Cook"),
        ("company_name", "Diner"),
        ("description", "Cook things."),
    ];
    submit(&t, &fields, &[]).await.expect(303);
    submit(&t, &fields, &[]).await.expect(303);
    let r = submit(&t, &fields, &[]).await;
    r.expect(429);
    assert!(
        r.header("retry-after")
            .is_some_and(|s| s.parse::<u64>().unwrap() >= 1)
    );
    assert!(r.text.contains("Too many forms"), "{}", r.text);
    assert_eq!(count(&t).await, 2);
}

async fn public_posting_can_be_turned_off(b: Backend) {
    let t = TestApp::spawn(b).await;
    let tok = token(&t, None).await;
    let home = t.page("/").await.html();
    assert!(
        home.select(&sel("a[href=\"/post-a-job\"]"))
            .next()
            .is_some()
    );
    jobboard_domain::orgs::update(
        t.db(),
        t.org_id,
        jobboard_domain::Input::new(
            json!({"public_posting": false})
                .as_object()
                .unwrap()
                .clone(),
        ),
    )
    .await
    .unwrap();
    t.page("/post-a-job").await.expect(404);
    let fields = [
        ("_token", tok.as_str()),
        ("title", "Cook"),
        ("company_name", "Diner"),
        ("description", "x"),
    ];
    submit(&t, &fields, &[]).await.expect(404);
    let home = t.page("/").await.html();
    assert!(
        home.select(&sel("a[href=\"/post-a-job\"]"))
            .next()
            .is_none()
    );
    assert_eq!(count(&t).await, 0);
}

async fn apply_redirects_only_to_the_jobs_own_target(b: Backend) {
    let t = TestApp::spawn(b).await;
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(Policy::none())
        .build()
        .unwrap();
    let apply = |slug: String| {
        let (client, base) = (client.clone(), t.base.clone());
        async move {
            Resp::read(
                client
                    .get(format!("{base}/jobs/{slug}/apply"))
                    .header("accept", "text/html")
                    .send()
                    .await
                    .unwrap(),
            )
            .await
        }
    };
    let cases = [
        (
            json!({"title": "Web", "how_to_apply_method": "website", "how_to_apply": "https://acme.example/jobs/1?x=1"}),
            Some("https://acme.example/jobs/1?x=1"),
        ),
        (
            json!({"title": "External", "how_to_apply_method": "form-external", "how_to_apply": "https://forms.example/f"}),
            Some("https://forms.example/f"),
        ),
        (
            json!({"title": "Mail", "how_to_apply_method": "email", "how_to_apply": "jobs@acme.example"}),
            Some("mailto:jobs@acme.example"),
        ),
        (
            json!({"title": "Phone", "how_to_apply": "tel:+44 20 7946 0958"}),
            Some("tel:+44%2020%207946%200958"),
        ),
        (
            json!({"title": "Script", "how_to_apply": "javascript:alert(document.cookie)"}),
            None,
        ),
        (
            json!({"title": "Hosted", "how_to_apply_method": "form"}),
            None,
        ),
        (
            json!({"title": "Letter", "how_to_apply": "Write to us at 1 Main Street"}),
            None,
        ),
    ];
    for (body, target) in cases {
        let slug = job(&t, body.clone()).await;
        let r = apply(slug.clone()).await;
        match target {
            Some(target) => {
                r.expect(303);
                assert_eq!(r.header("location"), Some(target), "{body}");
                assert_eq!(r.header("cache-control"), Some("no-store"));
                // The job page links the redirect, never the target itself.
                let doc = t.page(&format!("/jobs/{slug}")).await.html();
                let a = doc
                    .select(&sel(".apply a.button"))
                    .next()
                    .expect("an apply link");
                assert_eq!(
                    a.value().attr("href"),
                    Some(format!("/jobs/{slug}/apply").as_str())
                );
            }
            None => {
                // No link or address to apply at (or method `form`): the board hosts
                // the application form at the same address (board_apply.rs).
                r.expect(200);
                assert!(
                    r.html()
                        .select(&sel("form[method=post] input[name=email]"))
                        .next()
                        .is_some(),
                    "{body}"
                );
                let doc = t.page(&format!("/jobs/{slug}")).await.html();
                let a = doc
                    .select(&sel(".apply a.button"))
                    .next()
                    .expect("an apply link");
                assert_eq!(
                    a.value().attr("href"),
                    Some(format!("/jobs/{slug}/apply").as_str())
                );
            }
        }
    }
    let expired = job(&t, json!({"title": "Gone", "status": "expired", "how_to_apply_method": "website", "how_to_apply": "https://acme.example/x"})).await;
    apply(expired).await.expect(410);
    let pending = job(&t, json!({"title": "Wait", "status": "pending", "how_to_apply_method": "website", "how_to_apply": "https://acme.example/x"})).await;
    apply(pending).await.expect(404);
    apply("no-such-job".into()).await.expect(404);
}
