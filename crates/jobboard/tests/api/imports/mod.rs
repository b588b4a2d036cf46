//! Jobs in from import sources (docs/distribution.md), against a stand-in on 127.0.0.1
//! serving fixtures shaped like each system's published responses: create, update in
//! place, expire by absence, hold on a suspicious shrink, nothing on an identical rerun,
//! refused bodies and addresses, and a run killed halfway then rerun.

mod dashboard;
mod kill;

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use axum::{
    Router,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::get,
};
use jobboard::delivery::imports::{Fetcher, run};
use jobboard_domain::{
    Input,
    imports::{self, Counts, Source},
};
use serde_json::{Value, json};

use crate::{backends, common::*};

/// What the stand-in serves at a path.
#[derive(Clone)]
struct Served {
    body: Vec<u8>,
    content_type: &'static str,
    etag: Option<String>,
}

/// A web server on 127.0.0.1 serving what the test puts at each path, with `ETag`s
/// answered `304` when they match.
pub struct Feeds {
    pub base: String,
    served: Arc<Mutex<HashMap<String, Served>>>,
}

async fn serve_one(
    State(served): State<Arc<Mutex<HashMap<String, Served>>>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(s) = served.lock().unwrap().get(&name).cloned() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if let Some(tag) = &s.etag
        && headers.get("if-none-match").and_then(|v| v.to_str().ok()) == Some(tag.as_str())
    {
        return StatusCode::NOT_MODIFIED.into_response();
    }
    let mut res = (
        StatusCode::OK,
        [("content-type", s.content_type)],
        s.body.clone(),
    )
        .into_response();
    if let Some(tag) = s.etag {
        res.headers_mut().insert("etag", tag.parse().unwrap());
    }
    res
}

impl Feeds {
    pub async fn start() -> Feeds {
        let served: Arc<Mutex<HashMap<String, Served>>> = Arc::default();
        let app = Router::new()
            .route("/{name}", get(serve_one))
            .with_state(served.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Feeds { base, served }
    }

    /// Serves `body` at `/name`, with an `ETag` when `etag` is given.
    pub fn put(&self, name: &str, body: impl Into<Vec<u8>>, etag: Option<&str>) {
        let content_type = if name.ends_with(".xml") {
            "application/xml"
        } else {
            "application/json"
        };
        self.served.lock().unwrap().insert(
            name.into(),
            Served {
                body: body.into(),
                content_type,
                etag: etag.map(str::to_string),
            },
        );
    }

    pub fn url(&self, name: &str) -> String {
        format!("{}/{name}", self.base)
    }
}

pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/imports")
            .join(name),
    )
    .unwrap()
}

pub async fn source(t: &TestApp, kind: &str, url: &str, extra: Value) -> Source {
    let Value::Object(mut body) = json!({"kind": kind, "url": url, "status": "active"}) else {
        unreachable!()
    };
    if let Value::Object(more) = extra {
        body.extend(more);
    }
    imports::create(t.db(), t.org_id, Input::new(body))
        .await
        .unwrap()
}

/// Runs `source` as the scheduler does (reading its validators again first).
pub async fn run_now(t: &TestApp, fetcher: &Fetcher, s: &Source) -> Counts {
    let s = imports::get(t.db(), Some(t.org_id), s.id).await.unwrap();
    run(t.db(), fetcher, &s).await.unwrap()
}

backends!(
    a_source_is_mirrored,
    every_kind_reads_its_fixture,
    a_board_requiring_salaries_refuses_imports_without,
    bad_reads_change_nothing,
    private_addresses_are_refused,
);

fn greenhouse(jobs: &[(i64, &str)], total: Option<usize>) -> String {
    let list: Vec<Value> = jobs
        .iter()
        .map(|(id, title)| {
            json!({"absolute_url": format!("https://boards.greenhouse.io/crumbs/jobs/{id}"),
                   "id": id, "title": title, "company_name": "Crumbs",
                   "location": {"name": "Berlin"}, "content": "&lt;p&gt;Bake.&lt;/p&gt;",
                   "updated_at": "2026-11-20T10:55:28-05:00", "metadata": null})
        })
        .collect();
    json!({"jobs": list, "meta": {"total": total.unwrap_or(jobs.len())}}).to_string()
}

