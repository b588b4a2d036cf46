//! Jobs: create, read, update, delete, list with filters and search, expiry, events,
//! tenant isolation.

use reqwest::Method;
use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    create_applies_defaults_and_answers_with_meta,
    create_reports_every_bad_field,
    slugs_are_unique_per_organization,
    description_is_sanitised_and_searchable,
    list_defaults_order_and_paging,
    list_filters,
    list_rejects_bad_parameters,
    search_matches_word_prefixes,
    search_never_fails_on_odd_input,
    pending_job_approved_with_patch_appears_in_list,
    patch_updates_fields_and_validates,
    patch_status_moves_emit_events,
    expired_job_leaves_the_list_by_itself,
    concurrent_schedulers_expire_each_job_once,
    delete_removes_the_job,
    delete_of_a_referenced_job_is_a_conflict,
    other_organizations_jobs_are_invisible,
    directly_inserted_jobs_are_listed,
    categories_create_and_list,
    search_lists_sticky_first_then_newest_and_pages,
    filtered_and_search_totals_are_exact,
    searches_and_filters_follow_every_change,
    past_the_index_bounds_lists_stay_exact,
    search_ignores_case_and_accents,
    lists_stay_exact_when_the_index_does_not_fit,
    a_job_committed_late_is_listed_in_its_place,
    a_starting_node_indexes_the_organizations_with_jobs,
    cached_lists_see_every_write,
    a_write_on_another_node_is_seen_at_once,
    a_cached_list_turns_over_when_a_job_expires,
    concurrent_creates_each_commit_with_their_event,
    a_failing_create_leaves_the_rest_of_its_batch,
    concurrent_misses_render_a_list_once,
);

fn job(title: &str) -> Value {
    json!({"title": title, "description": "<p>We build things.</p>", "company_name": "Acme"})
}

async fn create(t: &TestApp, body: Value) -> Value {
    let r = t.post("/jobs", body).await;
    r.expect(201);
    r.body["data"].clone()
}

async fn create_active(t: &TestApp, title: &str, extra: Value) -> String {
    let mut body = job(title);
    body["status"] = json!("active");
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    create(t, body).await["id"].as_str().unwrap().to_string()
}

/// Creates a category and returns its id.
async fn category(t: &TestApp, name: &str) -> String {
    let r = t.post("/categories", json!({ "name": name })).await;
    r.expect(201);
    r.body["data"]["id"].as_str().unwrap().to_string()
}

fn titles(r: &Resp) -> Vec<String> {
    r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["title"].as_str().unwrap().to_string())
        .collect()
}

async fn events(t: &TestApp, org: i64) -> Vec<(String, Value)> {
    jobboard_store::events::list_for_org(t.db(), org)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.event_type, e.data.0))
        .collect()
}

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
    assert_eq!(r.body["meta"]["organization_id"], t.org_id);
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

async fn list_defaults_order_and_paging(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    // Empty list.
    let r = t.get("/jobs").await;
    r.expect(200);
    assert_eq!(r.body["data"], json!([]));
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": 1, "per_page": 20, "total_items": 0, "total_pages": 0, "has_more": false})
    );
    assert_eq!(
        r.body["meta"]["filters"],
        json!({"search": null, "categories": [], "job_types": [], "locations": [],
               "is_remote": null, "status": ["active"]})
    );
    create_active(&t, "Old", json!({})).await;
    create_active(&t, "Sticky old", json!({"is_sticky": true})).await;
    create_active(&t, "Middle", json!({})).await;
    create_active(&t, "Sticky new", json!({"is_sticky": true})).await;
    create_active(
        &t,
        "New",
        json!({"contact_email": "a@b.example", "location": "Paris"}),
    )
    .await;
    create(&t, job("Pending")).await;
    let mut d = job("Draft");
    d["status"] = json!("draft");
    create(&t, d).await;
    create_active(&t, "Past", json!({"expires_at": "2001-01-01T00:00:00Z"})).await;
    create_active(&t, "Future", json!({"expires_at": "2099-01-01T00:00:00Z"})).await;

    let r = t.get("/jobs").await;
    r.expect(200);
    assert_eq!(
        titles(&r),
        ["Sticky new", "Sticky old", "Future", "New", "Middle", "Old"]
    );
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 6);
    // The list fields, exactly.
    let item = &r.body["data"][3];
    let mut keys: Vec<&str> = item
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "company_name",
            "contact_email",
            "description",
            "id",
            "is_remote",
            "job_type",
            "location",
            "slug",
            "status",
            "title"
        ]
    );
    assert_eq!(item["location"], "Paris");
    assert_eq!(item["contact_email"], "a@b.example");
    assert_eq!(item["status"], "active");
    assert_eq!(item["is_remote"], false);

    let r = t.get("/jobs?per_page=4&page=1").await;
    assert_eq!(titles(&r), ["Sticky new", "Sticky old", "Future", "New"]);
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": 1, "per_page": 4, "total_items": 6, "total_pages": 2, "has_more": true})
    );
    let r = t.get("/jobs?per_page=4&page=2").await;
    assert_eq!(titles(&r), ["Middle", "Old"]);
    assert_eq!(r.body["meta"]["pagination"]["has_more"], false);
    let r = t.get("/jobs?per_page=4&page=9").await;
    assert_eq!(r.body["data"], json!([]));
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": 9, "per_page": 4, "total_items": 6, "total_pages": 2, "has_more": false})
    );
    // The status extension.
    let r = t.get("/jobs?status=pending,draft").await;
    assert_eq!(titles(&r), ["Draft", "Pending"]);
    assert_eq!(
        r.body["meta"]["filters"]["status"],
        json!(["pending", "draft"])
    );
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 2);
    let r = t.get("/jobs?status=all").await;
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 8);
    assert_eq!(
        r.body["meta"]["filters"]["status"],
        json!(["pending", "active", "expired", "draft"])
    );
    assert!(!titles(&r).contains(&"Past".to_string()));
    let r = t.get("/jobs?status=expired").await;
    assert_eq!(r.body["data"], json!([]));
    let r = t.get("/jobs?status=draft,active,draft").await;
    assert_eq!(
        r.body["meta"]["filters"]["status"],
        json!(["draft", "active"])
    );
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 7);
}

