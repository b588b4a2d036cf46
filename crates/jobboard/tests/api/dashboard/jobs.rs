//! The jobs pages: tabs with the pending queue first; approve, return to draft, expire
//! and delete with the events of the API; create and edit with every field and the API's
//! messages beside the fields.

use serde_json::{Value, json};

use super::*;
use crate::backends;

backends!(
    the_pending_queue_comes_first_and_approving_emits_the_api_events,
    drafts_expiry_and_deletion,
    creating_a_job_shows_the_api_messages_beside_the_fields,
    editing_a_job_changes_and_clears_fields,
    searching_and_paging_the_list
);

/// The rows' titles of a jobs page.
fn titles(r: &Resp) -> Vec<String> {
    r.html()
        .select(&sel("table.jobs tbody tr td:first-child a"))
        .map(|a| a.text().collect())
        .collect()
}

async fn the_pending_queue_comes_first_and_approving_emits_the_api_events(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let id = api_job(&t, &t.key, "Pilot").await;
    api_job(&t, &t.key, "Navigator").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let page = ada.get("/dashboard/jobs").await;
    page.expect(200);
    let tabs: Vec<String> = page
        .html()
        .select(&sel("nav.tabs a"))
        .map(|a| a.text().collect())
        .collect();
    assert_eq!(
        tabs,
        [
            "Pending approval (2)",
            "Active (0)",
            "Drafts (0)",
            "Expired (0)",
            "All"
        ]
    );
    assert_eq!(
        text_of(&page, "nav.tabs a[aria-current=page]").as_deref(),
        Some("Pending approval (2)")
    );
    assert_eq!(titles(&page), ["Navigator", "Pilot"]);
    // Every action is a form with a labelled button (keyboard and screen reader).
    let doc = page.html();
    let buttons: Vec<String> = doc
        .select(&sel(&format!(
            "form[action='/dashboard/jobs/{id}/status'] button"
        )))
        .map(|b| b.text().collect())
        .collect();
    assert_eq!(
        buttons,
        ["Approve: Pilot", "Return to draft: Pilot", "Expire: Pilot"]
    );
    // Approve, as PATCH /api/jobs/{id} {"status": "active"} does.
    let before = event_types(&t, t.org_id).await.len();
    let r = ada
        .submit(
            "/dashboard/jobs",
            &format!("/dashboard/jobs/{id}/status"),
            &[("status", "active"), ("back", "pending")],
        )
        .await;
    assert_eq!(
        redirect(&r),
        "/dashboard/jobs?status=pending&notice=approved"
    );
    let events = event_types(&t, t.org_id).await;
    assert_eq!(
        events[before..],
        ["job.updated", "job.status_changed", "job.approved"]
    );
    let all = jobboard_store::events::list_for_org(t.db(), t.org_id)
        .await
        .unwrap();
    let approved = all.iter().find(|e| e.event_type == "job.approved").unwrap();
    assert_eq!(approved.data.0["job_id"], json!(id));
    assert_eq!(approved.data.0["status"], "active");
    let changed = all
        .iter()
        .rfind(|e| e.event_type == "job.status_changed")
        .unwrap();
    assert_eq!(changed.data.0["previous_status"], "pending");
    // The API lists it at once (its list cache sees the write).
    let listed = t.get("/jobs").await;
    listed.expect(200);
    let ids: Vec<&str> = listed.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [id.as_str()]);
    // The queue shows the notice and one job left.
    let after = ada
        .get("/dashboard/jobs?status=pending&notice=approved")
        .await;
    assert_eq!(
        text_of(&after, "[role=status]").as_deref(),
        Some("The job was approved. It is listed on the board.")
    );
    assert_eq!(titles(&after), ["Navigator"]);
    assert_eq!(
        titles(&ada.get("/dashboard/jobs?status=active").await),
        ["Pilot"]
    );
    // A notice is one of the fixed texts: a link cannot put words on the page.
    let forged = ada.get("/dashboard/jobs?notice=%3Cb%3Ehacked").await;
    assert!(forged.html().select(&sel("[role=status]")).next().is_none());
}

