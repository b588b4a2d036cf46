//! An employer's jobs from their account: post (pending or live as the organization
//! says), edit, close, renew, the counts, the applications and their CSV; another
//! member's jobs are 404 everywhere; the API's `owner_user_id`.

use super::*;
use crate::backends;

backends!(
    an_employer_posts_edits_closes_and_renews,
    trusted_members_post_live_jobs,
    another_members_jobs_are_not_found,
    employers_read_their_applications_and_csv,
    the_api_reads_and_writes_the_owner,
);

const JOB: &[(&str, &str)] = &[
    ("title", "Head baker"),
    ("description", "Bake bread.\n\nEarly mornings."),
    ("company_name", "Crumbs Ltd"),
    ("how_to_apply_method", "form"),
    ("salary_currency", " eur "),
];

/// Posts [`JOB`] (with `extra`) from the member's form; the answer.
async fn post_job(b: &Browser<'_>, extra: &[(&str, &str)]) -> Resp {
    let token = input(&b.get("/account/jobs/new").await, "csrf");
    let mut fields: Vec<(&str, &str)> = JOB.to_vec();
    fields.extend_from_slice(extra);
    fields.push(("csrf", &token));
    b.post("/account/jobs/new", &fields).await
}

/// The member's jobs through the API (every status), as `[(id, status)]`.
async fn owned(t: &TestApp, member: &str) -> Vec<(String, String)> {
    let r = t
        .get("/jobs?status=pending,active,expired,draft&per_page=100")
        .await;
    r.expect(200);
    let mut out = Vec::new();
    for j in r.body["data"].as_array().unwrap() {
        let id = j["id"].as_str().unwrap();
        let full = t.get(&format!("/jobs/{id}")).await;
        if full.body["data"]["owner_user_id"] == member {
            out.push((
                id.to_string(),
                full.body["data"]["status"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

async fn an_employer_posts_edits_closes_and_renews(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    let id = member(&t, "boss@example.com", "employer", "approved").await;
    let m = signed_in(&t, &sink, "boss@example.com", None).await;
    // The form is the job model's, for the member's door: no staff-only field, and the
    // board's own application form is offered (the member reads the applications).
    let form = m.get("/account/jobs/new").await;
    form.expect(200);
    let doc = form.html();
    assert!(doc.select(&sel("[name=status]")).next().is_none());
    assert!(doc.select(&sel("[name=owner_user_id]")).next().is_none());
    assert!(doc.select(&sel("option[value=form]")).next().is_some());
    let r = post_job(&m, &[]).await;
    r.expect(303);
    let jobs = owned(&t, &id).await;
    assert_eq!(jobs.len(), 1);
    let (job, status) = &jobs[0];
    assert_eq!(status, "pending", "members' jobs wait for approval");
    let stored = t.get(&format!("/jobs/{job}")).await;
    assert_eq!(stored.body["data"]["salary_currency"], "EUR");
    assert!(
        stored.body["data"]["description"]
            .as_str()
            .unwrap()
            .contains("<p>Early mornings.</p>")
    );
    // Staff approve it; the member's list shows it live.
    t.patch(&format!("/jobs/{job}"), json!({"status": "active"}))
        .await
        .expect(200);
    let list = m.get("/account/jobs").await;
    list.expect(200);
    let row = list.html();
    let status_text: String = row
        .select(&sel(&format!("tr[data-job=\"{job}\"] .status")))
        .next()
        .unwrap()
        .text()
        .collect();
    assert_eq!(status_text, "active");
    // An edit of a live job sends it back for approval.
    let token = input(&m.get(&format!("/account/jobs/{job}/edit")).await, "csrf");
    let mut fields: Vec<(&str, &str)> = JOB.to_vec();
    fields.retain(|(k, _)| *k != "title");
    fields.push(("title", "Head baker (nights)"));
    fields.push(("csrf", &token));
    m.post(&format!("/account/jobs/{job}/edit"), &fields)
        .await
        .expect(303);
    let stored = t.get(&format!("/jobs/{job}")).await;
    assert_eq!(stored.body["data"]["title"], "Head baker (nights)");
    assert_eq!(stored.body["data"]["status"], "pending");
    // A refused edit shows the problem beside the field and changes nothing.
    let r = m
        .post(
            &format!("/account/jobs/{job}/edit"),
            &[
                ("csrf", token.as_str()),
                ("title", ""),
                ("description", "x"),
                ("company_name", "y"),
            ],
        )
        .await;
    r.expect(422);
    assert!(r.html().select(&sel("#e-title")).next().is_some());
    assert_eq!(
        t.get(&format!("/jobs/{job}")).await.body["data"]["title"],
        "Head baker (nights)"
    );
    // Close: expired, with job.expired.
    let before = events_named(&t, "job.expired").await;
    m.post(
        &format!("/account/jobs/{job}/close"),
        &[("csrf", token.as_str())],
    )
    .await
    .expect(303);
    assert_eq!(
        t.get(&format!("/jobs/{job}")).await.body["data"]["status"],
        "expired"
    );
    assert_eq!(events_named(&t, "job.expired").await, before + 1);
    // Renew: pending again, expiring 30 days on.
    m.post(
        &format!("/account/jobs/{job}/renew"),
        &[("csrf", token.as_str())],
    )
    .await
    .expect(303);
    let renewed = t.get(&format!("/jobs/{job}")).await;
    assert_eq!(renewed.body["data"]["status"], "pending");
    let expires =
        jobboard_store::Ts::parse(renewed.body["data"]["expires_at"].as_str().unwrap()).unwrap();
    let days = (expires.micros() - t.app.clock.now().micros()) / 86_400_000_000;
    assert_eq!(
        days, 29,
        "expires 30 days after the renewal (less the seconds since)"
    );
    // Renewing a job that is not expired is refused.
    m.post(
        &format!("/account/jobs/{job}/renew"),
        &[("csrf", token.as_str())],
    )
    .await
    .expect(409);
    // A form without the session's token changes nothing.
    m.post(&format!("/account/jobs/{job}/close"), &[("csrf", "forged")])
        .await
        .expect(403);
    assert_eq!(
        t.get(&format!("/jobs/{job}")).await.body["data"]["status"],
        "pending"
    );
}

async fn trusted_members_post_live_jobs(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "active").await;
    let id = member(&t, "trusted@example.com", "business", "approved").await;
    let m = signed_in(&t, &sink, "trusted@example.com", None).await;
    post_job(&m, &[]).await.expect(303);
    let jobs = owned(&t, &id).await;
    assert_eq!(jobs[0].1, "active");
    // Job seekers have no jobs here.
    member(&t, "seeker@example.com", "jobseeker", "approved").await;
    let s = signed_in(&t, &sink, "seeker@example.com", None).await;
    s.get("/account/jobs").await.expect(404);
    s.get("/account/jobs/new").await.expect(404);
}

async fn another_members_jobs_are_not_found(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    let a = member(&t, "a@example.com", "employer", "approved").await;
    member(&t, "b@example.com", "employer", "approved").await;
    let ma = signed_in(&t, &sink, "a@example.com", None).await;
    let mb = signed_in(&t, &sink, "b@example.com", None).await;
    post_job(&ma, &[]).await.expect(303);
    let job = owned(&t, &a).await[0].0.clone();
    // A job of the organization without an owner, too.
    let api_job = t
        .post(
            "/jobs",
            json!({"title": "Staff job", "description": "x", "company_name": "Org"}),
        )
        .await;
    let api_job = api_job.body["data"]["id"].as_str().unwrap().to_string();
    let token = input(&mb.get("/account").await, "csrf");
    for id in [&job, &api_job] {
        mb.get(&format!("/account/jobs/{id}/edit"))
            .await
            .expect(404);
        mb.get(&format!("/account/jobs/{id}/applications"))
            .await
            .expect(404);
        mb.get(&format!("/account/jobs/{id}/applications.csv"))
            .await
            .expect(404);
        for action in ["close", "renew", "edit"] {
            mb.post(
                &format!("/account/jobs/{id}/{action}"),
                &[("csrf", token.as_str()), ("title", "Taken")],
            )
            .await
            .expect(404);
        }
    }
    assert_eq!(
        t.get(&format!("/jobs/{job}")).await.body["data"]["title"],
        "Head baker"
    );
    assert_eq!(
        t.get(&format!("/jobs/{job}")).await.body["data"]["status"],
        "pending"
    );
    let list = mb.get("/account/jobs").await;
    assert!(!list.text.contains(&job));
}

async fn employers_read_their_applications_and_csv(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "active").await;
    let id = member(&t, "hire@example.com", "employer", "approved").await;
    let m = signed_in(&t, &sink, "hire@example.com", None).await;
    post_job(&m, &[]).await.expect(303);
    let job = owned(&t, &id).await[0].0.clone();
    for (name, email, letter) in [
        ("Ann", "ann@example.com", "=HYPERLINK(\"x\")"),
        ("Ben", "ben@example.com", "Hello, I bake."),
    ] {
        t.post(
            &format!("/jobs/{job}/applications"),
            json!({"name": name, "email": email, "cover_letter": letter}),
        )
        .await
        .expect(201);
    }
    let page = m.get(&format!("/account/jobs/{job}/applications")).await;
    page.expect(200);
    assert_eq!(page.html().select(&sel("tr.application")).count(), 2);
    let list = m.get("/account/jobs").await;
    let apps: String = list
        .html()
        .select(&sel(&format!("tr[data-job=\"{job}\"] .applications")))
        .next()
        .unwrap()
        .text()
        .collect();
    assert_eq!(apps.trim(), "2");
    let csv = m
        .get(&format!("/account/jobs/{job}/applications.csv"))
        .await;
    csv.expect(200);
    assert!(csv.header("content-type").unwrap().starts_with("text/csv"));
    let lines: Vec<&str> = csv.text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("id,created_at,name,email"));
    assert!(
        csv.text.contains("\"'=HYPERLINK(\"\"x\"\")\""),
        "formulas are defused: {}",
        csv.text
    );
    assert!(csv.text.contains("\"Hello, I bake.\""));
}

async fn the_api_reads_and_writes_the_owner(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    let id = member(&t, "owner@example.com", "employer", "approved").await;
    let r = t
        .post(
            "/jobs",
            json!({"title": "Owned", "description": "x", "company_name": "Org", "owner_user_id": id}),
        )
        .await;
    r.expect(201);
    let job = r.body["data"]["id"].as_str().unwrap().to_string();
    let stored = t.get(&format!("/jobs/{job}")).await;
    assert_eq!(stored.body["data"]["owner_user_id"], id.as_str());
    // The owner sees it in their account.
    let m = signed_in(&t, &sink, "owner@example.com", None).await;
    assert!(m.get("/account/jobs").await.text.contains(&job));
    // An id that is no member of the organization is refused on its field.
    let r = t
        .post(
            "/jobs",
            json!({"title": "x", "description": "x", "company_name": "x",
                   "owner_user_id": uuid::Uuid::now_v7().to_string()}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["owner_user_id"]);
    // null clears it.
    let r = t
        .patch(&format!("/jobs/{job}"), json!({"owner_user_id": null}))
        .await;
    r.expect(200);
    assert!(r.body["data"]["owner_user_id"].is_null());
}
