//! The public board's pages: the list equals the API's for the same query, job pages
//! answer 200, 410 or 404 as the job's state says, each host sees its own board, and the
//! structured data carries every property a job fills.

use reqwest::Method;
use scraper::{Html, Selector};
use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    the_list_is_the_apis_list,
    list_pages_are_cached_with_etags,
    job_pages_answer_by_the_jobs_state,
    each_host_sees_its_own_board,
    structured_data_of_full_and_bare_jobs,
    a_change_by_another_process_reaches_the_board
);

/// Creates a job through the API (active unless the body says otherwise); its slug.
pub async fn job(t: &TestApp, mut body: Value) -> String {
    let o = body.as_object_mut().unwrap();
    o.entry("description").or_insert(json!("<p>A job.</p>"));
    o.entry("company_name").or_insert(json!("Acme"));
    o.entry("status").or_insert(json!("active"));
    let r = t.post("/jobs", body).await;
    r.expect(201);
    r.body["data"]["slug"].as_str().unwrap().to_string()
}

/// Posts a board form to `path` as a browser on this board does (its `Origin`), unless
/// `headers` say otherwise; redirects are not followed.
pub async fn post_form(
    t: &TestApp,
    path: &str,
    fields: &[(&str, &str)],
    headers: &[(&str, &str)],
) -> Resp {
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut rb = client
        .post(format!("{}{path}", t.base))
        .header("accept", "text/html")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string(fields).unwrap());
    if !headers.iter().any(|(k, _)| *k == "origin") {
        rb = rb.header("origin", t.base.clone());
    }
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    Resp::read(rb.send().await.unwrap()).await
}

pub fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

/// The anti-forgery token (`_token`) of the first form of a board page.
pub fn form_token(page: &Resp) -> String {
    page.html()
        .select(&sel("input[name=_token]"))
        .next()
        .unwrap_or_else(|| panic!("no form token on the page: {}", page.text))
        .value()
        .attr("value")
        .unwrap()
        .to_string()
}

/// The slugs a list page links to, in order.
pub fn listed(doc: &Html) -> Vec<String> {
    doc.select(&sel("ol.jobs li h2 a"))
        .map(|a| {
            a.value()
                .attr("href")
                .unwrap()
                .strip_prefix("/jobs/")
                .unwrap()
                .to_string()
        })
        .collect()
}

/// The slugs `GET /api/jobs` lists for `query`.
pub async fn api_slugs(t: &TestApp, query: &str) -> Vec<String> {
    let r = t.get(&format!("/jobs{query}")).await;
    r.expect(200);
    r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["slug"].as_str().unwrap().to_string())
        .collect()
}

fn text(doc: &Html, css: &str) -> String {
    doc.select(&sel(css))
        .next()
        .map(|e| e.text().collect::<String>())
        .unwrap_or_default()
}

async fn seed(t: &TestApp) {
    let jobs = [
        json!({"title": "Rust engineer", "job_type": "full-time", "location": "Berlin", "is_remote": true}),
        json!({"title": "Pharmacist", "job_type": "part-time", "location": "Paris"}),
        json!({"title": "Rust mechanic", "job_type": "contract", "location": "Berlin", "is_remote": false}),
        json!({"title": "Data analyst", "job_type": "contract", "location": "Lyon", "is_remote": true}),
        json!({"title": "Sticky baker", "is_sticky": true, "location": "Paris"}),
        json!({"title": "Intern", "job_type": "internship"}),
        json!({"title": "Waiting", "status": "pending"}),
        json!({"title": "Drafted", "status": "draft"}),
        json!({"title": "Old", "status": "expired"}),
    ];
    for j in jobs {
        job(t, j).await;
    }
}

