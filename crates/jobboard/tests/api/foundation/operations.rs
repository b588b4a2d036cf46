//! Operations: the operations endpoints, memory budgets, the API description and its
//! OpenAPI snapshot, and the scheduler inside `serve`.

use reqwest::Method;
use serde_json::json;

use crate::{backends, common::*};

backends!(
    operations_endpoints,
    memory_budgets_are_applied_and_reported,
    api_description,
    the_scheduler_runs_inside_serve,
);

async fn operations_endpoints(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t.req(Method::GET, "/healthz").no_key().send().await;
    r.expect(200);
    assert_eq!(r.body["status"], "ok");
    let r = t.req(Method::GET, "/readyz").no_key().send().await;
    r.expect(200);
    assert_eq!(r.body["status"], "ready");
    t.get("/categories").await.expect(200);
    t.get("/nope").await;
    let r = t.metrics().await;
    r.expect(200);
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    assert!(r.text.contains("jobboard_http_requests_total{route=\"/api/categories\",method=\"GET\",status=\"200\"} 1"), "{}", r.text);
    assert!(r.text.contains(
        "jobboard_http_request_duration_seconds_bucket{route=\"/api/categories\",le=\"+Inf\"}"
    ));
    assert!(r.text.contains("jobboard_outbox_pending_events 0"));
}

/// The page cache budget is shared out between the connections (SQLite), the rendered
/// cache budget between the caches, and /metrics reports both with the process's memory.
async fn memory_budgets_are_applied_and_reported(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.db_page_cache = 9 << 20;
        c.render_cache = 8 << 20;
    })
    .await;
    // Lists are cached within their share of the rendered budget.
    t.get("/jobs").await.expect(200);
    let r = t.metrics().await;
    r.expect(200);
    assert_eq!(
        gauge(&r.text, "jobboard_render_cache_budget_bytes"),
        (8 << 20) as f64
    );
    assert!(
        gauge(&r.text, "jobboard_resident_memory_bytes") > 1e6,
        "{}",
        r.text
    );
    assert!(
        r.text.contains("jobboard_cache_entries{cache=\"jobs\"} 1"),
        "{}",
        r.text
    );
    let page_cache = gauge(&r.text, "jobboard_db_page_cache_budget_bytes");
    match b {
        // 8 readers and the writer: 1 MiB each.
        Backend::Sqlite => {
            assert_eq!(page_cache, (9 << 20) as f64);
            let size: i64 = jobboard_store::dispatch!(t.db().reader(), p => {
                sqlx::query_scalar("PRAGMA cache_size").fetch_one(p).await.unwrap()
            });
            assert_eq!(size, -1024);
        }
        Backend::Postgres => assert_eq!(page_cache, 0.0),
    }
    assert_eq!(t.app.jobs_cache.max_bytes(), 4 << 20);
    assert_eq!(t.app.pages_cache.max_bytes(), 2 << 20);
    assert_eq!(t.app.cms_cache.max_bytes(), 2 << 20);
}

async fn api_description(b: Backend) {
    let t = TestApp::spawn(b).await;
    let r = t
        .req(Method::GET, "/api/openapi.json")
        .no_key()
        .send()
        .await;
    r.expect(200);
    assert_eq!(r.body["openapi"], "3.1.0");
    assert_eq!(r.body["servers"][0]["url"], "/api");
    assert!(r.body["paths"]["/categories"]["post"]["responses"]["422"].is_object());
    assert_eq!(
        r.body,
        serde_json::to_value(jobboard::api::openapi()).unwrap()
    );
    let r = t.req(Method::GET, "/api/docs/").no_key().send().await;
    r.expect(200);
    assert!(r.text.contains("swagger-ui"), "{}", r.text);
    // Every asset the page loads is served by us.
    for asset in [
        "swagger-ui.css",
        "swagger-ui-bundle.js",
        "swagger-initializer.js",
    ] {
        let r = t
            .req(Method::GET, &format!("/api/docs/{asset}"))
            .no_key()
            .send()
            .await;
        r.expect(200);
    }
    assert!(
        !r.text.contains("https://"),
        "docs page must not load remote assets"
    );
    let r = t.req(Method::GET, "/api/docs/errors").no_key().send().await;
    r.expect(200);
    for (code, _, _) in jobboard::error::CODES {
        assert!(r.text.contains(&format!("id=\"{code}\"")), "missing {code}");
    }
}

async fn the_scheduler_runs_inside_serve(b: Backend) {
    // The default configuration runs the scheduler in the serving process.
    let t = TestApp::spawn(b).await;
    let r = t.post("/jobs", json!({"title": "Soon gone", "description": "x", "company_name": "Acme", "status": "active"})).await;
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let past = jobboard_store::Ts::now().plus(chrono::Duration::seconds(-1));
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query("UPDATE jobs SET expires_at = $1 WHERE id = $2")
            .bind(past)
            .bind(uuid::Uuid::parse_str(&id).unwrap())
            .execute(p)
            .await
            .unwrap();
    });
    // Two completed passes: at least one started after the job became due.
    let mut passes = t.app.scheduler_passes.subscribe();
    passes.borrow_and_update();
    for _ in 0..2 {
        tokio::time::timeout(std::time::Duration::from_secs(30), passes.changed())
            .await
            .unwrap()
            .unwrap();
    }
    let r = t.get(&format!("/jobs/{id}")).await;
    assert_eq!(r.body["data"]["status"], "expired");
    let kinds: Vec<String> = jobboard_store::events::list_for_org(t.db(), t.org_id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event_type)
        .collect();
    assert!(kinds.contains(&"job.expired".to_string()), "{kinds:?}");
}

/// The whole OpenAPI document is locked: any API change shows up as a diff of
/// `openapi.json` at the repository root. Regenerate with `UPDATE_SNAPSHOTS=1 cargo test openapi`.
#[test]
fn openapi_document_matches_the_snapshot() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openapi.json");
    let current = serde_json::to_string_pretty(&jobboard::api::openapi()).unwrap() + "\n";
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::write(path, &current).unwrap();
    }
    let stored = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        stored == current,
        "the OpenAPI document changed; review the difference and run `UPDATE_SNAPSHOTS=1 cargo test openapi` to accept it"
    );
}
