//! Instant indexing against a stand-in of the search engines on 127.0.0.1
//! (`scripts/indexing-standin.py`: Google's token endpoint checking the signed assertion
//! with Google's own `google-auth`, the Indexing API's publish endpoint with its daily
//! quota, and IndexNow fetching the key file): one notification per publish, change and
//! expiry, none for what no one sees; the quota ledger (featured and newest first, the
//! rest the next day, never past it); retries; the key file; the command line.

use std::{
    process::{Child, Command},
    time::Duration,
};

use jobboard::delivery::indexing::{self, Endpoints, HasSetup};
use jobboard_domain::indexing::{self as domain, Change};
use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    each_change_is_told_once,
    concurrent_creations_are_each_told_once,
    an_imports_new_jobs_are_each_told_once,
    the_quota_sends_featured_and_newest_first_and_the_rest_next_day,
    failed_deliveries_are_tried_again,
    the_command_line_sets_the_accounts_and_never_prints_the_key,
);

const INDEXNOW_KEY: &str = "d5a2c1f0-4b3e-4e8f-9a7b-6c5d4e3f2a10";

fn fixture() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/indexing/service-account.json")
        .to_string_lossy()
        .into_owned()
}

/// The stand-in, running until dropped.
pub struct Engines {
    child: Child,
    base: String,
    client: reqwest::Client,
}

impl Drop for Engines {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Engines {
    /// Starts the stand-in with a daily quota of `quota` (`None` when Google's library
    /// is missing outside CI: the test says SKIPPED).
    fn start(test: &str, quota: u32) -> Option<Engines> {
        if !python_has(
            test,
            "import google.auth.jwt, cryptography",
            "Python's google-auth (scripts/test-tools.sh)",
        ) {
            return None;
        }
        let mut cmd = Command::new(python());
        cmd.arg(script("indexing-standin.py"))
            .arg(fixture())
            .env("STANDIN_QUOTA", quota.to_string());
        let (child, base) = start_standin(cmd);
        jobboard::init_tls();
        Some(Engines {
            child,
            base,
            client: reqwest::Client::builder().no_proxy().build().unwrap(),
        })
    }

    fn endpoints(&self) -> Endpoints {
        Endpoints {
            indexnow_url: format!("{}/indexnow", self.base),
            google_indexing_url: format!("{}/v3/urlNotifications:publish", self.base),
            google_token_url: format!("{}/token", self.base),
        }
    }