async fn the_list_is_the_apis_list(b: Backend) {
    let t = TestApp::spawn(b).await;
    seed(&t).await;
    let cat = t.post("/categories", json!({"name": "Engineering"})).await;
    let cat = cat.body["data"]["id"].as_str().unwrap().to_string();
    job(&t, json!({"title": "Categorised", "category_id": cat})).await;
    // The same query, as a form sends it and as the API takes it.
    let cases = [
        ("", ""),
        ("?search=rust", "?search=rust"),
        ("?search=rust+mech", "?search=rust%20mech"),
        (
            "?job_types=contract&job_types=full-time&is_remote=true&locations=",
            "?job_types=contract,full-time&is_remote=true",
        ),
        (
            "?locations=berlin%2Cparis&is_remote=false",
            "?locations=berlin,paris&is_remote=false",
        ),
        ("?page=2&per_page=3", "?page=2&per_page=3"),
        ("?page=9", "?page=9"),
        (&format!("?categories={cat}"), &format!("?categories={cat}")),
        // What the board ignores: tracking parameters, and `status` (live jobs only).
        ("?utm_source=mail&status=all", ""),
    ];
    for (board, api) in cases {
        let r = t.page(&format!("/{board}")).await;
        r.expect(200);
        let on_board = listed(&r.html());
        assert_eq!(
            on_board,
            api_slugs(&t, api).await,
            "board {board} vs api {api}"
        );
        if board.is_empty() {
            assert_eq!(on_board.len(), 7, "every live job and no other");
            assert!(on_board[0].starts_with("sticky-baker"), "sticky first");
        }
    }
    // Paging links keep the filters.
    let r = t.page("/?job_types=contract&per_page=1").await;
    let doc = r.html();
    let next = doc.select(&sel("a[rel=next]")).next().unwrap();
    assert_eq!(
        next.value().attr("href"),
        Some("/?job_types=contract&page=2&per_page=1")
    );
    assert!(doc.select(&sel("a[rel=prev]")).next().is_none());
    let second = t.page("/?job_types=contract&page=2&per_page=1").await;
    assert_eq!(
        listed(&second.html()),
        api_slugs(&t, "?job_types=contract&page=2&per_page=1").await
    );
    // The form shows what was asked.
    let doc = t
        .page("/?search=rust&job_types=contract&is_remote=false")
        .await
        .html();
    let input = doc.select(&sel("input[name=search]")).next().unwrap();
    assert_eq!(input.value().attr("value"), Some("rust"));
    let ticked: Vec<_> = doc
        .select(&sel("input[name=job_types][checked]"))
        .map(|e| e.value().attr("value").unwrap().to_string())
        .collect();
    assert_eq!(ticked, ["contract"]);
    assert_eq!(
        doc.select(&sel("select[name=is_remote] option[selected]"))
            .next()
            .unwrap()
            .value()
            .attr("value"),
        Some("false")
    );
    // What the API refuses, the board refuses with a page saying why.
    for bad in [
        "?page=0",
        "?job_types=sometimes",
        "?categories=nope",
        "?per_page=101",
    ] {
        let r = t.page(&format!("/{bad}")).await;
        r.expect(400);
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    }
    let unknown = uuid::Uuid::now_v7();
    t.page(&format!("/?categories={unknown}")).await.expect(400);
}

async fn list_pages_are_cached_with_etags(b: Backend) {
    let t = TestApp::spawn(b).await;
    job(&t, json!({"title": "First"})).await;
    let r = t.page("/").await;
    r.expect(200);
    assert_eq!(
        r.header("cache-control"),
        Some("public, max-age=0, s-maxage=30, stale-while-revalidate=30")
    );
    let csp = r.header("content-security-policy").unwrap();
    assert!(csp.contains("style-src 'self' 'sha256-"), "{csp}");
    assert!(!csp.contains("unsafe-inline"));
    let etag = r.header("etag").unwrap().to_string();
    let again = t
        .page_req(Method::GET, "/")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    // A job approved through the API is on the next page served.
    let slug = job(&t, json!({"title": "Second", "status": "pending"})).await;
    assert!(!listed(&t.page("/").await.html()).contains(&slug));
    let id = t.get("/jobs?status=pending").await.body["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    t.patch(&format!("/jobs/{id}"), json!({"status": "active"}))
        .await
        .expect(200);
    let r = t
        .page_req(Method::GET, "/")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "the old ETag no longer matches");
    let r = Resp::read(r).await;
    assert_eq!(listed(&r.html())[0], slug);
    // The organization's look is part of every page: a change shows at once too.
    jobboard_domain::orgs::update(
        t.db(),
        t.org_id,
        jobboard_domain::Input::new(
            json!({"name": "Renamed board", "tagline": "Jobs near you"})
                .as_object()
                .unwrap()
                .clone(),
        ),
    )
    .await
    .unwrap();
    let doc = t.page("/").await.html();
    assert_eq!(text(&doc, ".site-header .brand span"), "Renamed board");
    assert_eq!(text(&doc, ".site-header .tagline"), "Jobs near you");
}

