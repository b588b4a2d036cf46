//! Creating jobs and categories: defaults and metadata, every bad field reported, unique
//! slugs, sanitised descriptions, and concurrent creates each committed with their event.

use reqwest::Method;
use serde_json::{Value, json};

use super::*;
use jobboard_domain::{CategoryId, JobId};

use crate::backends;

backends!(
    create_applies_defaults_and_answers_with_meta,
    create_reports_every_bad_field,
    slugs_are_unique_per_organization,
    description_is_sanitised_and_searchable,
    categories_create_and_list,
    concurrent_creates_each_commit_with_their_event,
    a_failing_create_leaves_the_rest_of_its_batch,
);

async fn create_applies_defaults_and_answers_with_meta(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t.post("/jobs", job("Senior Rust Engineer")).await;
    r.expect(201);
    let d = &r.body["data"];
    let id = d["id"].as_str().unwrap();
    assert_eq!(d["title"], "Senior Rust Engineer");
    assert_eq!(d["slug"], "senior-rust-engineer-acme");
    assert_eq!(d["status"], "pending");
    assert_eq!(d["company_logo_url"], Value::Null);
    assert!(d["created_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        d.as_object().unwrap().len(),
        6,
        "creation answers exactly the documented fields: {d}"
    );
    assert_eq!(r.body["meta"]["organization_id"], t.org_id.0);
    assert_eq!(r.body["meta"]["url"], "/jobs/senior-rust-engineer-acme");

    let g = t.get(&format!("/jobs/{id}")).await;
    g.expect(200);
    let j = &g.body["data"];
    for f in [
        "is_remote",
        "is_highlighted",
        "is_sticky",
        "location_restricted",
    ] {
        assert_eq!(j[f], false, "{f}");
    }
    for f in [
        "job_type",
        "location",
        "how_to_apply",
        "how_to_apply_method",
        "category_id",
        "company_website",
        "company_logo_url",
        "salary_min",
        "salary_max",
        "salary_currency",
        "salary_period",
        "contact_email",
        "expires_at",
    ] {
        assert_eq!(j[f], Value::Null, "{f}");
    }
    assert_eq!(j["description"], "<p>We build things.</p>");
    assert_eq!(j["description_text"], "We build things.");
    assert_eq!(j["created_at"], j["updated_at"]);

    // Every creation field is stored and returned.
    let cat = t.post("/categories", json!({"name": "Engineering"})).await;
    let cat_id = cat.body["data"]["id"].as_str().unwrap().to_string();
    let full = json!({
        "title": "Data Engineer", "description": "Pipelines", "company_name": "Beta GmbH",
        "job_type": "contract", "location": "Berlin", "location_restricted": true,
        "is_remote": true, "is_highlighted": true, "is_sticky": true,
        "how_to_apply": "https://beta.example/apply", "how_to_apply_method": "website",
        "category_id": cat_id, "company_website": "https://beta.example",
        "company_logo_url": "https://beta.example/logo.png", "salary_min": 50000,
        "salary_max": 70000.5, "salary_currency": "EUR", "salary_period": "yearly",
        "contact_email": "jobs@beta.example", "expires_at": "2099-01-01T00:00:00Z",
        "status": "draft"
    });
    let r = t.post("/jobs", full.clone()).await;
    r.expect(201);
    assert_eq!(
        r.body["data"]["company_logo_url"],
        "https://beta.example/logo.png"
    );
    let id2 = r.body["data"]["id"].as_str().unwrap();
    let g = t.get(&format!("/jobs/{id2}")).await;
    for (k, v) in full.as_object().unwrap() {
        if k == "salary_min" {
            assert_eq!(g.body["data"][k].as_f64(), Some(50000.0));
        } else {
            assert_eq!(&g.body["data"][k], v, "{k}");
        }
    }

    // On creation, null counts as absent.
    let mut body = job("Nulls");
    for f in ["is_remote", "status", "location", "is_sticky", "salary_min"] {
        body[f] = Value::Null;
    }
    let r = t.post("/jobs", body).await;
    r.expect(201);
    assert_eq!(r.body["data"]["status"], "pending");

    let ev = events(&t, t.org_id).await;
    assert_eq!(ev[0].0, "job.created");
    assert_eq!(
        ev[0].1,
        json!({"job_id": id, "title": "Senior Rust Engineer", "company_name": "Acme",
               "status": "pending", "location": null, "slug": "senior-rust-engineer-acme",
               "url": "/jobs/senior-rust-engineer-acme"})
    );
    assert_eq!(ev.len(), 3);
}

async fn create_reports_every_bad_field(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t
        .post(
            "/jobs",
            json!({
                "title": "", "description": 5, "job_type": "gig", "location_restricted": "no",
                "how_to_apply_method": "fax", "category_id": "nope",
                "company_website": "javascript:alert(1)", "company_logo_url": "/logo.png",
                "salary_min": -1, "salary_currency": "eur", "salary_period": "forever",
                "contact_email": "not-an-email", "expires_at": "tomorrow", "status": "live",
                "typo": 1
            }),
        )
        .await;
    r.expect_error(422, "validation_failed");
    let mut fields = r.error_fields();
    fields.sort();
    let mut want = vec![
        "title",
        "description",
        "company_name",
        "job_type",
        "location_restricted",
        "how_to_apply_method",
        "category_id",
        "company_website",
        "company_logo_url",
        "salary_min",
        "salary_currency",
        "salary_period",
        "contact_email",
        "expires_at",
        "status",
        "typo",
    ];
    want.sort();
    assert_eq!(fields, want);

    // Cross-field and referential checks.
    let mut body = job("X");
    body["salary_min"] = json!(10);
    body["salary_max"] = json!(5);
    body["category_id"] = json!(uuid::Uuid::now_v7());
    let r = t.post("/jobs", body).await;
    r.expect_error(422, "validation_failed");
    let mut fields = r.error_fields();
    fields.sort();
    assert_eq!(fields, ["category_id", "salary_min"]);

    // Limits: title 255, description 100,000 characters; blank title.
    let mut body = job(&"a".repeat(256));
    body["description"] = json!("b".repeat(100_001));
    body["company_name"] = json!("   ");
    let r = t.post("/jobs", body).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["title", "description", "company_name"]);
    // A description that is nothing but unsafe HTML.
    let mut body = job("X");
    body["description"] = json!("<script>alert(1)</script>");
    t.post("/jobs", body)
        .await
        .expect_error(422, "validation_failed");
    // Bodies that are not objects, or not JSON.
    t.req(Method::POST, "/jobs")
        .raw("[1]", Some("application/json"))
        .send()
        .await
        .expect_error(400, "invalid_json");
    t.req(Method::POST, "/jobs")
        .raw("title=x", Some("application/x-www-form-urlencoded"))
        .send()
        .await
        .expect_error(415, "unsupported_media_type");
    assert!(events(&t, t.org_id).await.is_empty());
}