async fn list_filters(b: Backend) {
    let t = TestApp::spawn(b).await;
    let c1 = category(&t, "Design").await;
    let c2 = category(&t, "Ops").await;
    create_active(&t, "A", json!({"job_type": "full-time", "location": "Berlin, Germany", "is_remote": true, "category_id": c1})).await;
    create_active(
        &t,
        "B",
        json!({"job_type": "part-time", "location": "Paris", "category_id": c2}),
    )
    .await;
    create_active(
        &t,
        "C",
        json!({"job_type": "contract", "location": "50%_off\\town"}),
    )
    .await;
    create_active(&t, "D", json!({})).await;

    let r = t.get("/jobs?job_types=full-time,contract").await;
    assert_eq!(titles(&r), ["C", "A"]);
    assert_eq!(
        r.body["meta"]["filters"]["job_types"],
        json!(["full-time", "contract"])
    );
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 2);
    let r = t.get("/jobs?locations=berlin,PAR").await;
    assert_eq!(titles(&r), ["B", "A"]);
    assert_eq!(
        r.body["meta"]["filters"]["locations"],
        json!(["berlin", "PAR"])
    );
    // LIKE wildcards in a location are literal.
    assert_eq!(titles(&t.get("/jobs?locations=%25").await), ["C"]);
    assert_eq!(titles(&t.get("/jobs?locations=_off%5C").await), ["C"]);
    assert_eq!(
        t.get("/jobs?locations=b_rlin").await.body["data"],
        json!([])
    );
    let r = t.get(&format!("/jobs?categories={c1},{c2}")).await;
    assert_eq!(titles(&r), ["B", "A"]);
    assert_eq!(r.body["meta"]["filters"]["categories"], json!([c1, c2]));
    let r = t.get("/jobs?is_remote=true").await;
    assert_eq!(titles(&r), ["A"]);
    assert_eq!(r.body["meta"]["filters"]["is_remote"], true);
    let r = t.get("/jobs?is_remote=false").await;
    assert_eq!(titles(&r), ["D", "C", "B"]);
    assert_eq!(r.body["meta"]["filters"]["is_remote"], false);
    // Filters combine.
    let r = t
        .get(&format!(
            "/jobs?is_remote=false&categories={c1},{c2}&locations=paris&job_types=part-time"
        ))
        .await;
    assert_eq!(titles(&r), ["B"]);
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 1);
}

async fn list_rejects_bad_parameters(b: Backend) {
    let t = TestApp::spawn(b).await;
    for (q, field) in [
        ("page=0", "page"),
        ("page=x", "page"),
        ("per_page=0", "per_page"),
        ("per_page=101", "per_page"),
        ("job_types=gig", "job_types"),
        ("categories=nope", "categories"),
        ("is_remote=maybe", "is_remote"),
        ("status=live", "status"),
        ("status=all,active", "status"),
        ("sort=title", "sort"),
        ("search=%00", "search"),
    ] {
        let r = t.get(&format!("/jobs?{q}")).await;
        r.expect_error(422, "validation_failed");
        assert_eq!(r.error_fields(), [field], "{q}");
    }
    // Every bad parameter at once.
    let r = t.get("/jobs?page=0&per_page=1000&job_types=x").await;
    assert_eq!(r.error_fields(), ["job_types", "page", "per_page"]);
    // A category of nobody.
    let r = t
        .get(&format!("/jobs?categories={}", uuid::Uuid::now_v7()))
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["categories"]);
}

async fn search_matches_word_prefixes(b: Backend) {
    let t = TestApp::spawn(b).await;
    create_active(
        &t,
        "Senior Rust Engineer",
        json!({"company_name": "Ferrous Systems", "description": "Embedded <em>tooling</em>"}),
    )
    .await;
    create_active(
        &t,
        "Rust Developer",
        json!({"company_name": "Oxide", "description": "Servers and racks"}),
    )
    .await;
    create_active(
        &t,
        "Trust and Safety Analyst",
        json!({"company_name": "Example", "description": "Moderation"}),
    )
    .await;
    let mut p = job("Rustacean intern");
    p["status"] = json!("pending");
    create(&t, p).await;

    let s = |q: &str| {
        let q = q.to_string();
        let t = &t;
        async move { titles(&t.get(&format!("/jobs?search={q}")).await) }
    };
    assert_eq!(s("rust").await, ["Rust Developer", "Senior Rust Engineer"]);
    // Word prefixes, not substrings: "rust" does not match "Trust".
    assert_eq!(s("RU").await, ["Rust Developer", "Senior Rust Engineer"]);
    assert_eq!(s("ust").await, Vec::<String>::new());
    // Every word must match, in any of title, company and description text.
    assert_eq!(s("rust%20ferr").await, ["Senior Rust Engineer"]);
    assert_eq!(s("rust%20tool").await, ["Senior Rust Engineer"]);
    assert_eq!(s("rust%20moderation").await, Vec::<String>::new());
    assert_eq!(s("oxide").await, ["Rust Developer"]);
    assert_eq!(s("safety").await, ["Trust and Safety Analyst"]);
    // Search combines with the status filter.
    assert_eq!(
        titles(&t.get("/jobs?search=rustacean&status=pending").await),
        ["Rustacean intern"]
    );
    let r = t.get("/jobs?search=%20Rust%20").await;
    assert_eq!(r.body["meta"]["filters"]["search"], "Rust");
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 2);
    // Renaming a job re-indexes it.
    let id = t.get("/jobs?search=oxide").await.body["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    t.patch(&format!("/jobs/{id}"), json!({"title": "Go Developer"}))
        .await
        .expect(200);
    assert_eq!(s("rust").await, ["Senior Rust Engineer"]);
    assert_eq!(s("go").await, ["Go Developer"]);
}

async fn search_never_fails_on_odd_input(b: Backend) {
    let t = TestApp::spawn(b).await;
    create_active(&t, "C++ developer", json!({})).await;
    for q in [
        "\"",
        "'",
        "*",
        "rust*",
        "AND",
        "OR NOT",
        "NEAR(a b)",
        "a:b",
        "-x",
        "(",
        ")",
        "^",
        "&|!",
        "\\",
        "%",
        "_",
        "日本語",
        "ा",
        "ÄÖÜ",
        "x'); DROP TABLE jobs; --",
        "col:title",
        "{}",
        "a\u{301}",
        "٣",
        "𝟘",
    ] {
        let enc: String = url_encode(q);
        let r = t.get(&format!("/jobs?search={enc}")).await;
        r.expect(200);
    }
    assert_eq!(
        titles(&t.get("/jobs?search=c%2B%2B").await),
        ["C++ developer"]
    );
    let r = t.get(&format!("/jobs?search={}", "a".repeat(201))).await;
    r.expect_error(422, "validation_failed");
}

fn url_encode(s: &str) -> String {
    s.bytes().map(|b| format!("%{b:02X}")).collect()
}

async fn pending_job_approved_with_patch_appears_in_list(b: Backend) {
    let t = TestApp::spawn(b).await;
    let id = create(&t, job("Night Nurse")).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(t.get("/jobs").await.body["data"], json!([]));
    let r = t
        .patch(&format!("/jobs/{id}"), json!({"status": "active"}))
        .await;
    r.expect(200);
    let d = &r.body["data"];
    assert_eq!(d["status"], "active");
    assert_eq!(d["id"], id.as_str());
    let mut keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "company_name",
            "id",
            "is_remote",
            "location",
            "status",
            "title",
            "updated_at"
        ]
    );
    let r = t.get("/jobs").await;
    assert_eq!(titles(&r), ["Night Nurse"]);
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 1);

    let ev = events(&t, t.org_id).await;
    let names: Vec<&str> = ev.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "job.created",
            "job.updated",
            "job.status_changed",
            "job.approved"
        ]
    );
    assert_eq!(ev[1].1["changed"], json!(["status"]));
    assert_eq!(ev[1].1["status"], "active");
    assert_eq!(ev[1].1["url"], "/jobs/night-nurse-acme");
    assert_eq!(
        ev[2].1,
        json!({"job_id": id, "title": "Night Nurse", "company_name": "Acme",
               "previous_status": "pending", "status": "active"})
    );
    assert_eq!(
        ev[3].1,
        json!({"job_id": id, "title": "Night Nurse", "company_name": "Acme", "status": "active"})
    );
}

