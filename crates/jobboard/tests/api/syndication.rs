//! The feeds for aggregators and partners: `/feeds/indeed.xml` read with a real XML
//! parser and `/feeds/jobs.json`, each with every live job of the board once and no other
//! (more than one batch of them), every field a job has, and `304` until the board
//! changes.

use std::collections::{BTreeMap, BTreeSet};

use reqwest::Method;
use serde_json::{Value, json};

use crate::{backends, board::job, common::*};

backends!(
    the_indeed_feed_lists_every_live_job_once,
    the_partner_feed_has_every_public_field,
);

/// A job with every field, live.
fn full() -> Value {
    json!({
        "title": "Night baker ]]> <b>&",
        "description": "<p>Bake <strong>bread</strong>.</p>",
        "company_name": "Bread & Co",
        "company_website": "https://bread.example",
        "job_type": "part-time",
        "location": "Lyon centre",
        "country": "fr",
        "region": "Auvergne-Rhône-Alpes",
        "city": "Lyon",
        "postal_code": "69001",
        "is_remote": true,
        "remote_countries": ["FR", "BE"],
        "salary_min": 1800,
        "salary_max": 2400,
        "salary_currency": "EUR",
        "salary_period": "monthly",
        "how_to_apply_method": "website",
        "how_to_apply": "https://bread.example/apply",
        "contact_email": "jobs@bread.example",
        "expires_at": "2099-01-01T00:00:00Z",
    })
}

/// The jobs that are not listed: pending, draft, expired, and another board's.
async fn unlisted(t: &TestApp) -> Vec<String> {
    let mut ids = Vec::new();
    for status in ["pending", "draft", "expired"] {
        let r = t
            .post(
                "/jobs",
                json!({"title": format!("A {status} job"), "description": "Hidden.",
                       "company_name": "Acme", "status": status}),
            )
            .await;
        r.expect(201);
        ids.push(r.body["data"]["id"].as_str().unwrap().to_string());
    }
    let (other, _) = t.new_org("Elsewhere", "*", 100, 100).await;
    ids.push(t.insert_job(other, "Another board's job").await.to_string());
    ids
}

/// Every live job's id, as the API lists them.
async fn live_ids(t: &TestApp) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for page in 1.. {
        let r = t.get(&format!("/jobs?per_page=100&page={page}")).await;
        let data = r.body["data"].as_array().unwrap().clone();
        out.extend(data.iter().map(|j| j["id"].as_str().unwrap().to_string()));
        if data.len() < 100 {
            break;
        }
    }
    out
}

async fn fetch(t: &TestApp, path: &str, etag: Option<&str>) -> Resp {
    let mut rb = t.page_req(Method::GET, path);
    if let Some(e) = etag {
        rb = rb.header("if-none-match", e);
    }
    Resp::read(rb.send().await.unwrap()).await
}