async fn slugs_are_unique_per_organization(b: Backend) {
    let t = TestApp::spawn(b).await;
    let a = create(&t, job("Café Barista")).await;
    let b2 = create(&t, job("Café Barista")).await;
    assert_eq!(a["slug"], "cafe-barista-acme");
    let s = b2["slug"].as_str().unwrap();
    assert!(s.starts_with("cafe-barista-acme-") && s.len() == "cafe-barista-acme-".len() + 6);
    assert!(
        s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
    );
    let r = t
        .post(
            "/jobs",
            json!({"title": "日本語", "description": "x", "company_name": "株式会社"}),
        )
        .await;
    r.expect(201);
    assert_eq!(r.body["data"]["slug"], "job");
    assert_eq!(r.body["meta"]["url"], "/jobs/job");
    // Another organization gets the plain slug.
    let (_, key) = t.new_org("Other", "*", 1000, 1000).await;
    let r = t
        .req(Method::POST, "/jobs")
        .key(&key)
        .json(job("Café Barista"))
        .send()
        .await;
    r.expect(201);
    assert_eq!(r.body["data"]["slug"], "cafe-barista-acme");
}

async fn description_is_sanitised_and_searchable(b: Backend) {
    let t = TestApp::spawn(b).await;
    let mut body = job("Welder");
    body["status"] = json!("active");
    body["description"] = json!(
        "<h2 onmouseover=\"steal()\">Join&nbsp;us</h2><script>alert('x')</script>\
         <a href=\"javascript:alert(1)\">click</a><img src=x onerror=alert(1)><b>Stainless</b> steel"
    );
    let id = create(&t, body).await["id"].as_str().unwrap().to_string();
    let j = t.get(&format!("/jobs/{id}")).await.body["data"].clone();
    let d = j["description"].as_str().unwrap();
    for bad in ["script", "onmouseover", "onerror", "javascript:", "alert"] {
        assert!(!d.contains(bad), "{bad} survived: {d}");
    }
    assert!(d.contains("<b>Stainless</b>"), "{d}");
    assert_eq!(j["description_text"], "Join us click Stainless steel");
    // Tags are not words: the text is what search sees.
    let r = t.get("/jobs?search=stainless").await;
    assert_eq!(titles(&r), ["Welder"]);
    assert_eq!(t.get("/jobs?search=onerror").await.body["data"], json!([]));
    assert_eq!(t.get("/jobs?search=script").await.body["data"], json!([]));
    // The list shows the sanitised description too.
    assert_eq!(r.body["data"][0]["description"], d);
}

async fn categories_create_and_list(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t
        .post("/categories", json!({"name": "Customer Success"}))
        .await;
    r.expect(201);
    assert_eq!(r.body["data"]["slug"], "customer-success");
    t.post(
        "/categories",
        json!({"name": "Again", "slug": "customer-success"}),
    )
    .await
    .expect_error(409, "conflict");
    t.post("/categories", json!({"name": "", "slug": "Bad Slug"}))
        .await
        .expect_error(422, "validation_failed");
    t.post("/categories", json!({"name": "Art", "slug": "art"}))
        .await
        .expect(201);
    let r = t.get("/categories").await;
    r.expect(200);
    let names: Vec<&str> = r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Art", "Customer Success"]);
    assert_eq!(r.body["meta"]["total"], 2);
}