async fn drafts_expiry_and_deletion(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let id = api_job(&t, &t.key, "Pilot").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let action = format!("/dashboard/jobs/{id}/status");
    let r = ada
        .submit(
            "/dashboard/jobs",
            &action,
            &[("status", "draft"), ("back", "pending")],
        )
        .await;
    assert_eq!(
        redirect(&r),
        "/dashboard/jobs?status=pending&notice=drafted"
    );
    assert_eq!(
        t.get(&format!("/jobs/{id}")).await.body["data"]["status"],
        "draft"
    );
    // From the job's own page, back to it.
    let r = ada
        .submit(
            &format!("/dashboard/jobs/{id}"),
            &action,
            &[("status", "expired"), ("back", "edit")],
        )
        .await;
    assert_eq!(redirect(&r), format!("/dashboard/jobs/{id}?notice=expired"));
    assert_eq!(
        t.get(&format!("/jobs/{id}")).await.body["data"]["status"],
        "expired"
    );
    let events = event_types(&t, t.org_id).await;
    assert_eq!(
        events,
        [
            "job.created",
            "job.updated",
            "job.status_changed",
            "job.updated",
            "job.status_changed",
            "job.expired"
        ]
    );
    // Delete: asked first, then done.
    let confirm = ada.get(&format!("/dashboard/jobs/{id}/delete")).await;
    confirm.expect(200);
    assert!(
        text_of(&confirm, "main p:nth-of-type(1)")
            .unwrap()
            .contains("Pilot")
    );
    let r = ada
        .submit(
            &format!("/dashboard/jobs/{id}/delete"),
            &format!("/dashboard/jobs/{id}/delete"),
            &[],
        )
        .await;
    assert_eq!(
        redirect(&r),
        "/dashboard/jobs?status=expired&notice=deleted"
    );
    t.get(&format!("/jobs/{id}"))
        .await
        .expect_error(404, "not_found");
    assert_eq!(
        event_types(&t, t.org_id).await.last().unwrap(),
        "job.deleted"
    );
    ada.get(&format!("/dashboard/jobs/{id}")).await.expect(404);
    ada.get("/dashboard/jobs/not-a-uuid").await.expect(404);
    // A method a page does not take is answered as a page too.
    let wrong = ada.get(&action).await;
    wrong.expect(405);
    assert_eq!(wrong.header("allow"), Some("POST"));
    assert_eq!(
        wrong.header("content-type"),
        Some("text/html; charset=utf-8")
    );
}