async fn job_pages_answer_by_the_jobs_state(b: Backend) {
    let t = TestApp::spawn(b).await;
    let live = job(&t, json!({"title": "Live one"})).await;
    let r = t.page(&format!("/jobs/{live}")).await;
    r.expect(200);
    assert!(r.header("x-robots-tag").is_none());
    assert_eq!(text(&r.html(), "main h1"), "Live one");
    assert!(r.header("etag").is_some());
    let expired = job(&t, json!({"title": "Expired one", "status": "expired"})).await;
    let past = job(&t, json!({"title": "Past its date"})).await;
    let id = t.get("/jobs?search=past").await.body["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    t.patch(
        &format!("/jobs/{id}"),
        json!({"expires_at": "2020-01-01T00:00:00Z"}),
    )
    .await
    .expect(200);
    for slug in [&expired, &past] {
        let r = t.page(&format!("/jobs/{slug}")).await;
        r.expect(410);
        assert_eq!(r.header("x-robots-tag"), Some("noindex"));
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    }
    let pending = job(&t, json!({"title": "Pending one", "status": "pending"})).await;
    let draft = job(&t, json!({"title": "Draft one", "status": "draft"})).await;
    let deleted = job(&t, json!({"title": "Deleted one"})).await;
    let id = t.get("/jobs?search=deleted").await.body["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    t.delete(&format!("/jobs/{id}")).await.expect(200);
    let (other_org, other_key) = t.new_org("Other", "*", 1000, 1000).await;
    let _ = other_org;
    let r = t
        .req(Method::POST, "/jobs")
        .key(&other_key)
        .json(json!({"title": "Theirs", "description": "x", "company_name": "Them", "status": "active"}))
        .send()
        .await;
    r.expect(201);
    let theirs = r.body["data"]["slug"].as_str().unwrap().to_string();
    for slug in [
        &pending,
        &draft,
        &deleted,
        &theirs,
        &"no-such-job".to_string(),
    ] {
        let r = t.page(&format!("/jobs/{slug}")).await;
        r.expect(404);
        assert_eq!(r.header("x-robots-tag"), Some("noindex"));
    }
    t.page(&format!("/jobs/{}", "x".repeat(400)))
        .await
        .expect(404);
}

async fn each_host_sees_its_own_board(b: Backend) {
    let t = TestApp::spawn(b).await;
    let ours = job(&t, json!({"title": "Ours"})).await;
    let org = jobboard_domain::orgs::create_with(t.db(), "Second board", Some("jobs.example.test"))
        .await
        .unwrap();
    let key = t.new_key(org.id, "*", 1000, 1000).await;
    let r = t
        .req(Method::POST, "/jobs")
        .key(&key)
        .json(json!({"title": "Theirs", "description": "x", "company_name": "Them", "status": "active"}))
        .send()
        .await;
    let theirs = r.body["data"]["slug"].as_str().unwrap().to_string();
    let on = |host: &'static str, path: String| {
        let t = &t;
        async move {
            Resp::read(
                t.page_req(Method::GET, &path)
                    .header("host", host)
                    .send()
                    .await
                    .unwrap(),
            )
            .await
        }
    };
    let home = on("jobs.example.test:8080", "/".into()).await;
    let doc = home.html();
    assert_eq!(listed(&doc), std::slice::from_ref(&theirs));
    assert_eq!(text(&doc, ".site-header .brand span"), "Second board");
    let canonical = doc.select(&sel("link[rel=canonical]")).next().unwrap();
    // The board's own domain, with the scheme the request came on (plain HTTP here).
    assert_eq!(
        canonical.value().attr("href"),
        Some("http://jobs.example.test/")
    );
    assert_eq!(
        listed(&t.page("/").await.html()),
        std::slice::from_ref(&ours)
    );
    // Any other host is organization 1's board.
    assert_eq!(
        listed(&on("other.example", "/".into()).await.html()),
        std::slice::from_ref(&ours)
    );
    on("jobs.example.test", format!("/jobs/{theirs}"))
        .await
        .expect(200);
    on("jobs.example.test", format!("/jobs/{ours}"))
        .await
        .expect(404);
    t.page(&format!("/jobs/{theirs}")).await.expect(404);
}

