//! `GET /jobs`: default order and paging, filters, bad parameters, word-prefix search,
//! odd search input, sticky jobs first, and jobs inserted behind the API's back.

use serde_json::json;

use super::*;
use jobboard_domain::OrgId;

use crate::backends;

backends!(
    list_defaults_order_and_paging,
    list_filters,
    list_rejects_bad_parameters,
    search_matches_word_prefixes,
    search_never_fails_on_odd_input,
    directly_inserted_jobs_are_listed,
    search_lists_sticky_first_then_newest_and_pages,
);

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
               "is_remote": null, "salary_min": null, "country": null, "status": ["active"]})
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

async fn directly_inserted_jobs_are_listed(b: Backend) {
    let t = TestApp::spawn(b).await;
    let id = t.insert_job(t.org_id, "Inserted Role").await;
    assert!(
        jobboard_domain::jobs::exists(t.db(), t.org_id, id)
            .await
            .unwrap()
    );
    assert!(
        !jobboard_domain::jobs::exists(t.db(), OrgId(t.org_id.0 + 1), id)
            .await
            .unwrap()
    );
    let r = t.get("/jobs?search=inserted").await;
    assert_eq!(titles(&r), ["Inserted Role"]);
    let r = t.get("/jobs").await;
    assert_eq!(r.body["meta"]["pagination"]["total_items"], 1);
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
