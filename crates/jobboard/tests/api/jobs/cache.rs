//! The cache of rendered lists: never stale after a write (on this node or another) or an
//! expiry, and concurrent misses rendering a list once.

use reqwest::Method;
use serde_json::{Value, json};

use super::*;
use crate::backends;

backends!(
    cached_lists_see_every_write,
    a_write_on_another_node_is_seen_at_once,
    a_cached_list_turns_over_when_a_job_expires,
    concurrent_misses_render_a_list_once,
);

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
    let in_an_hour = t.app.clock.now().plus(chrono::Duration::hours(1));
    create_active(&t, "Lasting", json!({})).await;
    create_active(
        &t,
        "Leaving",
        json!({"expires_at": in_an_hour.to_rfc3339()}),
    )
    .await;
    let before = read_twice(&t, "/jobs").await;
    assert_eq!(titles(&before), ["Leaving", "Lasting"]);
    // No write and no scheduler pass happen in between: only the service's clock moves
    // past the job's expiry (two hours, without waiting), and the cached rendering must
    // not outlive it.
    t.app
        .clock
        .advance(std::time::Duration::from_secs(2 * 3600));
    let after = t.get("/jobs").await;
    assert_eq!(titles(&after), ["Lasting"]);
    assert_eq!(after.body["meta"]["pagination"]["total_items"], 1);
    assert_ne!(after.header("etag"), before.header("etag"));
    // The scheduler reads the same clock: its pass moves the job to expired.
    assert!(titles(&t.get("/jobs?status=expired").await).is_empty());
    assert_eq!(jobboard::scheduler::tick(&t.app).await, 1);
    assert_eq!(titles(&t.get("/jobs?status=expired").await), ["Leaving"]);
    // And so do the operations: a job created now is stamped past the old expiry.
    let later = create_active(&t, "Later", json!({})).await;
    let created = t.get(&format!("/jobs/{later}")).await.body["data"]["created_at"].clone();
    let created = jobboard_store::Ts::parse(created.as_str().unwrap()).unwrap();
    assert!(created > in_an_hour, "{created} is after {in_an_hour}");
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