async fn patch_updates_fields_and_validates(b: Backend) {
    let t = TestApp::spawn(b).await;
    let id = create_active(&t, "Baker", json!({"salary_min": 100, "salary_max": 200})).await;
    let path = format!("/jobs/{id}");
    let before = t.get(&path).await.body["data"].clone();

    t.patch(&path, json!({}))
        .await
        .expect_error(422, "validation_failed");
    let r = t
        .patch(
            &path,
            json!({"title": "", "description": "", "status": "gone", "is_remote": null, "company_name": null, "typo": 1}),
        )
        .await;
    r.expect_error(422, "validation_failed");
    let mut f = r.error_fields();
    f.sort();
    assert_eq!(
        f,
        [
            "company_name",
            "description",
            "is_remote",
            "status",
            "title",
            "typo"
        ]
    );
    // Cross-field checks use the stored values.
    let r = t.patch(&path, json!({"salary_min": 300})).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["salary_min"]);
    let r = t
        .patch(&path, json!({"category_id": uuid::Uuid::now_v7()}))
        .await;
    assert_eq!(r.error_fields(), ["category_id"]);
    t.patch(
        &format!("/jobs/{}", uuid::Uuid::now_v7()),
        json!({"title": "x"}),
    )
    .await
    .expect_error(404, "not_found");
    t.patch("/jobs/not-a-uuid", json!({"title": "x"}))
        .await
        .expect_error(404, "not_found");
    assert_eq!(
        t.get(&path).await.body["data"],
        before,
        "failed patches change nothing"
    );

    let r = t
        .patch(
            &path,
            json!({"title": "Head Baker", "description": "<i>Bread</i><script>x</script>",
                   "location": "Lyon", "is_remote": true, "salary_max": null,
                   "job_type": "full-time"}),
        )
        .await;
    r.expect(200);
    assert_eq!(r.body["data"]["title"], "Head Baker");
    assert_eq!(r.body["data"]["location"], "Lyon");
    assert_eq!(r.body["data"]["is_remote"], true);
    let after = t.get(&path).await.body["data"].clone();
    assert_eq!(after["description"], "<i>Bread</i>");
    assert_eq!(after["description_text"], "Bread");
    assert_eq!(after["salary_max"], Value::Null);
    assert_eq!(after["salary_min"].as_f64(), Some(100.0));
    assert_eq!(after["slug"], before["slug"], "the slug is stable");
    assert_eq!(after["created_at"], before["created_at"]);
    assert_ne!(after["updated_at"], before["updated_at"]);
    assert_eq!(r.body["data"]["updated_at"], after["updated_at"]);

    let ev = events(&t, t.org_id).await;
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[1].0, "job.updated");
    assert_eq!(
        ev[1].1["changed"],
        json!([
            "title",
            "description",
            "job_type",
            "location",
            "is_remote",
            "salary_max"
        ])
    );
    assert_eq!(ev[1].1["title"], "Head Baker");
    assert_eq!(ev[1].1["location"], "Lyon");

    // A patch that changes nothing writes nothing.
    let r = t.patch(&path, json!({"title": "Head Baker"})).await;
    r.expect(200);
    assert_eq!(r.body["data"]["updated_at"], after["updated_at"]);
    assert_eq!(events(&t, t.org_id).await.len(), 2);
}

async fn patch_status_moves_emit_events(b: Backend) {
    let t = TestApp::spawn(b).await;
    let id = create_active(&t, "Pilot", json!({})).await;
    let path = format!("/jobs/{id}");
    for s in ["draft", "expired", "pending", "active"] {
        t.patch(&path, json!({"status": s})).await.expect(200);
    }
    let ev = events(&t, t.org_id).await;
    let names: Vec<&str> = ev.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "job.created",
            "job.updated",
            "job.status_changed",
            "job.updated",
            "job.status_changed",
            "job.expired",
            "job.updated",
            "job.status_changed",
            "job.updated",
            "job.status_changed",
            "job.approved",
        ]
    );
    let prev: Vec<(&str, &str)> = ev
        .iter()
        .filter(|e| e.0 == "job.status_changed")
        .map(|e| {
            (
                e.1["previous_status"].as_str().unwrap(),
                e.1["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        prev,
        [
            ("active", "draft"),
            ("draft", "expired"),
            ("expired", "pending"),
            ("pending", "active")
        ]
    );
    assert_eq!(
        ev[5].1,
        json!({"job_id": id, "title": "Pilot", "company_name": "Acme", "status": "expired"})
    );
    assert_eq!(titles(&t.get("/jobs").await), ["Pilot"]);
}

async fn expired_job_leaves_the_list_by_itself(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let id = create_active(
        &t,
        "Short gig",
        json!({"expires_at": "2099-01-01T00:00:00Z"}),
    )
    .await;
    create_active(&t, "Long gig", json!({})).await;
    assert_eq!(titles(&t.get("/jobs").await), ["Long gig", "Short gig"]);
    // Its moment passes: it leaves the list at once, before the scheduler has run.
    let past = jobboard_store::Ts::now().plus(chrono::Duration::seconds(-1));
    t.patch(
        &format!("/jobs/{id}"),
        json!({"expires_at": past.to_rfc3339()}),
    )
    .await
    .expect(200);
    let r = t.get("/jobs").await;
    assert_eq!(titles(&r), ["Long gig"]);
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 1);
    // Still stored as active until the scheduler runs; then expired, with its events, once.
    let path = format!("/jobs/{id}");
    assert_eq!(t.get(&path).await.body["data"]["status"], "active");
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 1);
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 0);
    let j = t.get(&path).await.body["data"].clone();
    assert_eq!(j["status"], "expired");
    assert_eq!(titles(&t.get("/jobs?status=expired").await), ["Short gig"]);
    assert_eq!(titles(&t.get("/jobs").await), ["Long gig"]);
    let ev = events(&t, t.org_id).await;
    let names: Vec<&str> = ev.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "job.created",
            "job.created",
            "job.updated",
            "job.status_changed",
            "job.expired"
        ]
    );
    assert_eq!(ev[2].1["changed"], json!(["expires_at"]));
    assert_eq!(
        ev[3].1,
        json!({"job_id": id, "title": "Short gig", "company_name": "Acme",
               "previous_status": "active", "status": "expired"})
    );
    assert_eq!(
        ev[4].1,
        json!({"job_id": id, "title": "Short gig", "company_name": "Acme", "status": "expired"})
    );
}