async fn the_indeed_feed_lists_every_live_job_once(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let slug = job(&t, full()).await;
    // More than one batch of the feed's reads.
    for i in 0..1_010 {
        t.insert_job(t.org_id, &format!("Cook {i}")).await;
    }
    let hidden = unlisted(&t).await;
    let live = live_ids(&t).await;
    assert_eq!(live.len(), 1_011);

    let r = fetch(&t, "/feeds/indeed.xml", None).await;
    r.expect(200);
    assert_eq!(
        r.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    let etag = r.header("etag").unwrap().to_string();
    let text = r.text.clone();
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "source");
    let child = |n: roxmltree::Node, name: &str| -> Option<String> {
        n.children()
            .find(|c| c.has_tag_name(name))
            .map(|c| c.text().unwrap_or("").to_string())
    };
    assert_eq!(child(root, "publisher").as_deref(), Some("Test org"));
    assert_eq!(child(root, "publisherurl"), Some(format!("{}/", t.base)));
    assert!(chrono::DateTime::parse_from_rfc2822(&child(root, "lastBuildDate").unwrap()).is_ok());
    let mut seen: BTreeMap<String, roxmltree::Node> = BTreeMap::new();
    for j in root.children().filter(|n| n.has_tag_name("job")) {
        let id = child(j, "referencenumber").unwrap();
        assert!(seen.insert(id.clone(), j).is_none(), "{id} twice");
    }
    let listed: BTreeSet<String> = seen.keys().cloned().collect();
    assert_eq!(listed, live, "every live job once, and no other");
    assert!(hidden.iter().all(|h| !listed.contains(h)));

    // Every element of the full job, its text whole (CDATA that held `]]>`).
    let id = t.get("/jobs?search=baker").await.body["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let j = seen[&id];
    let el = |name: &str| child(j, name).unwrap_or_else(|| panic!("no {name}"));
    assert_eq!(el("title"), "Night baker ]]> <b>&");
    assert_eq!(el("url"), format!("{}/jobs/{slug}", t.base));
    assert_eq!(el("company"), "Bread & Co");
    assert_eq!(
        [el("city"), el("state"), el("country"), el("postalcode")],
        ["Lyon", "Auvergne-Rhône-Alpes", "FR", "69001"]
    );
    assert_eq!(el("description"), "<p>Bake <strong>bread</strong>.</p>");
    assert_eq!(el("salary"), "1,800–2,400 EUR per month");
    assert_eq!(el("jobtype"), "parttime");
    assert_eq!(el("remotetype"), "Fully remote");
    assert_eq!(el("expirationdate"), "Thu, 1 Jan 2099 00:00:00 +0000");
    assert!(chrono::DateTime::parse_from_rfc2822(&el("date")).is_ok());
    // A job without them has no empty elements.
    let bare = *seen
        .values()
        .find(|n| child(**n, "title").as_deref() == Some("Cook 7"))
        .unwrap();
    for name in ["city", "salary", "jobtype", "remotetype", "expirationdate"] {
        assert_eq!(child(bare, name), None, "{name}");
    }

    // Unchanged: 304; a change: the new feed.
    fetch(&t, "/feeds/indeed.xml", Some(&etag))
        .await
        .expect(304);
    t.patch(&format!("/jobs/{id}"), json!({"status": "expired"}))
        .await
        .expect(200);
    let r = fetch(&t, "/feeds/indeed.xml", Some(&etag)).await;
    r.expect(200);
    let text = r.text.clone();
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert_eq!(
        doc.root_element()
            .children()
            .filter(|n| n.has_tag_name("job"))
            .count(),
        1_010
    );
    assert!(!text.contains(&id));
}

async fn the_partner_feed_has_every_public_field(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let category = t.post("/categories", json!({"name": "Bakery"})).await;
    let mut body = full();
    body["category_id"] = category.body["data"]["id"].clone();
    body["is_highlighted"] = json!(true);
    let slug = job(&t, body).await;
    job(
        &t,
        json!({"title": "Helper", "description": "Help.", "how_to_apply": "Ask at the counter."}),
    )
    .await;
    let hidden = unlisted(&t).await;

    let r = fetch(&t, "/feeds/jobs.json", None).await;
    r.expect(200);
    assert_eq!(
        r.header("content-type"),
        Some("application/json; charset=utf-8")
    );
    let feed: Value = serde_json::from_str(&r.text).expect("JSON");
    assert_eq!(feed["version"], 1);
    assert_eq!(feed["feed_url"], format!("{}/feeds/jobs.json", t.base));
    let jobs = feed["jobs"].as_array().unwrap();
    let ids: BTreeSet<String> = jobs
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, live_ids(&t).await);
    assert!(hidden.iter().all(|h| !ids.contains(h)));

    let baker = jobs.iter().find(|j| j["city"] == "Lyon").unwrap();
    let url = format!("{}/jobs/{slug}", t.base);
    let expected = json!({
        "id": baker["id"],
        "url": url,
        "title": "Night baker ]]> <b>&",
        "description": "<p>Bake <strong>bread</strong>.</p>",
        "company_name": "Bread & Co",
        "company_website": "https://bread.example",
        "company_logo_url": null,
        "job_type": "part-time",
        "category": "Bakery",
        "location": "Lyon centre",
        "location_restricted": false,
        "country": "FR",
        "region": "Auvergne-Rhône-Alpes",
        "city": "Lyon",
        "postal_code": "69001",
        "is_remote": true,
        "remote_countries": ["FR", "BE"],
        "salary_min": 1800.0,
        "salary_max": 2400.0,
        "salary_currency": "EUR",
        "salary_period": "monthly",
        "apply_url": format!("{url}/apply"),
        "how_to_apply_method": "website",
        "how_to_apply": null,
        "contact_email": "jobs@bread.example",
        "featured": false,
        "created_at": baker["created_at"],
        "updated_at": baker["updated_at"],
        "expires_at": "2099-01-01T00:00:00Z",
        "valid_through": "2099-01-01T00:00:00Z",
    });
    assert_eq!(baker, &expected);
    // Instructions instead of a link; nothing staff keep to themselves.
    let helper = jobs.iter().find(|j| j["title"] == "Helper").unwrap();
    assert_eq!(helper["how_to_apply"], "Ask at the counter.");
    for j in jobs {
        for private in [
            "status",
            "owner_user_id",
            "is_highlighted",
            "featured_until",
        ] {
            assert!(j.get(private).is_none(), "{private}");
        }
    }
    let etag = r.header("etag").unwrap().to_string();
    fetch(&t, "/feeds/jobs.json", Some(&etag)).await.expect(304);
}