async fn creating_a_job_shows_the_api_messages_beside_the_fields(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let cat = t
        .post("/categories", json!({"name": "Engineering"}))
        .await
        .body["data"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let form = ada.get("/dashboard/jobs/new").await;
    form.expect(200);
    // Every field of the API is on the form, each with a label.
    let doc = form.html();
    for name in [
        "title",
        "company_name",
        "description",
        "status",
        "job_type",
        "category_id",
        "location",
        "location_restricted",
        "is_remote",
        "is_highlighted",
        "is_sticky",
        "how_to_apply_method",
        "how_to_apply",
        "contact_email",
        "company_website",
        "company_logo_url",
        "salary_min",
        "salary_max",
        "salary_currency",
        "salary_period",
        "expires_at",
    ] {
        assert!(
            doc.select(&sel(&format!("label[for=f-{name}]")))
                .next()
                .is_some(),
            "{name} has no label"
        );
        assert!(
            doc.select(&sel(&format!("[name={name}]#f-{name}")))
                .next()
                .is_some(),
            "{name} has no input"
        );
    }
    assert!(form.text.contains("Engineering"));
    // A bad form: the API's own message beside each field.
    let bad = [
        ("title", ""),
        ("company_name", "Acme"),
        ("description", "<p>Fly.</p>"),
        ("status", "pending"),
        ("company_website", "not a url"),
        ("contact_email", "nobody"),
        ("salary_min", "90000"),
        ("salary_max", "50000"),
        ("salary_currency", "eu"),
        ("how_to_apply_method", "email"),
        ("how_to_apply", "https://example.com/apply"),
    ];
    let r = ada
        .submit("/dashboard/jobs/new", "/dashboard/jobs/new", &bad)
        .await;
    r.expect(422);
    let api = t
        .post(
            "/jobs",
            json!({
                "title": "", "company_name": "Acme", "description": "<p>Fly.</p>",
                "status": "pending", "company_website": "not a url",
                "contact_email": "nobody", "salary_min": 90000, "salary_max": 50000,
                "salary_currency": "eu", "how_to_apply_method": "email",
                "how_to_apply": "https://example.com/apply"
            }),
        )
        .await;
    api.expect(422);
    let api_fields = api.body["error"]["details"]["fields"]
        .as_array()
        .unwrap()
        .clone();
    assert!(api_fields.len() >= 5, "{api_fields:?}");
    let mut seen = std::collections::HashSet::new();
    for f in &api_fields {
        let field = f["field"].as_str().unwrap();
        // The first problem of a field is the one shown beside it.
        if !seen.insert(field) {
            continue;
        }
        let shown = text_of(&r, &format!("#f-{field}-error"));
        assert_eq!(shown.as_deref(), f["message"].as_str(), "{field}");
        let input = r.html();
        let el = input.select(&sel(&format!("#f-{field}"))).next().unwrap();
        assert_eq!(el.value().attr("aria-invalid"), Some("true"), "{field}");
        assert!(
            el.value()
                .attr("aria-describedby")
                .unwrap()
                .contains(&format!("f-{field}-error")),
            "{field}"
        );
    }
    // The typed values are kept.
    assert_eq!(
        r.html()
            .select(&sel("#f-company_website"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some("not a url")
    );
    assert_eq!(event_types(&t, t.org_id).await, Vec::<String>::new());
    // A good form with every field.
    let good = [
        ("title", "Senior Pilot"),
        ("company_name", "Acme Air"),
        ("description", "<p>Fly <script>alert(1)</script>planes.</p>"),
        ("status", "active"),
        ("job_type", "full-time"),
        ("category_id", cat.as_str()),
        ("location", "Berlin"),
        ("location_restricted", "on"),
        ("is_remote", "on"),
        ("is_sticky", "on"),
        ("how_to_apply_method", "website"),
        ("how_to_apply", "https://example.com/apply"),
        ("contact_email", "jobs@example.com"),
        ("company_website", "https://example.com"),
        ("company_logo_url", "https://example.com/logo.png"),
        ("salary_min", "50,000"),
        ("salary_max", "90000"),
        ("salary_currency", "EUR"),
        ("salary_period", "yearly"),
        ("expires_at", "2099-01-31T12:00"),
    ];
    let r = ada
        .submit("/dashboard/jobs/new", "/dashboard/jobs/new", &good)
        .await;
    let location = redirect(&r);
    let id = location
        .strip_prefix("/dashboard/jobs/")
        .and_then(|s| s.strip_suffix("?notice=created"))
        .unwrap()
        .to_string();
    let j = t.get(&format!("/jobs/{id}")).await.body["data"].clone();
    let expect = json!({
        "title": "Senior Pilot", "company_name": "Acme Air", "status": "active",
        "job_type": "full-time", "category_id": cat, "location": "Berlin",
        "location_restricted": true, "is_remote": true, "is_highlighted": false,
        "is_sticky": true, "how_to_apply_method": "website",
        "how_to_apply": "https://example.com/apply", "contact_email": "jobs@example.com",
        "company_website": "https://example.com",
        "company_logo_url": "https://example.com/logo.png", "salary_min": 50000,
        "salary_max": 90000, "salary_currency": "EUR", "salary_period": "yearly",
        "expires_at": "2099-01-31T12:00:00Z"
    });
    for (k, v) in expect.as_object().unwrap() {
        match v.as_f64() {
            Some(n) => assert_eq!(j[k].as_f64(), Some(n), "{k}"),
            None => assert_eq!(&j[k], v, "{k}"),
        }
    }
    assert!(!j["description"].as_str().unwrap().contains("script"));
    assert_eq!(event_types(&t, t.org_id).await, ["job.created"]);
    // Its page shows it, with the link to the board.
    let page = ada.get(&location).await;
    assert_eq!(
        text_of(&page, "[role=status]").as_deref(),
        Some("The job was created.")
    );
    assert!(page.text.contains("see it on the board"));
}

async fn editing_a_job_changes_and_clears_fields(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    let r = t
        .post(
            "/jobs",
            json!({"title": "Pilot", "company_name": "Acme", "description": "<p>Fly.</p>",
                   "location": "Paris", "salary_min": 10, "is_remote": true}),
        )
        .await;
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let path = format!("/dashboard/jobs/{id}");
    let page = ada.get(&path).await;
    page.expect(200);
    let doc = page.html();
    let value = |name: &str| {
        doc.select(&sel(&format!("#f-{name}")))
            .next()
            .unwrap()
            .value()
            .attr("value")
            .map(str::to_string)
    };
    assert_eq!(value("title").as_deref(), Some("Pilot"));
    assert_eq!(value("location").as_deref(), Some("Paris"));
    assert!(doc.select(&sel("#f-is_remote[checked]")).next().is_some());
    // Saving the form unchanged changes nothing and emits nothing.
    let fields_of = |doc: &scraper::Html| -> Vec<(String, String)> {
        let mut out = Vec::new();
        for el in doc.select(&sel(
            "form.job-form input, form.job-form textarea, form.job-form select",
        )) {
            let v = el.value();
            let name = v.attr("name").unwrap().to_string();
            let val = match v.name() {
                "textarea" => el.text().collect(),
                "select" => el
                    .select(&sel("option[selected]"))
                    .next()
                    .and_then(|o| o.value().attr("value"))
                    .unwrap_or("")
                    .to_string(),
                _ if v.attr("type") == Some("checkbox") => {
                    if v.attr("checked").is_some() {
                        "on".into()
                    } else {
                        continue;
                    }
                }
                _ => v.attr("value").unwrap_or("").to_string(),
            };
            out.push((name, val));
        }
        out
    };
    let unchanged = fields_of(&doc);
    let refs: Vec<(&str, &str)> = unchanged
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let r = ada.post(&path, &refs).await;
    assert_eq!(redirect(&r), format!("{path}?notice=saved"));
    assert_eq!(event_types(&t, t.org_id).await, ["job.created"]);
    // Change the title, clear the location and the salary, untick remote.
    let mut changed: Vec<(String, String)> = unchanged
        .into_iter()
        .filter(|(k, _)| k != "is_remote")
        .map(|(k, v)| match k.as_str() {
            "title" => (k, "Chief Pilot".to_string()),
            "location" | "salary_min" => (k, String::new()),
            _ => (k, v),
        })
        .collect();
    changed.retain(|(k, _)| k != "csrf");
    changed.push(("csrf".into(), csrf_of(&page)));
    let refs: Vec<(&str, &str)> = changed
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    redirect(&ada.post(&path, &refs).await);
    let j = t.get(&format!("/jobs/{id}")).await.body["data"].clone();
    assert_eq!(j["title"], "Chief Pilot");
    assert_eq!(j["location"], Value::Null);
    assert_eq!(j["salary_min"], Value::Null);
    assert_eq!(j["is_remote"], false);
    let all = jobboard_store::events::list_for_org(t.db(), t.org_id)
        .await
        .unwrap();
    let updated = &all.last().unwrap().data.0;
    assert_eq!(all.last().unwrap().event_type, "job.updated");
    let mut fields: Vec<&str> = updated["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    fields.sort_unstable();
    assert_eq!(fields, ["is_remote", "location", "salary_min", "title"]);
    // A cleared title is refused beside the field, as PATCH refuses "".
    let mut blank = changed.clone();
    for (k, v) in &mut blank {
        if k == "title" {
            v.clear();
        }
    }
    let refs: Vec<(&str, &str)> = blank
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let r = ada.post(&path, &refs).await;
    r.expect(422);
    let api = t.patch(&format!("/jobs/{id}"), json!({"title": ""})).await;
    assert_eq!(
        text_of(&r, "#f-title-error").as_deref(),
        api.body["error"]["details"]["fields"][0]["message"].as_str()
    );
}

async fn searching_and_paging_the_list(b: Backend) {
    let t = TestApp::spawn(b).await;
    add_user(&t, t.org_id, "ada@example.com").await;
    for i in 0..27 {
        api_job(&t, &t.key, &format!("Role {i:02}")).await;
    }
    api_job(&t, &t.key, "Astronaut").await;
    let ada = Browser::signed_in(&t, "ada@example.com").await;
    let first = ada.get("/dashboard/jobs").await;
    assert_eq!(titles(&first).len(), 25);
    assert!(first.text.contains("28 jobs, page 1 of 2"));
    let next = first
        .html()
        .select(&sel("nav.pagination a[rel=next]"))
        .next()
        .unwrap()
        .value()
        .attr("href")
        .unwrap()
        .to_string();
    assert_eq!(next, "/dashboard/jobs?status=pending&page=2");
    assert_eq!(titles(&ada.get(&next).await).len(), 3);
    let found = ada.get("/dashboard/jobs?status=pending&search=astro").await;
    assert_eq!(titles(&found), ["Astronaut"]);
    let none = ada.get("/dashboard/jobs?status=active&search=astro").await;
    assert!(titles(&none).is_empty());
    assert!(text_of(&none, ".empty").unwrap().contains("astro"));
}