async fn concurrent_schedulers_expire_each_job_once(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    for i in 0..12 {
        create_active(
            &t,
            &format!("Due {i}"),
            json!({"expires_at": "2001-01-01T00:00:00Z"}),
        )
        .await;
    }
    create_active(&t, "Live", json!({})).await;
    // Several nodes' schedulers running at once (on PostgreSQL, truly concurrently).
    let (a, b2, c) = tokio::join!(
        jobboard::scheduler::tick(&t.app),
        jobboard::scheduler::tick(&t.app),
        jobboard::scheduler::tick(&t.app)
    );
    assert_eq!(a + b2 + c, 12);
    let ev = events(&t, t.org_id).await;
    let expired = ev.iter().filter(|e| e.0 == "job.expired").count();
    let changed = ev.iter().filter(|e| e.0 == "job.status_changed").count();
    assert_eq!((expired, changed), (12, 12));
    let r = t.get("/jobs?status=expired").await;
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 12);
    assert_eq!(titles(&t.get("/jobs").await), ["Live"]);
}

async fn delete_removes_the_job(b: Backend) {
    let t = TestApp::spawn(b).await;
    let id = create_active(&t, "Miner", json!({})).await;
    create_active(&t, "Smith", json!({})).await;
    let path = format!("/jobs/{id}");
    let r = t.delete(&path).await;
    r.expect(200);
    assert_eq!(r.body, json!({"data": {"id": id, "deleted": true}}));
    t.get(&path).await.expect_error(404, "not_found");
    t.delete(&path).await.expect_error(404, "not_found");
    t.delete("/jobs/xyz").await.expect_error(404, "not_found");
    let r = t.get("/jobs").await;
    assert_eq!(titles(&r), ["Smith"]);
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 1);
    assert_eq!(t.get("/jobs?search=miner").await.body["data"], json!([]));
    let ev = events(&t, t.org_id).await;
    assert_eq!(ev.last().unwrap().0, "job.deleted");
    assert_eq!(
        ev.last().unwrap().1,
        json!({"job_id": id, "title": "Miner", "company_name": "Acme", "status": "active"})
    );
}

async fn delete_of_a_referenced_job_is_a_conflict(b: Backend) {
    let t = TestApp::spawn(b).await;
    let id = create_active(&t, "Referenced", json!({})).await;
    // A table of another resource that refers to jobs, as payments do.
    let ddl = match b {
        Backend::Sqlite => "CREATE TABLE job_refs (job_id BLOB NOT NULL REFERENCES jobs(id))",
        Backend::Postgres => "CREATE TABLE job_refs (job_id UUID NOT NULL REFERENCES jobs(id))",
    };
    let job_id: uuid::Uuid = id.parse().unwrap();
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query(ddl).execute(p).await.unwrap();
        sqlx::query("INSERT INTO job_refs (job_id) VALUES ($1)")
            .bind(job_id)
            .execute(p)
            .await
            .unwrap();
    });
    t.delete(&format!("/jobs/{id}"))
        .await
        .expect_error(409, "conflict");
    assert_eq!(titles(&t.get("/jobs").await), ["Referenced"]);
    let ev = events(&t, t.org_id).await;
    assert_eq!(ev.len(), 1, "no job.deleted for a delete that failed");
}

async fn other_organizations_jobs_are_invisible(b: Backend) {
    let t = TestApp::spawn(b).await;
    let (other_org, other) = t.new_org("Other", "*", 1000, 1000).await;
    let r = t
        .req(Method::POST, "/jobs")
        .key(&other)
        .json(json!({"title": "Secret", "description": "x", "company_name": "Them", "status": "active"}))
        .send()
        .await;
    r.expect(201);
    assert_eq!(r.body["meta"]["organization_id"], other_org);
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let cat = t
        .req(Method::POST, "/categories")
        .key(&other)
        .json(json!({"name": "Theirs"}))
        .send()
        .await
        .body["data"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/jobs/{id}");
    t.get(&path).await.expect_error(404, "not_found");
    t.patch(&path, json!({"status": "draft"}))
        .await
        .expect_error(404, "not_found");
    t.delete(&path).await.expect_error(404, "not_found");
    for q in ["", "?status=all", "?search=secret"] {
        let r = t.get(&format!("/jobs{q}")).await;
        assert_eq!(r.body["data"], json!([]), "{q}");
        assert_eq!(r.body["meta"]["pagination"]["total_items"], 0, "{q}");
    }
    let mut body = job("Mine");
    body["category_id"] = json!(cat);
    assert_eq!(t.post("/jobs", body).await.error_fields(), ["category_id"]);
    t.get(&format!("/jobs?categories={cat}"))
        .await
        .expect_error(422, "validation_failed");
    // Their job is untouched and theirs alone.
    let r = t.req(Method::GET, &path).key(&other).send().await;
    r.expect(200);
    assert_eq!(r.body["data"]["status"], "active");
    assert!(events(&t, t.org_id).await.is_empty());
    assert_eq!(events(&t, other_org).await.len(), 1);
}

async fn directly_inserted_jobs_are_listed(b: Backend) {
    let t = TestApp::spawn(b).await;
    let id = t.insert_job(t.org_id, "Inserted Role").await;
    assert!(
        jobboard_domain::jobs::exists(t.db(), t.org_id, id)
            .await
            .unwrap()
    );
    assert!(
        !jobboard_domain::jobs::exists(t.db(), t.org_id + 1, id)
            .await
            .unwrap()
    );
    let r = t.get("/jobs?search=inserted").await;
    assert_eq!(titles(&r), ["Inserted Role"]);
    let r = t.get("/jobs").await;
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 1);
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

async fn search_lists_sticky_first_then_newest_and_pages(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    create_active(&t, "Welder Old", json!({})).await;
    create_active(&t, "Welder Sticky Old", json!({"is_sticky": true})).await;
    create_active(&t, "Welder Middle", json!({})).await;
    create_active(&t, "Welder Sticky New", json!({"is_sticky": true})).await;
    create_active(&t, "Welder New", json!({"is_remote": true})).await;
    create_active(
        &t,
        "Welder Gone",
        json!({"expires_at": "2001-01-01T00:00:00Z"}),
    )
    .await;
    create_active(&t, "Baker", json!({"is_sticky": true})).await;
    create(&t, job("Welder Pending")).await;
    let all = [
        "Welder Sticky New",
        "Welder Sticky Old",
        "Welder New",
        "Welder Middle",
        "Welder Old",
    ];
    let r = t.get("/jobs?search=weld").await;
    assert_eq!(titles(&r), all);
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": 1, "per_page": 20, "total_items": 5, "total_pages": 1, "has_more": false})
    );
    // Every page boundary: across the sticky jobs and after them.
    for per_page in 1..=5 {
        let mut seen = Vec::new();
        for page in 1..=6 {
            let r = t
                .get(&format!(
                    "/jobs?search=weld&per_page={per_page}&page={page}"
                ))
                .await;
            r.expect(200);
            let p = &r.body["meta"]["pagination"];
            assert_eq!(p["total_items"], 5);
            assert_eq!(
                p["has_more"],
                json!(page * per_page < 5),
                "{per_page} {page}"
            );
            seen.extend(titles(&r));
        }
        assert_eq!(seen, all, "per_page {per_page}");
    }
    // With other filters and statuses.
    let r = t.get("/jobs?search=weld&is_remote=true").await;
    assert_eq!(titles(&r), ["Welder New"]);
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 1);
    let r = t.get("/jobs?search=weld&status=all").await;
    assert_eq!(titles(&r)[..2], ["Welder Sticky New", "Welder Sticky Old"]);
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 6);
    let r = t.get("/jobs?search=sticky").await;
    assert_eq!(titles(&r), ["Welder Sticky New", "Welder Sticky Old"]);
    // Sticky flags and titles changed by PATCH, and deletions, are followed.
    let id_of = |r: &Resp, i: usize| r.body["data"][i]["id"].as_str().unwrap().to_string();
    let r = t.get("/jobs?search=weld").await;
    let (sticky_new, sticky_old, old) = (id_of(&r, 0), id_of(&r, 1), id_of(&r, 4));
    t.patch(&format!("/jobs/{sticky_old}"), json!({"is_sticky": false}))
        .await
        .expect(200);
    t.patch(
        &format!("/jobs/{old}"),
        json!({"is_sticky": true, "title": "Welder Promoted"}),
    )
    .await
    .expect(200);
    t.patch(
        &format!("/jobs/{sticky_new}"),
        json!({"title": "Smith Sticky"}),
    )
    .await
    .expect(200);
    let r = t.get("/jobs?search=weld").await;
    assert_eq!(
        titles(&r),
        [
            "Welder Promoted",
            "Welder New",
            "Welder Middle",
            "Welder Sticky Old"
        ]
    );
    assert_eq!(titles(&t.get("/jobs?search=smith").await), ["Smith Sticky"]);
    t.delete(&format!("/jobs/{old}")).await.expect(200);
    let r = t.get("/jobs?search=weld&per_page=1").await;
    assert_eq!(titles(&r), ["Welder New"]);
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 3);
}