    async fn received(&self) -> Value {
        self.client
            .get(format!("{}/test/received", self.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn control(&self, what: &str) {
        let r = self
            .client
            .post(format!("{}/test/{what}", self.base))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }

    /// Google's notifications so far: (path, type).
    async fn google(&self, t: &TestApp) -> Vec<(String, String)> {
        let r = self.received().await;
        assert_eq!(r["refused"], json!([]), "nothing refused: {r}");
        r["google"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let url = n["url"].as_str().unwrap();
                (
                    url.strip_prefix(&t.base).unwrap_or(url).to_string(),
                    n["type"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// IndexNow's submissions so far: the paths of each.
    async fn indexnow(&self, t: &TestApp) -> Vec<Vec<String>> {
        let r = self.received().await;
        r["indexnow"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                assert_eq!(s["key"], INDEXNOW_KEY);
                s["urls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|u| {
                        u.as_str()
                            .unwrap()
                            .strip_prefix(&t.base)
                            .unwrap()
                            .to_string()
                    })
                    .collect()
            })
            .collect()
    }
}

/// A test app whose worker and scheduler are off (notices are drained), with the
/// engines' endpoints pointed at the stand-in and both accounts set.
async fn app(b: Backend, engines: &Engines, quota: i64) -> TestApp {
    let endpoints = engines.endpoints();
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
        c.indexing = endpoints;
    })
    .await;
    domain::update(
        t.db(),
        t.org_id,
        Change {
            indexnow_key: Some(Some(INDEXNOW_KEY.into())),
            google_key: Some(Some(std::fs::read_to_string(fixture()).unwrap())),
            google_quota: Some(quota),
            ..Change::default()
        },
    )
    .await
    .unwrap();
    t
}

/// Delivers every notice due, as the worker does, with the board's links on this test
/// server.
async fn drain(t: &TestApp) -> usize {
    let mut setup: indexing::Setup = HasSetup::setup(&t.app);
    setup.links.base_url = t.base.clone();
    setup.links.domain_scheme = "http".into();
    indexing::drain(setup).await
}

async fn create(t: &TestApp, body: Value) -> (String, String) {
    let mut body = body;
    let o = body.as_object_mut().unwrap();
    o.entry("description").or_insert(json!("<p>A job.</p>"));
    o.entry("company_name").or_insert(json!("Acme"));
    let r = t.post("/jobs", body).await;
    r.expect(201);
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let job = t.get(&format!("/jobs/{id}")).await;
    (
        id,
        format!("/jobs/{}", job.body["data"]["slug"].as_str().unwrap()),
    )
}

fn told(path: &str, kind: &str) -> (String, String) {
    (path.to_string(), kind.to_string())
}

async fn each_change_is_told_once(b: Backend) {
    let Some(engines) = Engines::start("each_change_is_told_once", 200) else {
        return;
    };
    let t = app(b, &engines, 200).await;
    let (a, a_path) = create(&t, json!({"title": "Baker", "status": "active"})).await;
    let (pending, pending_path) = create(&t, json!({"title": "Cook"})).await;
    drain(&t).await;
    assert_eq!(engines.google(&t).await, [told(&a_path, "URL_UPDATED")]);
    assert_eq!(engines.indexnow(&t).await, [vec![a_path.clone()]]);

    // Published; changed (twice before the worker runs: told once); a change no one
    // sees (sticky) tells nothing.
    t.patch(&format!("/jobs/{pending}"), json!({"status": "active"}))
        .await
        .expect(200);
    t.patch(&format!("/jobs/{a}"), json!({"title": "Night baker"}))
        .await
        .expect(200);
    t.patch(&format!("/jobs/{a}"), json!({"location": "Lyon"}))
        .await
        .expect(200);
    drain(&t).await;
    t.patch(&format!("/jobs/{a}"), json!({"is_sticky": true}))
        .await
        .expect(200);
    assert_eq!(drain(&t).await, 0);
    let google = engines.google(&t).await;
    assert_eq!(google.len(), 3, "{google:?}");
    assert!(google.contains(&told(&pending_path, "URL_UPDATED")));
    assert_eq!(
        google
            .iter()
            .filter(|g| **g == told(&a_path, "URL_UPDATED"))
            .count(),
        2
    );
    // IndexNow took both pages in one request.
    let mut second = engines.indexnow(&t).await[1].clone();
    second.sort();
    let mut both = vec![a_path.clone(), pending_path.clone()];
    both.sort();
    assert_eq!(second, both);

    // Taken down: expired by staff, deleted, and expired by the scheduler's pass.
    let (c, c_path) = create(
        &t,
        json!({"title": "Waiter", "status": "active", "expires_at": "2099-01-01T00:00:00Z"}),
    )
    .await;
    drain(&t).await;
    t.patch(&format!("/jobs/{a}"), json!({"status": "expired"}))
        .await
        .expect(200);
    t.delete(&format!("/jobs/{pending}")).await.expect(200);
    let later: jobboard_store::Ts = serde_json::from_value(json!("2099-01-02T00:00:00Z")).unwrap();
    jobboard_domain::jobs::expire_due(t.db(), later)
        .await
        .unwrap();
    drain(&t).await;
    let google = engines.google(&t).await;
    assert_eq!(
        google[google.len() - 3..]
            .iter()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>(),
        [
            told(&a_path, "URL_DELETED"),
            told(&pending_path, "URL_DELETED"),
            told(&c_path, "URL_DELETED")
        ]
        .into_iter()
        .collect()
    );
    assert_eq!(google.len(), 7, "{google:?}");
    let _ = c;

    // The key file is the board's; another name is not found.
    let r = t.page(&format!("/{INDEXNOW_KEY}.txt")).await;
    r.expect(200);
    assert_eq!(r.text, INDEXNOW_KEY);
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    t.page("/0123456789abcdef.txt").await.expect(404);
    let r = t
        .req(reqwest::Method::POST, "/anything")
        .no_key()
        .send()
        .await;
    r.expect_error(404, "route_not_found");

    // Off: nothing is written.
    domain::update(
        t.db(),
        t.org_id,
        Change {
            indexing: Some(false),
            ..Change::default()
        },
    )
    .await
    .unwrap();
    create(&t, json!({"title": "Porter", "status": "active"})).await;
    assert_eq!(drain(&t).await, 0);
    assert_eq!(engines.google(&t).await.len(), 7);
}

async fn concurrent_creations_are_each_told_once(b: Backend) {
    let Some(engines) = Engines::start("concurrent_creations_are_each_told_once", 200) else {
        return;
    };
    let t = app(b, &engines, 200).await;
    // 24 creations at once (on SQLite committed in batches, each batch's notices written
    // by one statement), two of every three published, half of them under one title.
    let bodies: Vec<Value> = (0..24)
        .map(|i| {
            let title = if i % 2 == 0 { "Baker".to_string() } else { format!("Cook {i}") };
            let status = if i % 3 == 2 { "pending" } else { "active" };
            json!({"title": title, "status": status, "description": "<p>A job.</p>", "company_name": "Acme"})
        })
        .collect();
    let results =
        crate::members::futures_join_all(bodies.iter().map(|b| t.post("/jobs", b.clone()))).await;
    let mut published = std::collections::BTreeSet::new();
    for r in &results {
        r.expect(201);
        if r.body["data"]["status"] == "active" {
            published.insert(format!(
                "/jobs/{}",
                r.body["data"]["slug"].as_str().unwrap()
            ));
        }
    }
    assert_eq!(published.len(), 16);
    drain(&t).await;
    let google = engines.google(&t).await;
    assert_eq!(google.len(), 16, "{google:?}");
    let told_google: std::collections::BTreeSet<String> = google
        .into_iter()
        .map(|(path, kind)| {
            assert_eq!(kind, "URL_UPDATED");
            path
        })
        .collect();
    assert_eq!(told_google, published);
    let told_indexnow: Vec<String> = engines.indexnow(&t).await.into_iter().flatten().collect();
    assert_eq!(told_indexnow.len(), 16, "{told_indexnow:?}");
    assert_eq!(
        told_indexnow
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>(),
        published
    );
}

async fn an_imports_new_jobs_are_each_told_once(b: Backend) {
    use crate::imports::{Feeds, fixture, run_now, source};
    let Some(engines) = Engines::start("an_imports_new_jobs_are_each_told_once", 200) else {
        return;
    };
    let t = app(b, &engines, 200).await;
    // A page of imported jobs is stored together: their notices written by one statement.
    let feeds = Feeds::start().await;
    feeds.put("gh", fixture("greenhouse.json"), None);
    let s = source(&t, "greenhouse", &feeds.url("gh"), json!({})).await;
    let c = run_now(&t, &t.app.imports.clone(), &s).await;
    assert_eq!(c.created, 3, "{c:?}");
    let listed = t.get("/jobs").await;
    listed.expect(200);
    let paths: std::collections::BTreeSet<String> = listed.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| format!("/jobs/{}", j["slug"].as_str().unwrap()))
        .collect();
    assert_eq!(paths.len(), 3);
    drain(&t).await;
    let google: std::collections::BTreeSet<(String, String)> =
        engines.google(&t).await.into_iter().collect();
    let expected: std::collections::BTreeSet<(String, String)> =
        paths.iter().map(|p| told(p, "URL_UPDATED")).collect();
    assert_eq!(google, expected);
    let indexnow: std::collections::BTreeSet<String> =
        engines.indexnow(&t).await.into_iter().flatten().collect();
    assert_eq!(indexnow, paths);
}

async fn the_quota_sends_featured_and_newest_first_and_the_rest_next_day(b: Backend) {
    let Some(engines) = Engines::start("the_quota_sends_featured", 3) else {
        return;
    };
    let t = app(b, &engines, 3).await;
    let mut paths = Vec::new();
    for i in 0..6 {
        let sticky = i == 0;
        let (_, p) = create(
            &t,
            json!({"title": format!("Job {i}"), "status": "active", "is_sticky": sticky}),
        )
        .await;
        paths.push(p);
    }
    drain(&t).await;
    // Within the quota: the featured one, then the newest (delivered side by side, so
    // in any order).
    let sent = |from: usize| {
        let engines = &engines;
        let t = &t;
        async move {
            let mut g: Vec<String> = engines.google(t).await[from..]
                .iter()
                .map(|(p, kind)| {
                    assert_eq!(kind, "URL_UPDATED");
                    p.clone()
                })
                .collect();
            g.sort();
            g
        }
    };
    let pick = |i: &[usize]| {
        let mut v: Vec<String> = i.iter().map(|i| paths[*i].clone()).collect();
        v.sort();
        v
    };
    assert_eq!(sent(0).await, pick(&[0, 5, 4]));
    // Nothing more today, whatever runs.
    assert_eq!(drain(&t).await, 0);
    t.app.clock.advance(Duration::from_secs(3_600));
    assert_eq!(drain(&t).await, 0);
    assert_eq!(engines.google(&t).await.len(), 3);
    // The next quota day: the rest.
    engines.control("next-day").await;
    t.app.clock.advance(Duration::from_secs(86_400));
    drain(&t).await;
    assert_eq!(sent(3).await, pick(&[3, 2, 1]));
    let r = engines.received().await;
    assert!(
        r["google"].as_array().unwrap()[3..]
            .iter()
            .all(|n| n["day"] == 1)
    );
    // IndexNow has no such quota: all six at once.
    assert_eq!(engines.indexnow(&t).await[0].len(), 6);
}

async fn failed_deliveries_are_tried_again(b: Backend) {
    let Some(engines) = Engines::start("failed_deliveries_are_tried_again", 200) else {
        return;
    };
    let t = app(b, &engines, 200).await;
    engines.control("fail?n=2").await;
    let (_, path) = create(&t, json!({"title": "Baker", "status": "active"})).await;
    drain(&t).await;
    assert!(engines.google(&t).await.is_empty());
    assert!(engines.indexnow(&t).await.is_empty());
    let notices = jobboard_domain::indexing::store::list(t.db(), t.org_id, 10)
        .await
        .unwrap();
    assert_eq!(notices.len(), 2);
    for n in &notices {
        assert_eq!((n.status.as_str(), n.attempts), ("pending", 1));
        assert!(n.last_error.as_deref().unwrap().starts_with("503"), "{n:?}");
    }
    // Not before its time; then once.
    assert_eq!(drain(&t).await, 0);
    t.app.clock.advance(Duration::from_secs(61));
    drain(&t).await;
    assert_eq!(engines.google(&t).await, [told(&path, "URL_UPDATED")]);
    assert_eq!(engines.indexnow(&t).await, [vec![path.clone()]]);
    let notices = jobboard_domain::indexing::store::list(t.db(), t.org_id, 10)
        .await
        .unwrap();
    assert!(
        notices
            .iter()
            .all(|n| n.status == "sent" && n.attempts == 2)
    );
    // Kept for the log 30 days, then gone.
    let now = t.app.clock.now();
    jobboard_domain::retention::purge_index_notices(t.db(), now)
        .await
        .unwrap();
    assert_eq!(
        jobboard_domain::indexing::store::list(t.db(), t.org_id, 10)
            .await
            .unwrap()
            .len(),
        2
    );
    t.app.clock.advance(Duration::from_secs(31 * 86_400));
    let n = jobboard_domain::retention::purge_index_notices(t.db(), t.app.clock.now())
        .await
        .unwrap();
    assert_eq!(n, 2);
}

async fn the_command_line_sets_the_accounts_and_never_prints_the_key(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let db = t.database_url.clone();
    let id = t.org_id.to_string();
    let key = std::fs::read_to_string(fixture()).unwrap();
    let (ok, out, err) = run_cli(
        &[
            "orgs",
            "update",
            &id,
            "--google-indexing-key",
            &fixture(),
            "--indexnow-key",
            INDEXNOW_KEY,
            "--google-indexing-quota",
            "50",
        ],
        &db,
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("IndexNow key set, Google Indexing API key set (quota 50 a day)"),
        "{out}"
    );
    let secret: Value = serde_json::from_str(&key).unwrap();
    let pem = secret["private_key"].as_str().unwrap();
    let body = pem.lines().nth(1).unwrap();
    assert!(!out.contains(body) && !err.contains(body));
    // A file that is not a service account key, a bad IndexNow key: refused, said why.
    let dir = std::env::temp_dir().join(format!("jobboard-indexing-{}", uuid::Uuid::now_v7()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"client_email": "a@b.c", "private_key": "nope"}"#).unwrap();
    let (ok, _, err) = run_cli(
        &[
            "orgs",
            "update",
            &id,
            "--google-indexing-key",
            bad.to_str().unwrap(),
        ],
        &db,
    );
    assert!(!ok && err.contains("private_key"), "{err}");
    let (ok, _, err) = run_cli(&["orgs", "update", &id, "--indexnow-key", "short"], &db);
    assert!(!ok && err.contains("8 to 128"), "{err}");
    let (ok, out, err) = run_cli(
        &[
            "orgs",
            "update",
            &id,
            "--indexing",
            "off",
            "--indexnow-key",
            "",
        ],
        &db,
    );
    assert!(ok, "{err}");
    assert!(out.contains("indexing off, IndexNow no key"), "{out}");
    let settings = domain::settings(t.db(), t.org_id).await.unwrap();
    assert_eq!(
        (
            settings.indexing,
            settings.indexnow_key,
            settings.google,
            settings.google_indexing_quota
        ),
        (false, None, true, 50)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
