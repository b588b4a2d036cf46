//! A job seeker's saved jobs, and a member's data: the export holds exactly their
//! records, deletion removes exactly what docs/members.md lists (from the account and from
//! the command line) and leaves everyone else's.

use super::*;
use crate::backends;

backends!(
    job_seekers_save_and_remove_jobs,
    the_export_holds_exactly_the_members_records,
    deletion_removes_exactly_the_listed_records,
    staff_erase_a_member_from_the_command_line,
);

/// A live job through the API; (id, slug).
async fn live_job(t: &TestApp, title: &str) -> (String, String) {
    let r = t
        .post(
            "/jobs",
            json!({"title": title, "description": "x", "company_name": "Acme", "status": "active"}),
        )
        .await;
    r.expect(201);
    (
        r.body["data"]["id"].as_str().unwrap().to_string(),
        r.body["data"]["slug"].as_str().unwrap().to_string(),
    )
}

async fn save(m: &Browser<'_>, slug: &str) -> Resp {
    let page = m.get(&format!("/jobs/{slug}/save")).await;
    page.expect(200);
    let token = input(&page, "csrf");
    m.post(&format!("/jobs/{slug}/save"), &[("csrf", token.as_str())])
        .await
}

async fn job_seekers_save_and_remove_jobs(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    member(&t, "seeker@example.com", "jobseeker", "approved").await;
    let (id, slug) = live_job(&t, "Rust developer").await;
    // The job's page links to saving it; signed out, that asks to sign in.
    let page = t.page(&format!("/jobs/{slug}")).await;
    assert!(page.text.contains(&format!("/jobs/{slug}/save")));
    Browser::new(&t)
        .get(&format!("/jobs/{slug}/save"))
        .await
        .expect(303);
    let m = signed_in(&t, &sink, "seeker@example.com", None).await;
    save(&m, &slug).await.expect(303);
    save(&m, &slug).await.expect(303);
    let saved = m.get("/account/saved").await;
    saved.expect(200);
    assert_eq!(saved.html().select(&sel("li.saved-job")).count(), 1);
    assert!(saved.text.contains("Rust developer"));
    let token = input(&saved, "csrf");
    m.post(
        &format!("/account/saved/{id}/remove"),
        &[("csrf", token.as_str())],
    )
    .await
    .expect(303);
    assert_eq!(
        m.get("/account/saved")
            .await
            .html()
            .select(&sel("li.saved-job"))
            .count(),
        0
    );
    // A job that is not listed cannot be saved.
    let r = t
        .post(
            "/jobs",
            json!({"title": "Hidden", "description": "x", "company_name": "Acme"}),
        )
        .await;
    let hidden = r.body["data"]["slug"].as_str().unwrap().to_string();
    m.get(&format!("/jobs/{hidden}/save")).await.expect(404);
}

/// Everything a member leaves behind: an owned job, an application and an alert of
/// their address, an access record and a payment. Returns the member's id and the slug
/// of its job.
async fn records_of(t: &TestApp, email: &str) -> (String, String) {
    let r = t
        .post(
            "/plans",
            json!({"name": format!("Plan {email}"), "price": 10, "currency": "EUR",
                   "interval": "month", "jobsIncluded": 3}),
        )
        .await;
    r.expect(201);
    let plan = r.body["data"]["id"].as_str().unwrap().to_string();
    let (job, slug) = live_job(t, &format!("Job of {email}")).await;
    let r = t
        .post(
            "/members/sync",
            json!({"email": email, "role": "both",
                   "access": {"planId": plan},
                   "payment": {"jobId": job, "amount": 10, "currency": "EUR", "status": "succeeded"}}),
        )
        .await;
    r.expect(201);
    let id = r.body["data"]["member"]["id"].as_str().unwrap().to_string();
    t.patch(&format!("/jobs/{job}"), json!({"owner_user_id": id}))
        .await
        .expect(200);
    t.post(
        &format!("/jobs/{job}/applications"),
        json!({"name": "Me", "email": email.to_ascii_uppercase()}),
    )
    .await
    .expect(201);
    let Value::Object(body) =
        json!({"email": email, "frequency": "weekly", "query": "search=rust"})
    else {
        unreachable!()
    };
    jobboard_domain::alerts::subscribe(t.db(), t.org_id, Input::new(body), t.app.clock.now())
        .await
        .unwrap();
    (id, slug)
}

/// The ids of the JSON array `v`.
fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap().to_string())
        .collect()
}