/// Stores `n` active jobs titled "Bulk Role", every other one a contract.
async fn insert_bulk(t: &TestApp, n: i64) {
    let now = jobboard_store::Ts::now();
    let sql = match t.db().backend() {
        jobboard_store::Backend::Sqlite => {
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)
             INSERT INTO jobs (id, org_id, title, description, description_text, company_name, slug,
                 job_type, status, created_at, updated_at)
             SELECT randomblob(16), $1, 'Bulk Role', 'bulk', 'bulk', 'Acme', 'bulk-' || i,
                 CASE WHEN i % 2 = 0 THEN 'contract' ELSE 'full-time' END, 'active', $3, $3 FROM n"
        }
        jobboard_store::Backend::Postgres => {
            "INSERT INTO jobs (id, org_id, title, description, description_text, company_name, slug,
                 job_type, status, created_at, updated_at)
             SELECT gen_random_uuid(), $1, 'Bulk Role', 'bulk', 'bulk', 'Acme', 'bulk-' || i,
                 CASE WHEN i % 2 = 0 THEN 'contract' ELSE 'full-time' END, 'active', $3, $3
             FROM generate_series(1, $2::bigint) AS i"
        }
    };
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query(sql).bind(t.org_id).bind(n).bind(now).execute(p).await.unwrap();
    });
}

async fn filtered_and_search_totals_are_exact(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let n = 10_050;
    insert_bulk(&t, n).await;
    create_active(
        &t,
        "Rare Role",
        json!({"job_type": "contract", "location": "Oslo"}),
    )
    .await;
    // The unfiltered list (counters).
    let r = t.get("/jobs").await;
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": 1, "per_page": 20, "total_items": n + 1,
               "total_pages": (n + 1 + 19) / 20, "has_more": true})
    );
    // A search with few matches.
    let r = t.get("/jobs?search=rare").await;
    assert_eq!(titles(&r), ["Rare Role"]);
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": 1, "per_page": 20, "total_items": 1, "total_pages": 1, "has_more": false})
    );
    // A search matching every one of more than ten thousand jobs is counted exactly.
    let r = t.get("/jobs?search=bulk&per_page=100").await;
    r.expect(200);
    assert_eq!(r.body["data"].as_array().unwrap().len(), 100);
    let last = (n + 99) / 100;
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": 1, "per_page": 100, "total_items": n,
               "total_pages": last, "has_more": true})
    );
    // The last page holds the rest, and nothing follows it.
    let r = t
        .get(&format!("/jobs?search=bulk&per_page=100&page={last}"))
        .await;
    assert_eq!(r.body["data"].as_array().unwrap().len(), (n % 100) as usize);
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": last, "per_page": 100, "total_items": n,
               "total_pages": last, "has_more": false})
    );
    let r = t
        .get(&format!("/jobs?search=bulk&per_page=100&page={}", last + 1))
        .await;
    assert_eq!(r.body["data"], json!([]));
    assert_eq!(r.body["meta"]["pagination"]["has_more"], false);
    assert_eq!(r.body["meta"]["pagination"]["total_items"], n);
    // A filter: half the bulk jobs are contracts, and the rare one.
    let r = t.get("/jobs?job_types=contract").await;
    let contracts = n / 2 + 1;
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": 1, "per_page": 20, "total_items": contracts,
               "total_pages": (contracts + 19) / 20, "has_more": true})
    );
    let r = t
        .get("/jobs?search=role&job_types=contract,full-time")
        .await;
    assert_eq!(r.body["meta"]["pagination"]["total_items"], n + 1);
    let r = t.get("/jobs?locations=osl").await;
    assert_eq!(titles(&r), ["Rare Role"]);
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": 1, "per_page": 20, "total_items": 1, "total_pages": 1, "has_more": false})
    );
    let r = t.get("/jobs?job_types=contract&status=pending,draft").await;
    assert_eq!(
        r.body["meta"]["pagination"],
        json!({"current_page": 1, "per_page": 20, "total_items": 0, "total_pages": 0, "has_more": false})
    );
}

/// The titles and total of a list read afresh.
async fn fresh(t: &TestApp, path: &str) -> (Vec<String>, i64) {
    let r = t
        .req(Method::GET, &format!("/jobs?{path}"))
        .header("cache-control", "no-cache")
        .send()
        .await;
    r.expect(200);
    let total = r.body["meta"]["pagination"]["total_items"]
        .as_i64()
        .unwrap();
    (titles(&r), total)
}