async fn concurrent_creates_each_commit_with_their_event(b: Backend) {
    // Lists are answered by SQL (no room for an in-memory index), so the searches below
    // read the full-text index the batches wrote.
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.search_index = 1;
    })
    .await;
    // 40 creations at once (on SQLite they are committed in batches, each batch's jobs
    // inserted by one statement), half of them with one title, so slugs collide inside a
    // batch.
    let bodies: Vec<Value> = (0..40)
        .map(|i| {
            let title = if i % 2 == 0 {
                "Same Title".to_string()
            } else {
                format!("Role {i}")
            };
            json!({"title": title, "description": "<p>x</p>", "company_name": "Acme", "status": "active"})
        })
        .collect();
    let results =
        crate::members::futures_join_all(bodies.iter().map(|b| t.post("/jobs", b.clone()))).await;
    let mut ids = std::collections::BTreeSet::new();
    let mut slugs = std::collections::BTreeSet::new();
    for r in &results {
        r.expect(201);
        ids.insert(r.body["data"]["id"].as_str().unwrap().to_string());
        slugs.insert(r.body["data"]["slug"].as_str().unwrap().to_string());
    }
    assert_eq!((ids.len(), slugs.len()), (40, 40));
    let listed = t.get("/jobs?per_page=100").await;
    assert_eq!(listed.body["meta"]["pagination"]["total_items"], 40);
    let listed_ids: std::collections::BTreeSet<String> = listed.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed_ids, ids);
    let total = |r: &Resp| r.body["meta"]["pagination"]["total_items"].clone();
    assert_eq!(total(&t.get("/jobs?search=same").await), 20);
    assert_eq!(total(&t.get("/jobs?search=role").await), 20);
    assert_eq!(total(&t.get("/jobs?search=acme").await), 40);
    // Exactly one job.created per job, naming it.
    let ev = events(&t, t.org_id).await;
    assert_eq!(ev.len(), 40);
    let evented: std::collections::BTreeSet<String> = ev
        .iter()
        .map(|(name, data)| {
            assert_eq!(name, "job.created");
            data["job_id"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(evented, ids);
    // Half of them expire at once, through concurrent updates: the totals of every status
    // stay exact (on PostgreSQL they are summed over counter rows that concurrent writers
    // update apart).
    let expiring: Vec<&String> = ids.iter().step_by(2).collect();
    let updates = crate::members::futures_join_all(expiring.iter().map(|id| {
        t.req(Method::PATCH, &format!("/jobs/{id}"))
            .json(json!({"status": "expired"}))
            .send()
    }))
    .await;
    for r in &updates {
        r.expect(200);
    }
    assert_eq!(total(&t.get("/jobs").await), 20);
    assert_eq!(total(&t.get("/jobs?status=expired").await), 20);
    assert_eq!(total(&t.get("/jobs?status=all").await), 40);
}

async fn a_failing_create_leaves_the_rest_of_its_batch(b: Backend) {
    use jobboard_domain::jobs::{self as store, Job, JobStatus};
    let t = TestApp::spawn_with(b, |c| c.worker = false).await;
    let fields = |i: usize, category: Option<CategoryId>| Job {
        id: JobId(uuid::Uuid::now_v7()),
        title: format!("Job {i}"),
        description: "x".into(),
        description_text: "x".into(),
        company_name: "Acme".into(),
        category_id: category,
        status: JobStatus::Active,
        created_at: jobboard_domain::Ts::now(),
        updated_at: jobboard_domain::Ts::now(),
        ..Job::default()
    };
    // One creation names a category that does not exist (its insert fails on the foreign
    // key; the API checks this first, the storage layer must still keep it apart).
    let mut set = tokio::task::JoinSet::new();
    for i in 0..24 {
        let db = t.db().clone();
        let org = t.org_id;
        let f = fields(i, (i == 7).then(|| CategoryId(uuid::Uuid::new_v4())));
        set.spawn(async move { (i, store::create_checked(&db, org, f).await) });
    }
    let mut ok = 0;
    while let Some(joined) = set.join_next().await {
        let (i, r) = joined.unwrap();
        match r {
            Ok(job) => {
                assert_ne!(i, 7);
                assert_eq!(job.title, format!("Job {i}"));
                ok += 1;
            }
            Err(e) => assert_eq!(i, 7, "only the bad creation fails: {e}"),
        }
    }
    assert_eq!(ok, 23);
    let r = t.get("/jobs?per_page=100").await;
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 23);
    assert!(!titles(&r).contains(&"Job 7".to_string()));
    assert_eq!(events(&t, t.org_id).await.len(), 23);
}