async fn the_export_holds_exactly_the_members_records(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    let (mine, slug) = records_of(&t, "me@example.com").await;
    let (theirs, _) = records_of(&t, "them@example.com").await;
    let m = signed_in(&t, &sink, "me@example.com", None).await;
    save(&m, &slug).await.expect(303);
    let r = m.get("/account/export").await;
    r.expect(200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert!(
        r.header("content-disposition")
            .unwrap()
            .starts_with("attachment")
    );
    let doc: Value = serde_json::from_str(&r.text).unwrap();
    assert_eq!(doc["format"], "jobboard.member-export.v1");
    assert_eq!(doc["member"]["id"], mine.as_str());
    assert_eq!(doc["organization"]["id"], t.org_id.0);
    for (list, n) in [
        ("jobs", 1),
        ("applications", 1),
        ("alerts", 1),
        ("saved_jobs", 1),
        ("access", 1),
        ("payments", 1),
    ] {
        assert_eq!(
            doc[list].as_array().unwrap().len(),
            n,
            "{list}: {}",
            doc[list]
        );
    }
    assert_eq!(doc["jobs"][0]["owner_user_id"], mine.as_str());
    assert_eq!(doc["applications"][0]["email"], "ME@EXAMPLE.COM");
    assert_eq!(doc["alerts"][0]["email"], "me@example.com");
    assert_eq!(doc["access"][0]["userId"], mine.as_str());
    assert_eq!(doc["payments"][0]["userId"], mine.as_str());
    // Nothing of the other member.
    assert!(!r.text.contains(&theirs) && !r.text.contains("them@example.com"));
}

async fn deletion_removes_exactly_the_listed_records(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    let rx = receiver_of(&t, "user.deleted").await;
    let (mine, slug) = records_of(&t, "me@example.com").await;
    let (theirs, their_slug) = records_of(&t, "them@example.com").await;
    let m = signed_in(&t, &sink, "me@example.com", None).await;
    save(&m, &slug).await.expect(303);
    let other = signed_in(&t, &sink, "them@example.com", None).await;
    save(&other, &their_slug).await.expect(303);
    save(&other, &slug).await.expect(303);
    let before = t.get("/jobs?status=active&per_page=100").await;
    // Without the confirmation, nothing goes.
    let page = m.get("/account/delete").await;
    page.expect(200);
    let token = input(&page, "csrf");
    m.post("/account/delete", &[("csrf", token.as_str())])
        .await
        .expect(422);
    t.get("/members/me@example.com").await.expect(200);
    let r = m
        .post(
            "/account/delete",
            &[("csrf", token.as_str()), ("confirm", "on")],
        )
        .await;
    r.expect(200);
    assert!(r.header("set-cookie").unwrap().contains("Max-Age=0"));
    // The member and its session are gone.
    t.get("/members/me@example.com").await.expect(404);
    m.get("/account").await.expect(303);
    assert_eq!(events_named(&t, "user.deleted").await, 1);
    assert_eq!(delivered(&t, &rx).await, ["user.deleted"], "delivered once");
    // Its applications and alerts went; its job stays without an owner, its payment
    // without a member.
    let apps = t.get("/applications?per_page=100").await;
    let emails: Vec<String> = apps.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["email"].as_str().unwrap().to_ascii_lowercase())
        .collect();
    assert_eq!(emails, ["them@example.com"]);
    let alerts = t.get("/alerts").await;
    let alert_emails: Vec<&str> = alerts.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["email"].as_str().unwrap())
        .collect();
    assert_eq!(alert_emails, ["them@example.com"]);
    let after = t.get("/jobs?status=active&per_page=100").await;
    assert_eq!(
        ids(&after.body["data"]),
        ids(&before.body["data"]),
        "every job stays"
    );
    for j in after.body["data"].as_array().unwrap() {
        assert_ne!(j["owner_user_id"], mine.as_str());
    }
    let payments = jobboard_domain::members::payments(t.db(), t.org_id)
        .await
        .unwrap();
    assert_eq!(payments.len(), 2);
    assert_eq!(payments.iter().filter(|p| p.user_id.is_none()).count(), 1);
    // The other member keeps everything, their saved jobs included.
    let r = t.get("/members/them@example.com").await;
    r.expect(200);
    assert_eq!(r.body["data"]["member"]["id"], theirs.as_str());
    assert_eq!(r.body["data"]["subscriptions"].as_array().unwrap().len(), 1);
    let saved = other.get("/account/saved").await;
    assert_eq!(saved.html().select(&sel("li.saved-job")).count(), 2);
}

async fn staff_erase_a_member_from_the_command_line(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    records_of(&t, "mailed@example.com").await;
    records_of(&t, "stays@example.com").await;
    let m = signed_in(&t, &sink, "mailed@example.com", None).await;
    let org = t.org_id.0.to_string();
    let (ok, out, err) = run_cli(
        &[
            "members",
            "erase",
            "--org",
            &org,
            "--email",
            "MAILED@example.com",
        ],
        &t.database_url,
    );
    assert!(ok, "{out}{err}");
    assert!(out.contains("1 applications and 1 job alerts"), "{out}");
    t.get("/members/mailed@example.com").await.expect(404);
    m.get("/account").await.expect(303);
    t.get("/members/stays@example.com").await.expect(200);
    assert_eq!(events_named(&t, "user.deleted").await, 1);
    // An address nobody has is an error, and nothing changes.
    let (ok, _, err) = run_cli(
        &[
            "members",
            "erase",
            "--org",
            &org,
            "--email",
            "nobody@example.com",
        ],
        &t.database_url,
    );
    assert!(!ok);
    assert!(err.contains("member"), "{err}");
}