/// Every change of what a list filters on (words, job type, location, remoteness,
/// category, status, stickiness) and a deletion move the job between searches and
/// filtered lists at once.
async fn searches_and_filters_follow_every_change(b: Backend) {
    let t = TestApp::spawn(b).await;
    let cat = category(&t, "Kitchen").await;
    let id = create_active(
        &t,
        "Night Chef",
        json!({"job_type": "full-time", "location": "Lyon", "is_remote": false}),
    )
    .await;
    create_active(
        &t,
        "Day Chef",
        json!({"job_type": "contract", "location": "Porto"}),
    )
    .await;
    let path = format!("/jobs/{id}");
    assert_eq!(
        fresh(&t, "search=chef&job_types=full-time").await,
        (vec!["Night Chef".to_string()], 1)
    );
    // Words.
    t.patch(&path, json!({"title": "Night Baker"}))
        .await
        .expect(200);
    assert_eq!(
        fresh(&t, "search=chef").await,
        (vec!["Day Chef".to_string()], 1)
    );
    assert_eq!(
        fresh(&t, "search=bak").await,
        (vec!["Night Baker".to_string()], 1)
    );
    // Job type.
    t.patch(&path, json!({"job_type": "contract"}))
        .await
        .expect(200);
    assert_eq!(fresh(&t, "job_types=full-time").await.1, 0);
    assert_eq!(fresh(&t, "search=night&job_types=contract").await.1, 1);
    // Location, to one no other job has, and away from it.
    t.patch(&path, json!({"location": "Oslo"}))
        .await
        .expect(200);
    assert_eq!(fresh(&t, "locations=lyo").await.1, 0);
    assert_eq!(
        fresh(&t, "locations=osl").await,
        (vec!["Night Baker".to_string()], 1)
    );
    t.patch(&path, json!({"location": null})).await.expect(200);
    assert_eq!(fresh(&t, "locations=osl").await.1, 0);
    // Remote.
    t.patch(&path, json!({"is_remote": true})).await.expect(200);
    assert_eq!(
        fresh(&t, "is_remote=true").await,
        (vec!["Night Baker".to_string()], 1)
    );
    assert_eq!(
        fresh(&t, "is_remote=false").await,
        (vec!["Day Chef".to_string()], 1)
    );
    // Category.
    t.patch(&path, json!({"category_id": cat}))
        .await
        .expect(200);
    assert_eq!(fresh(&t, &format!("categories={cat}")).await.1, 1);
    t.patch(&path, json!({"category_id": null}))
        .await
        .expect(200);
    assert_eq!(fresh(&t, &format!("categories={cat}")).await.1, 0);
    // Stickiness: sticky first, in searches and filters.
    t.patch(&path, json!({"is_sticky": true})).await.expect(200);
    assert_eq!(
        fresh(&t, "search=night%20day&job_types=contract").await,
        (Vec::<String>::new(), 0)
    );
    assert_eq!(
        fresh(&t, "job_types=contract").await,
        (vec!["Night Baker".to_string(), "Day Chef".to_string()], 2)
    );
    // Status.
    t.patch(&path, json!({"status": "draft"})).await.expect(200);
    assert_eq!(
        fresh(&t, "job_types=contract").await,
        (vec!["Day Chef".to_string()], 1)
    );
    assert_eq!(
        fresh(&t, "job_types=contract&status=draft").await,
        (vec!["Night Baker".to_string()], 1)
    );
    // Deletion.
    t.delete(&path).await.expect(200);
    assert_eq!(
        fresh(&t, "job_types=contract&status=all").await,
        (vec!["Day Chef".to_string()], 1)
    );
    assert_eq!(fresh(&t, "search=night&status=all").await.1, 0);
}

/// Accents of Latin letters and case make no difference, in the job or in the search,
/// on either backend.
async fn search_ignores_case_and_accents(b: Backend) {
    let t = TestApp::spawn(b).await;
    create_active(&t, "Café Barista", json!({"company_name": "Straße GmbH"})).await;
    create_active(&t, "Cafeteria Cook", json!({})).await;
    for (q, want) in [
        ("search=cafe", vec!["Cafeteria Cook", "Café Barista"]),
        ("search=CAFÉ", vec!["Cafeteria Cook", "Café Barista"]),
        ("search=café%20barista", vec!["Café Barista"]),
        ("search=strasse", vec!["Café Barista"]),
        ("search=cafés", vec![]),
    ] {
        let (got, total) = fresh(&t, q).await;
        assert_eq!(got, want, "{q}");
        assert_eq!(total, want.len() as i64, "{q}");
    }
}

/// An organization whose index would not fit the node's budget is searched with SQL:
/// the same pages and exact totals, and /metrics shows no index held.
async fn lists_stay_exact_when_the_index_does_not_fit(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.search_index = 1).await;
    let cat = category(&t, "Kitchen").await;
    create_active(
        &t,
        "Night Chef",
        json!({"job_type": "contract", "category_id": cat}),
    )
    .await;
    create_active(
        &t,
        "Day Chef",
        json!({"job_type": "contract", "location": "Lyon"}),
    )
    .await;
    create_active(&t, "Night Nurse", json!({"job_type": "full-time"})).await;
    assert_eq!(
        fresh(&t, "search=night").await,
        (vec!["Night Nurse".to_string(), "Night Chef".to_string()], 2)
    );
    assert_eq!(
        fresh(&t, "search=ch&job_types=contract").await,
        (vec!["Day Chef".to_string(), "Night Chef".to_string()], 2)
    );
    assert_eq!(fresh(&t, &format!("categories={cat}")).await.1, 1);
    assert_eq!(fresh(&t, "locations=ly").await.1, 1);
    let r = t.metrics().await;
    assert_eq!(gauge(&r.text, "jobboard_search_indexes"), 0.0, "{}", r.text);
    assert_eq!(
        gauge(&r.text, "jobboard_search_index_bytes"),
        0.0,
        "{}",
        r.text
    );
}

/// A job written by a transaction that began before others and commits after them (and
/// after lists were answered in between) is listed once it commits, in its `created_at`
/// place: the node's index reads changes by transaction, not in commit order. (SQLite has
/// one writer at a time: there the late writer commits before the next write begins.)
async fn a_job_committed_late_is_listed_in_its_place(b: Backend) {
    let t = TestApp::spawn(b).await;
    create_active(&t, "Early Harbour Pilot", json!({})).await;
    assert_eq!(fresh(&t, "search=harbour").await.1, 1);
    match t.db().writer() {
        jobboard_store::Pool::Postgres(p) => {
            let mut late = p.begin().await.unwrap();
            let id = uuid::Uuid::now_v7();
            sqlx::query(
                "INSERT INTO jobs (id, org_id, title, description, description_text, company_name, slug, status, created_at, updated_at)
                 VALUES ($1, $2, 'Late Harbour Master', 'A job.', 'A job.', 'Acme', $3, 'active', $4, $4)",
            )
            .bind(id)
            .bind(t.org_id)
            .bind(format!("late-{}", id.simple()))
            .bind(jobboard_store::Ts::now())
            .execute(&mut *late)
            .await
            .unwrap();
            create_active(&t, "Harbour Cook", json!({})).await;
            assert_eq!(
                fresh(&t, "search=harbour").await,
                (
                    vec![
                        "Harbour Cook".to_string(),
                        "Early Harbour Pilot".to_string()
                    ],
                    2
                )
            );
            late.commit().await.unwrap();
        }
        jobboard_store::Pool::Sqlite(_) => {
            t.insert_job(t.org_id, "Late Harbour Master").await;
            create_active(&t, "Harbour Cook", json!({})).await;
        }
    }
    assert_eq!(
        fresh(&t, "search=harbour").await,
        (
            vec![
                "Harbour Cook".to_string(),
                "Late Harbour Master".to_string(),
                "Early Harbour Pilot".to_string()
            ],
            3
        )
    );
}