async fn a_source_is_mirrored(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
    })
    .await;
    let feeds = Feeds::start().await;
    let fetcher = t.app.imports.clone();
    feeds.put("gh", fixture("greenhouse.json"), Some("\"v1\""));
    let s = source(&t, "greenhouse", &feeds.url("gh"), json!({})).await;
    let c = run_now(&t, &fetcher, &s).await;
    assert_eq!(
        (c.created, c.updated, c.expired, c.refused),
        (3, 0, 0, 0),
        "{c:?}"
    );
    assert_eq!(
        all_jobs(&t).await,
        [
            ("Head Baker".into(), "active".into()),
            ("Operations Analyst".into(), "active".into()),
            ("Shop Assistant".into(), "active".into())
        ]
    );
    let list = t.get("/jobs?search=baker").await;
    let job = &list.body["data"][0];
    assert_eq!(job["company_name"], "Crumbs");
    assert_eq!(job["location"], "Berlin, Germany");
    let full = t
        .get(&format!("/jobs/{}", job["id"].as_str().unwrap()))
        .await;
    assert_eq!(
        full.body["data"]["how_to_apply"],
        "https://boards.greenhouse.io/crumbs/jobs/4012345"
    );
    let description = full.body["data"]["description"].as_str().unwrap();
    assert!(
        description.contains("<strong>sourdough</strong>"),
        "{description}"
    );
    assert_eq!(events_named(&t, "job.created").await, 3);
    // The same again: the validator says so, and nothing moves.
    let c = run_now(&t, &fetcher, &s).await;
    assert!(c.not_modified, "{c:?}");
    // The same body without validators: every job unchanged, no event.
    feeds.put("gh", fixture("greenhouse.json"), None);
    let c = run_now(&t, &fetcher, &s).await;
    assert_eq!((c.created, c.updated, c.unchanged), (0, 0, 3), "{c:?}");
    assert_eq!(events_named(&t, "job.updated").await, 0);
    // One job renamed, one gone (a third of the source: expired).
    let changed = fixture("greenhouse.json").replace("Head Baker", "Chief Baker");
    let mut v: Value = serde_json::from_str(&changed).unwrap();
    v["jobs"].as_array_mut().unwrap().remove(2);
    v["meta"]["total"] = json!(2);
    feeds.put("gh", v.to_string(), None);
    let c = run_now(&t, &fetcher, &s).await;
    assert_eq!(
        (c.created, c.updated, c.unchanged, c.expired),
        (0, 1, 1, 1),
        "{c:?}"
    );
    assert_eq!(
        all_jobs(&t).await,
        [
            ("Chief Baker".into(), "active".into()),
            ("Operations Analyst".into(), "active".into()),
            ("Shop Assistant".into(), "expired".into())
        ]
    );
    // The rename, and the expiry's change of status.
    assert_eq!(events_named(&t, "job.updated").await, 2);
    assert_eq!(events_named(&t, "job.expired").await, 1);
    assert_eq!(events_named(&t, "job.created").await, 3, "updated in place");
    // The expired job comes back: listed again.
    feeds.put(
        "gh",
        fixture("greenhouse.json").replace("Head Baker", "Chief Baker"),
        None,
    );
    let c = run_now(&t, &fetcher, &s).await;
    assert_eq!((c.created, c.updated), (0, 1), "{c:?}");
    assert!(all_jobs(&t).await.iter().all(|(_, s)| s == "active"));
    // A source that suddenly lists one of its three jobs is held: nothing expires.
    feeds.put("gh", greenhouse(&[(4012345, "Chief Baker")], None), None);
    let c = run_now(&t, &fetcher, &s).await;
    assert_eq!((c.expired, c.held), (0, 2), "{c:?}");
    assert!(c.summary().contains("held"), "{}", c.summary());
    assert!(all_jobs(&t).await.iter().all(|(_, s)| s == "active"));
    // A list shorter than its own total is not whole: nothing expires from it.
    feeds.put(
        "gh",
        greenhouse(
            &[(4012345, "Chief Baker"), (4012346, "Operations Analyst")],
            Some(3),
        ),
        None,
    );
    let c = run_now(&t, &fetcher, &s).await;
    assert_eq!(c.expired, 0, "{c:?}");
    // An empty read expires nothing.
    feeds.put("gh", greenhouse(&[], None), None);
    let c = run_now(&t, &fetcher, &s).await;
    assert_eq!(c.expired, 0, "{c:?}");
    assert!(all_jobs(&t).await.iter().all(|(_, s)| s == "active"));
    // A job the board refuses is reported; the others are imported.
    feeds.put(
        "gh",
        greenhouse(
            &[
                (4012345, "Chief Baker"),
                (4012346, "Operations Analyst"),
                (4012347, "Shop Assistant"),
                (4012348, "   "),
            ],
            None,
        ),
        None,
    );
    let c = run_now(&t, &fetcher, &s).await;
    assert_eq!(
        (c.refused, c.created, c.updated + c.unchanged),
        (1, 0, 3),
        "{c:?}"
    );
    assert_eq!(c.refusals[0].0, "4012348");
    assert!(c.refusals[0].1.starts_with("title:"), "{:?}", c.refusals);
    assert_eq!(all_jobs(&t).await.len(), 3);
    // The source's run is recorded for the dashboard and the command line.
    let stored = imports::get(t.db(), Some(t.org_id), s.id).await.unwrap();
    assert!(stored.last_run_at.is_some());
}