async fn structured_data_of_full_and_bare_jobs(b: Backend) {
    let t = TestApp::spawn(b).await;
    let full = job(
        &t,
        json!({
            "title": "Senior engineer",
            "description": "<p>Build <strong>things</strong>.</p>",
            "company_name": "Acme",
            "company_website": "https://acme.example",
            "company_logo_url": "https://acme.example/logo.png",
            "job_type": "contract",
            "location": "Berlin",
            "location_restricted": true,
            "is_remote": true,
            "country": "de",
            "region": "Berlin",
            "city": "Berlin",
            "postal_code": "10115",
            "remote_countries": ["de", "AT", "DE"],
            "salary_min": 50000,
            "salary_max": 70000,
            "salary_currency": "EUR",
            "salary_period": "yearly",
            "how_to_apply_method": "website",
            "how_to_apply": "https://acme.example/apply",
            "expires_at": "2099-01-01T00:00:00Z",
        }),
    )
    .await;
    let ld = |r: &Resp| -> Value {
        let doc = r.html();
        let script = doc
            .select(&sel("script[type=\"application/ld+json\"]"))
            .next()
            .expect("structured data");
        serde_json::from_str(&script.text().collect::<String>()).unwrap()
    };
    let r = t.page(&format!("/jobs/{full}")).await;
    r.expect(200);
    let v = ld(&r);
    let id = t.get("/jobs?search=senior").await.body["data"][0]["id"].clone();
    let stored = t.get(&format!("/jobs/{}", id.as_str().unwrap())).await.body["data"].clone();
    let url = format!("{}/jobs/{full}", t.base);
    assert_eq!(v["@context"], "https://schema.org/");
    assert_eq!(v["@type"], "JobPosting");
    assert_eq!(v["title"], "Senior engineer");
    assert_eq!(v["description"], stored["description"]);
    assert_eq!(v["datePosted"], stored["created_at"]);
    assert_eq!(v["validThrough"], "2099-01-01T00:00:00Z");
    assert_eq!(v["employmentType"], "CONTRACTOR");
    assert_eq!(
        v["hiringOrganization"],
        json!({"@type": "Organization", "name": "Acme", "sameAs": "https://acme.example", "logo": "https://acme.example/logo.png"})
    );
    assert_eq!(
        v["jobLocation"],
        json!({"@type": "Place", "address": {"@type": "PostalAddress", "addressLocality": "Berlin",
               "addressRegion": "Berlin", "postalCode": "10115", "addressCountry": "DE"}})
    );
    assert_eq!(v["jobLocationType"], "TELECOMMUTE");
    assert_eq!(
        v["applicantLocationRequirements"],
        json!([{"@type": "Country", "name": "DE"}, {"@type": "Country", "name": "AT"},
               {"@type": "AdministrativeArea", "name": "Berlin"}])
    );
    assert_eq!(
        v["baseSalary"],
        json!({"@type": "MonetaryAmount", "currency": "EUR", "value": {"@type": "QuantitativeValue", "minValue": 50000.0, "maxValue": 70000.0, "unitText": "YEAR"}})
    );
    assert_eq!(v["directApply"], false);
    assert_eq!(v["identifier"]["value"], id);
    assert_eq!(v["url"], url);
    // Canonical link, Open Graph and description.
    let doc = r.html();
    let meta = |css: &str| {
        doc.select(&sel(css))
            .next()
            .and_then(|e| e.value().attr("content").or(e.value().attr("href")))
            .map(str::to_string)
    };
    assert_eq!(meta("link[rel=canonical]").as_deref(), Some(url.as_str()));
    assert_eq!(
        meta("meta[property=\"og:url\"]").as_deref(),
        Some(url.as_str())
    );
    let text = stored["description_text"].as_str().unwrap();
    assert!(text.starts_with("Build things"), "{text}");
    assert_eq!(meta("meta[name=description]").as_deref(), Some(text));
    assert_eq!(
        meta("meta[property=\"og:description\"]").as_deref(),
        Some(text)
    );
    assert_eq!(
        meta("meta[property=\"og:image\"]").as_deref(),
        Some("https://acme.example/logo.png")
    );
    assert!(
        meta("meta[property=\"og:title\"]")
            .unwrap()
            .starts_with("Senior engineer at Acme")
    );

    // The least a posting needs: where the job is.
    let bare = job(
        &t,
        json!({"title": "Helper", "description": "Help.", "location": "Berlin"}),
    )
    .await;
    let v = ld(&t.page(&format!("/jobs/{bare}")).await);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "@context",
            "@type",
            "title",
            "description",
            "datePosted",
            "validThrough",
            "hiringOrganization",
            "jobLocation",
            "directApply",
            "identifier",
            "url"
        ]
    );
    // Without an expiry, a job is announced as valid to the end of its current period of
    // the board's listing days (30 by default) from its posting.
    let at = |k: &str| chrono::DateTime::parse_from_rfc3339(v[k].as_str().unwrap()).unwrap();
    assert_eq!(
        at("validThrough") - at("datePosted"),
        chrono::TimeDelta::days(30)
    );
    assert_eq!(
        v["hiringOrganization"],
        json!({"@type": "Organization", "name": "Acme"})
    );
}

/// The board of a host is read once and reused until this node writes (SQLite), so a
/// change made by another process on the same database must still reach the pages: the
/// command line waits out the reuse (a second) before it reports while a server has the
/// file open, so the request after it sees the change; on PostgreSQL every request reads.
async fn a_change_by_another_process_reaches_the_board(b: Backend) {
    let t = TestApp::spawn(b).await;
    job(&t, json!({"title": "First"})).await;
    let brand = |r: Resp| text(&r.html(), ".site-header .brand span");
    let before = brand(t.page("/").await);
    // Read again: the board is now remembered (on SQLite).
    assert_eq!(brand(t.page("/").await), before);
    let id = t.org_id.to_string();
    let (ok, _, err) = run_cli(
        &["orgs", "update", &id, "--name", "Renamed elsewhere"],
        &t.database_url,
    );
    assert!(ok, "{err}");
    assert_ne!(before, "Renamed elsewhere");
    assert_eq!(brand(t.page("/").await), "Renamed elsewhere");
}