/// A node that starts builds the search index of each organization with jobs before
/// any list asks for it, and its searches then follow writes made through another node.
async fn a_starting_node_indexes_the_organizations_with_jobs(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    create_active(&t, "Harbour Pilot", json!({"job_type": "contract"})).await;
    create_active(&t, "Night Nurse", json!({})).await;
    let mut config = jobboard::config::Config::with_database(&t.database_url);
    config.scheduler = false;
    config.worker = false;
    config.metrics_token = Some(jobboard::config::Secret(METRICS_TOKEN.into()));
    let other = jobboard::server::App::start(config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let running = jobboard::server::spawn(other.clone(), listener).unwrap();
    let base = format!("http://{}", running.addr);
    let client = t.client.clone();
    let metrics = || {
        let req = client
            .get(format!("{base}/metrics"))
            .bearer_auth(METRICS_TOKEN);
        async move { req.send().await.unwrap().text().await.unwrap() }
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let text = metrics().await;
        if gauge(&text, "jobboard_search_indexes") >= 1.0 {
            assert!(gauge(&text, "jobboard_search_index_bytes") > 0.0, "{text}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no index built: {text}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let search = |q: &str| {
        let req = t
            .client
            .get(format!("{base}/api/jobs?{q}"))
            .header("x-api-key", &t.key)
            .header("cache-control", "no-cache");
        async move {
            let v: Value = req.send().await.unwrap().json().await.unwrap();
            v["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| j["title"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(search("search=harb").await, ["Harbour Pilot"]);
    create_active(&t, "Harbour Cook", json!({"job_type": "contract"})).await;
    assert_eq!(
        search("search=harb").await,
        ["Harbour Cook", "Harbour Pilot"]
    );
    assert_eq!(
        search("job_types=contract&search=cook").await,
        ["Harbour Cook"]
    );
}

/// Lists the SQLite index leaves to the general query stay exact: a location filter
/// matching more than 1,000 distinct locations, and more than 1,000 active jobs past
/// their expiry that no scheduler has moved.
async fn past_the_index_bounds_lists_stay_exact(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    insert_bulk(&t, 1_100).await;
    // Every bulk job gets its own location; the first 1,020 are past their expiry.
    let past = jobboard_store::Ts(chrono::Utc::now() - chrono::Duration::minutes(1));
    // Bulk job i (slug `bulk-i`) is row i; contracts are the even ones.
    let sql = "UPDATE jobs SET location = 'Place ' || r.n, \
               expires_at = CASE WHEN r.n <= 1020 THEN $1 ELSE NULL END \
               FROM (SELECT id AS k, CAST(substr(slug, 6) AS INTEGER) AS n FROM jobs \
                     WHERE org_id = $2 AND slug LIKE 'bulk-%') r \
               WHERE jobs.id = r.k";
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query(sql).bind(past).bind(t.org_id).execute(p).await.unwrap();
    });
    create_active(
        &t,
        "Fresh Role",
        json!({"job_type": "contract", "location": "Place 9999"}),
    )
    .await;
    // 80 bulk jobs and the fresh one are live, all in a "Place".
    assert_eq!(fresh(&t, "locations=place").await.1, 81);
    assert_eq!(fresh(&t, "search=bulk").await.1, 80);
    assert_eq!(fresh(&t, "search=role&job_types=contract").await.1, 41);
    let (titles, total) = fresh(&t, "job_types=contract&locations=place%209999").await;
    assert_eq!((titles, total), (vec!["Fresh Role".to_string()], 1));
    // Past their expiry they are listed under no status.
    assert_eq!(fresh(&t, "search=bulk&status=all").await.1, 80);
    // With no job overdue, only the location filter is past the bound.
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query("UPDATE jobs SET expires_at = NULL").execute(p).await.unwrap();
    });
    assert_eq!(fresh(&t, "locations=place").await.1, 1_101);
    assert_eq!(
        fresh(&t, "locations=place&job_types=contract&search=role")
            .await
            .1,
        551
    );
    assert_eq!(fresh(&t, "locations=place%20999").await.1, 2);
}

/// Reads a list twice and checks that the second answer is the same rendering.
async fn read_twice(t: &TestApp, path: &str) -> Resp {
    let first = t.get(path).await;
    first.expect(200);
    let second = t.get(path).await;
    assert_eq!(second.body, first.body);
    assert_eq!(second.header("etag"), first.header("etag"));
    second
}

async fn cached_lists_see_every_write(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    create_active(&t, "First", json!({})).await;
    let r = read_twice(&t, "/jobs").await;
    assert_eq!(titles(&r), ["First"]);
    assert_eq!(r.header("cache-control"), Some("private, no-cache"));
    let etag = r.header("etag").unwrap().to_string();
    assert!(etag.starts_with('"') && etag.ends_with('"'));
    // A conditional read of the current rendering answers 304 without a body.
    let nm = t
        .req(Method::GET, "/jobs")
        .header("if-none-match", &etag)
        .send()
        .await;
    nm.expect(304);
    assert_eq!(nm.header("etag"), Some(etag.as_str()));
    assert!(nm.text.is_empty());
    // Every kind of write is seen by the next read.
    let id = create_active(&t, "Second", json!({})).await;
    let r = read_twice(&t, "/jobs").await;
    assert_eq!(titles(&r), ["Second", "First"]);
    assert_ne!(r.header("etag"), Some(etag.as_str()));
    t.req(Method::GET, "/jobs")
        .header("if-none-match", &etag)
        .send()
        .await
        .expect(200);
    let path = format!("/jobs/{id}");
    t.patch(&path, json!({"title": "Second, renamed"}))
        .await
        .expect(200);
    assert_eq!(
        titles(&read_twice(&t, "/jobs").await),
        ["Second, renamed", "First"]
    );
    assert_eq!(
        titles(&read_twice(&t, "/jobs?search=renamed").await),
        ["Second, renamed"]
    );
    t.patch(&path, json!({"status": "draft"})).await.expect(200);
    assert_eq!(titles(&read_twice(&t, "/jobs").await), ["First"]);
    assert_eq!(
        titles(&read_twice(&t, "/jobs?search=renamed").await),
        Vec::<String>::new()
    );
    t.delete(&path).await.expect(200);
    assert_eq!(
        read_twice(&t, "/jobs?status=all").await.body["meta"]["pagination"]["total_items"],
        1
    );
    // Writes made without the API (here a direct UPDATE) are seen as well: the version
    // is kept by the database itself.
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query("UPDATE jobs SET title = 'Changed in place' WHERE org_id = $1")
            .bind(t.org_id)
            .execute(p)
            .await
            .unwrap();
    });
    assert_eq!(titles(&read_twice(&t, "/jobs").await), ["Changed in place"]);
    let inserted = t.insert_job(t.org_id, "Inserted").await;
    assert_eq!(
        titles(&read_twice(&t, "/jobs").await),
        ["Inserted", "Changed in place"]
    );
    // A category created after a list was cached can be filtered on at once, and a job
    // moved into it shows up in the filtered list.
    let cat = category(&t, "Design").await;
    let filtered = format!("/jobs?categories={cat}");
    assert_eq!(
        titles(&read_twice(&t, &filtered).await),
        Vec::<String>::new()
    );
    t.patch(&format!("/jobs/{inserted}"), json!({"category_id": cat}))
        .await
        .expect(200);
    assert_eq!(titles(&read_twice(&t, &filtered).await), ["Inserted"]);
    // `Cache-Control: no-cache` renders afresh, with the same result.
    let fresh = t
        .req(Method::GET, &filtered)
        .header("cache-control", "no-cache")
        .send()
        .await;
    fresh.expect(200);
    assert_eq!(titles(&fresh), ["Inserted"]);
    // Another organization's writes leave this organization's lists as they are, and its
    // own lists never show this organization's jobs.
    let (_, other_key) = t.new_org("Other", "*", 1_000, 1_000).await;
    t.req(Method::POST, "/jobs")
        .key(&other_key)
        .json(json!({"title": "Elsewhere", "description": "x", "company_name": "B", "status": "active"}))
        .send()
        .await
        .expect(201);
    let theirs = t.req(Method::GET, "/jobs").key(&other_key).send().await;
    assert_eq!(titles(&theirs), ["Elsewhere"]);
    assert_eq!(
        titles(&read_twice(&t, "/jobs").await),
        ["Inserted", "Changed in place"]
    );
}