async fn every_kind_reads_its_fixture(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
    })
    .await;
    let feeds = Feeds::start().await;
    let fetcher = t.app.imports.clone();
    feeds.put("acme-bakery", fixture("lever.json"), None);
    feeds.put("viennese-ovens", fixture("ashby.json"), None);
    feeds.put("partner.xml", fixture("indeed.xml"), None);
    feeds.put("feed", fixture("jobfeed.json"), None);
    for (kind, name, created) in [
        ("lever", "acme-bakery", 2),
        ("ashby", "viennese-ovens", 1),
        ("xml", "partner.xml", 2),
        ("jsonfeed", "feed", 1),
    ] {
        let s = source(&t, kind, &feeds.url(name), json!({})).await;
        let c = run_now(&t, &fetcher, &s).await;
        assert_eq!((c.created, c.refused), (created, 0), "{kind}: {c:?}");
    }
    let all = t.get("/jobs?per_page=100").await;
    let by_title = |title: &str| -> Value {
        all.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["title"] == title)
            .unwrap_or_else(|| panic!("no {title}"))
            .clone()
    };
    // Lever: the board's name as employer, commitment, workplace type, salary range.
    let night = by_title("Night Baker");
    assert_eq!(night["company_name"], "Acme Bakery");
    assert_eq!(night["location"], "Lisbon");
    assert_eq!(night["job_type"], "full-time");
    let night = t
        .get(&format!("/jobs/{}", night["id"].as_str().unwrap()))
        .await;
    assert_eq!(night.body["data"]["salary_min"], json!(28000.0));
    assert_eq!(night.body["data"]["salary_period"], "yearly");
    assert!(
        night.body["data"]["description"]
            .as_str()
            .unwrap()
            .contains("<li>Night shifts</li>")
    );
    assert_eq!(by_title("Content Writer")["is_remote"], true);
    assert_eq!(by_title("Content Writer")["job_type"], "part-time");
    // Ashby: unlisted jobs are not imported.
    assert_eq!(by_title("Pastry Chef")["company_name"], "Viennese Ovens");
    assert!(
        !all.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["title"] == "Internal Transfer Only")
    );
    // Indeed XML: place from city, state and country.
    let driver = by_title("Delivery Driver");
    assert_eq!(driver["company_name"], "Rolling Loaves");
    assert_eq!(driver["location"], "Lyon, Auvergne-Rhône-Alpes, FR");
    assert_eq!(by_title("Support Agent")["is_remote"], true);
    // Structured places: Lever's country (a remote posting is done from it), Ashby's
    // postal address (its country written out), the Indeed XML's city, state, country and
    // postal code.
    let full = |title: &str| {
        let id = by_title(title)["id"].as_str().unwrap().to_string();
        let t = &t;
        async move { t.get(&format!("/jobs/{id}")).await.body["data"].clone() }
    };
    let night = full("Night Baker").await;
    assert_eq!(
        (night["country"].clone(), night["remote_countries"].clone()),
        (json!("PT"), json!(null))
    );
    let writer = full("Content Writer").await;
    assert_eq!(writer["remote_countries"], json!(["PT"]));
    let chef = full("Pastry Chef").await;
    assert_eq!(
        [&chef["city"], &chef["region"], &chef["country"]],
        [&json!("Vienna"), &json!("Vienna"), &json!("AT")]
    );
    let driver = full("Delivery Driver").await;
    assert_eq!(
        [
            &driver["city"],
            &driver["region"],
            &driver["country"],
            &driver["postal_code"]
        ],
        [
            &json!("Lyon"),
            &json!("Auvergne-Rhône-Alpes"),
            &json!("FR"),
            &json!("69001")
        ]
    );
    assert_eq!(
        full("Support Agent").await["remote_countries"],
        json!(["FR"])
    );
    // JSON Feed: the author is the employer.
    assert_eq!(
        by_title("Miller Apprentice")["company_name"],
        "Guild of Millers"
    );
}