async fn a_write_on_another_node_is_seen_at_once(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    // A second node on the same database, with its own cache.
    let mut config = jobboard::config::Config::with_database(&t.database_url);
    config.scheduler = false;
    config.worker = false;
    config.metrics_token = Some(jobboard::config::Secret(METRICS_TOKEN.into()));
    let other = jobboard::server::App::start(config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let running = jobboard::server::spawn(other.clone(), listener).unwrap();
    let base = format!("http://{}/api", running.addr);
    let read = |path: &str| {
        let req = t
            .client
            .get(format!("{base}{path}"))
            .header("x-api-key", &t.key);
        async move {
            let r = req.send().await.unwrap();
            assert_eq!(r.status().as_u16(), 200);
            r.json::<Value>().await.unwrap()
        }
    };
    let names = |v: &Value| -> Vec<String> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["title"].as_str().unwrap().to_string())
            .collect()
    };
    let id = create_active(&t, "One", json!({})).await;
    assert_eq!(names(&read("/jobs").await), ["One"]);
    assert_eq!(names(&read("/jobs").await), ["One"]);
    assert!(other.jobs_cache.size().0 >= 1, "the other node cached it");
    // Writes on this node are seen by the other node's next read.
    create_active(&t, "Two", json!({})).await;
    assert_eq!(names(&read("/jobs").await), ["Two", "One"]);
    t.patch(&format!("/jobs/{id}"), json!({"status": "expired"}))
        .await
        .expect(200);
    assert_eq!(names(&read("/jobs").await), ["Two"]);
    assert_eq!(names(&read("/jobs?status=expired").await), ["One"]);
    // And the scheduler's expiry on this node too.
    let past = jobboard_store::Ts::now().plus(chrono::Duration::seconds(-1));
    let two = t.get("/jobs").await.body["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    t.patch(
        &format!("/jobs/{two}"),
        json!({"expires_at": past.to_rfc3339()}),
    )
    .await
    .expect(200);
    assert_eq!(names(&read("/jobs?status=expired").await), ["One"]);
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 1);
    assert_eq!(names(&read("/jobs?status=expired").await), ["Two", "One"]);
}

async fn a_cached_list_turns_over_when_a_job_expires(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let soon = jobboard_store::Ts::now().plus(chrono::Duration::milliseconds(1_000));
    create_active(&t, "Lasting", json!({})).await;
    create_active(&t, "Leaving", json!({"expires_at": soon.to_rfc3339()})).await;
    let before = read_twice(&t, "/jobs").await;
    assert_eq!(titles(&before), ["Leaving", "Lasting"]);
    // No write and no scheduler pass happen in between: only the clock moves past the
    // job's expiry, and the cached rendering must not outlive it.
    let wait = soon.micros() - jobboard_store::Ts::now().micros();
    if wait > 0 {
        tokio::time::sleep(std::time::Duration::from_micros(wait as u64 + 1_000)).await;
    }
    let after = t.get("/jobs").await;
    assert_eq!(titles(&after), ["Lasting"]);
    assert_eq!(after.body["meta"]["pagination"]["total_items"], 1);
    assert_ne!(after.header("etag"), before.header("etag"));
}

async fn concurrent_creates_each_commit_with_their_event(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.worker = false).await;
    // 40 creations at once (on SQLite they are committed in batches), half of them with
    // one title, so slugs collide inside a batch.
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
    let total = |r: &Resp| r.body["meta"]["pagination"]["total_items"].clone();
    assert_eq!(total(&t.get("/jobs").await), 20);
    assert_eq!(total(&t.get("/jobs?status=expired").await), 20);
    assert_eq!(total(&t.get("/jobs?status=all").await), 40);
}

async fn a_failing_create_leaves_the_rest_of_its_batch(b: Backend) {
    use jobboard_domain::jobs::{self as store, Job, JobStatus};
    let t = TestApp::spawn_with(b, |c| c.worker = false).await;
    let fields = |i: usize, category: Option<uuid::Uuid>| Job {
        id: uuid::Uuid::now_v7(),
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
        let f = fields(i, (i == 7).then(uuid::Uuid::new_v4));
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

/// The value of one `/metrics` series line (e.g. `jobboard_cache_stores_total{cache="jobs"}`).
async fn metric(t: &TestApp, series: &str) -> f64 {
    let text = t.metrics().await.text;
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|v| v.trim().parse().ok()))
        .unwrap_or_else(|| panic!("{series} not in /metrics"))
}

async fn concurrent_misses_render_a_list_once(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    for i in 0..30 {
        create_active(&t, &format!("Role {i}"), json!({})).await;
    }
    let stores = r#"jobboard_cache_stores_total{cache="jobs"}"#;
    let hits = r#"jobboard_cache_hits_total{cache="jobs"}"#;
    let (stores_before, hits_before) = (metric(&t, stores).await, metric(&t, hits).await);
    // 24 requests for one list nobody has read yet: one renders, the others wait for it
    // and are answered from the cache.
    let results =
        crate::members::futures_join_all((0..24).map(|_| t.get("/jobs?search=role&per_page=7")))
            .await;
    for r in &results {
        r.expect(200);
        assert_eq!(r.body, results[0].body);
        assert_eq!(r.header("etag"), results[0].header("etag"));
    }
    assert_eq!(results[0].body["data"].as_array().unwrap().len(), 7);
    assert_eq!(metric(&t, stores).await - stores_before, 1.0);
    assert_eq!(metric(&t, hits).await - hits_before, 23.0);
    // After a write the next reads render once more.
    create_active(&t, "Role 30", json!({})).await;
    let results =
        crate::members::futures_join_all((0..8).map(|_| t.get("/jobs?search=role&per_page=7")))
            .await;
    assert!(results.iter().all(|r| titles(r)[0] == "Role 30"));
    assert_eq!(metric(&t, stores).await - stores_before, 2.0);
}