async fn bad_reads_change_nothing(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
    })
    .await;
    let feeds = Feeds::start().await;
    let fetcher = t.app.imports.clone();
    feeds.put("gh", fixture("greenhouse.json"), None);
    let s = source(&t, "greenhouse", &feeds.url("gh"), json!({})).await;
    assert_eq!(run_now(&t, &fetcher, &s).await.created, 3);
    let before = all_jobs(&t).await;
    let fixture_text = fixture("greenhouse.json");
    for (what, body) in [
        (
            "truncated",
            fixture_text[..fixture_text.len() / 2].to_string(),
        ),
        (
            "not a job list",
            "{\"message\": \"rate limited\"}".to_string(),
        ),
        ("html", "<html>maintenance</html>".to_string()),
    ] {
        feeds.put("gh", body, None);
        let c = run_now(&t, &fetcher, &s).await;
        assert!(c.error.is_some(), "{what}: {c:?}");
        assert_eq!(all_jobs(&t).await, before, "{what}");
    }
    // Too large for the limit.
    feeds.put("gh", fixture("greenhouse.json"), None);
    let small = t.app.imports.clone().with_max_bytes(1000);
    let c = run_now(&t, &small, &s).await;
    assert!(
        c.error.as_deref().is_some_and(|e| e.contains("larger")),
        "{c:?}"
    );
    // Gone at the source.
    let gone = source(&t, "greenhouse", &feeds.url("nothing-here"), json!({})).await;
    let c = run_now(&t, &fetcher, &gone).await;
    assert_eq!(c.error.as_deref(), Some("answered 404"));
    assert_eq!(all_jobs(&t).await, before);
    assert_eq!(events_named(&t, "job.expired").await, 0);
}

async fn private_addresses_are_refused(b: Backend) {
    // The defaults: no loopback or private address.
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
    })
    .await;
    let feeds = Feeds::start().await;
    feeds.put("gh", fixture("greenhouse.json"), None);
    let mut config = t.app.config.webhooks.clone();
    config.allow_private_targets = false;
    let strict = Fetcher::new(&config).unwrap();
    for url in [
        feeds.url("gh"),
        feeds.url("gh").replace("127.0.0.1", "localhost"),
    ] {
        let s = source(&t, "greenhouse", &url, json!({})).await;
        let c = run_now(&t, &strict, &s).await;
        let e = c.error.clone().unwrap_or_default();
        assert!(
            e.contains("not a public address") || e.contains("not reached"),
            "{url}: {c:?}"
        );
        assert!(all_jobs(&t).await.is_empty());
    }
    // Bad settings are field errors.
    let Value::Object(body) = json!({"kind": "workday", "url": "ftp://x", "every": 1}) else {
        unreachable!()
    };
    match imports::create(t.db(), t.org_id, Input::new(body)).await {
        Err(jobboard_domain::Error::Invalid(errors)) => {
            let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
            assert_eq!(fields, ["kind", "url", "every"]);
        }
        other => panic!("{other:?}"),
    }
}

async fn a_board_requiring_salaries_refuses_imports_without(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
    })
    .await;
    crate::payments::set_org(&t, json!({"require_salary": true})).await;
    let feeds = Feeds::start().await;
    feeds.put("acme-bakery", fixture("lever.json"), None);
    let s = source(&t, "lever", &feeds.url("acme-bakery"), json!({})).await;
    let c = run_now(&t, &t.app.imports.clone(), &s).await;
    // The night baker's posting carries its range; the writer's does not.
    assert_eq!((c.created, c.refused), (1, 1), "{c:?}");
    let (id, why) = &c.refusals[0];
    assert_eq!(id, "7bd21346-8e0c-4494-8e7a-3eb92ff77903", "{c:?}");
    assert!(
        why.contains("salary_min") && why.contains("salary range"),
        "{why}"
    );
    // The run's report says so.
    let listed = imports::get(t.db(), Some(t.org_id), s.id).await.unwrap();
    let report = serde_json::to_value(&listed).unwrap();
    assert_eq!(report["last_result"]["refused"], 1, "{report}");
}
