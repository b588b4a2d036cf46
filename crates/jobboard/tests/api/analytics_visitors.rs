//! Distinct visitors over long ranges: exact up to a bound of (day, visitor) rows,
//! estimated from daily sketches beyond it, and unchanged by an upgrade from before
//! sketches existed.

use chrono::{Duration, Utc};
use jobboard_domain::{
    JobId,
    analytics::{EXACT_VISITOR_ROWS, SKETCH_WORTHWHILE, hll::STANDARD_ERROR},
};
use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    distinct_visitors_are_estimated_beyond_the_exact_bound,
    few_visitors_a_day_are_counted_exactly_beyond_the_bound,
    upgrading_keeps_the_figures_and_builds_the_sketches,
    serve_builds_missing_sketches_in_the_background,
);

/// The date `days_ago` days before today. Events placed on it at 00:00:00Z are never in
/// the future, whatever the hour the suite runs at.
fn day(days_ago: i64) -> String {
    (Utc::now() - Duration::days(days_ago))
        .date_naive()
        .format("%Y-%m-%d")
        .to_string()
}

/// Days seeded: just enough days of 1,000 visitors each to exceed the exact bound.
fn seeded_days() -> i64 {
    EXACT_VISITOR_ROWS / 1000 + 1
}

/// Distinct visitors of the last `days` seeded days.
fn distinct_over(days: i64) -> i64 {
    (days - 1) * 500 + 1000
}

/// One request per day, `seeded_days()` days back from today: 1,000 views of `job` a day
/// by visitors `d*500 .. d*500+1000`, so consecutive days share half of their visitors.
async fn seed(t: &TestApp, job: JobId) {
    for d in 0..seeded_days() {
        let at = format!("{}T00:00:00Z", day(d));
        let events: Vec<Value> = (0..1000)
            .map(|i| json!({"type": "job_view", "job_id": job, "visitor_id": format!("v{}", d * 500 + i), "occurred_at": at}))
            .collect();
        t.post("/analytics/events", json!({ "events": events }))
            .await
            .expect(200);
    }
}

fn assert_estimate(got: &Value, truth: i64) {
    let got = got.as_i64().expect("a number");
    let err = (got - truth).abs() as f64 / truth as f64;
    assert!(
        err <= 3.0 * STANDARD_ERROR,
        "estimate {got} for {truth} distinct visitors"
    );
}

async fn distinct_visitors_are_estimated_beyond_the_exact_bound(b: Backend) {
    let t = TestApp::spawn(b).await;
    let busy = t.insert_job(t.org_id, "Busy").await;
    let quiet = t.insert_job(t.org_id, "Quiet").await;
    seed(&t, busy).await;
    t.post(
        "/analytics/events",
        json!({"events": [
            {"type": "job_view", "job_id": quiet, "visitor_id": "q1"},
            {"type": "job_view", "job_id": quiet, "visitor_id": "q2"},
            {"type": "job_view", "job_id": quiet, "visitor_id": "v0"},
            {"type": "job_view", "job_id": quiet, "visitor_id": "q1", "occurred_at": format!("{}T08:00:00Z", day(3))},
        ]}),
    )
    .await
    .expect(200);
    let days = seeded_days();
    let total = distinct_over(days) + 2; // q1 and q2 are new to the site; v0 is not

    // Beyond the bound: an estimate, flagged, within three standard errors.
    let r = t.get("/analytics?period=30d").await;
    r.expect(200);
    assert_eq!(
        r.body["meta"],
        json!({"period": "30d", "from": day(29), "to": day(0), "visitors_exact": false})
    );
    assert_estimate(&r.body["data"]["visitors"], total);
    assert_eq!(r.body["data"]["job_views"], days * 1000 + 4);
    // The daily figures stay exact.
    let series = r.body["data"]["timeseries"].as_array().unwrap();
    assert_eq!(series[29]["visitors"], 1002);
    assert_eq!(series[28]["visitors"], 1000);
    assert_eq!(series[26]["visitors"], 1001);
    let custom = t
        .get(&format!("/analytics?from={}&to={}", day(days - 1), day(0)))
        .await;
    assert_eq!(custom.body["meta"]["visitors_exact"], false);
    assert_eq!(custom.body["data"]["visitors"], r.body["data"]["visitors"]);

    // Within the bound: exact, and no flag.
    let r = t.get("/analytics?period=7d").await;
    assert_eq!(
        r.body["meta"],
        json!({"period": "7d", "from": day(6), "to": day(0)})
    );
    assert_eq!(r.body["data"]["visitors"], distinct_over(7) + 2);

    // Per job: the same rule over the rows of all the jobs asked for; a small job's
    // estimate is still its exact figure.
    let r = t
        .get(&format!("/analytics/jobs?jobIds={busy},{quiet}&period=30d"))
        .await;
    r.expect(200);
    assert_eq!(
        r.body["meta"],
        json!({"period": "30d", "total_jobs": 2, "visitors_exact": false})
    );
    assert_estimate(
        &r.body["data"]["visitors"][busy.to_string()],
        distinct_over(days),
    );
    assert_eq!(r.body["data"]["visitors"][quiet.to_string()], 3);
    assert_eq!(r.body["data"]["views"][busy.to_string()], days * 1000);
    let r = t
        .get(&format!("/analytics/jobs?jobIds={busy},{quiet}&period=7d"))
        .await;
    assert_eq!(r.body["meta"], json!({"period": "7d", "total_jobs": 2}));
    assert_eq!(
        r.body["data"]["visitors"],
        json!({busy.to_string(): distinct_over(7), quiet.to_string(): 3})
    );
}

async fn few_visitors_a_day_are_counted_exactly_beyond_the_bound(b: Backend) {
    // 100 jobs, each seen by one visitor a day out of 7 of its own: more visitor rows than
    // the bound, but one per job and day, where a sketch per day would save nothing.
    let t = TestApp::spawn(b).await;
    let mut jobs = Vec::new();
    for i in 0..100 {
        jobs.push(t.insert_job(t.org_id, &format!("Job {i}")).await);
    }
    let days = EXACT_VISITOR_ROWS / 100 + 1;
    const { assert!(SKETCH_WORTHWHILE > 1) };
    let events: Vec<Value> = (0..days)
        .flat_map(|d| {
            let at = format!("{}T00:00:00Z", day(d));
            jobs.iter().enumerate().map(move |(k, j)| {
                json!({"type": "job_view", "job_id": j, "visitor_id": format!("j{k}-{}", d % 7), "occurred_at": at})
            })
        })
        .collect();
    for chunk in events.chunks(1000) {
        t.post("/analytics/events", json!({ "events": chunk }))
            .await
            .expect(200);
    }
    let ids: Vec<String> = jobs.iter().map(|j| j.to_string()).collect();
    let r = t
        .get(&format!(
            "/analytics/jobs?jobIds={}&period=12mo",
            ids.join(",")
        ))
        .await;
    r.expect(200);
    assert_eq!(r.body["meta"], json!({"period": "12mo", "total_jobs": 100}));
    for id in &ids {
        assert_eq!(r.body["data"]["visitors"][id], 7);
        assert_eq!(r.body["data"]["views"][id], days);
    }
    // The site sees 100 visitors a day: there the sketches are used.
    let r = t.get("/analytics?period=12mo").await;
    assert_eq!(r.body["meta"]["visitors_exact"], false);
    assert_estimate(&r.body["data"]["visitors"], 700);
}

async fn site_and_job_figures(t: &TestApp, job: JobId) -> (Value, Value, Value) {
    let long = t.get("/analytics?period=30d").await;
    long.expect(200);
    let short = t.get("/analytics?period=7d").await;
    short.expect(200);
    let jobs = t
        .get(&format!("/analytics/jobs?jobIds={job}&period=30d"))
        .await;
    jobs.expect(200);
    (long.body, short.body, jobs.body)
}

async fn upgrading_keeps_the_figures_and_builds_the_sketches(b: Backend) {
    let t = TestApp::spawn(b).await;
    let job = t.insert_job(t.org_id, "Upgraded").await;
    seed(&t, job).await;
    let before = site_and_job_figures(&t, job).await;
    assert_eq!(before.0["meta"]["visitors_exact"], false);

    // The database as version 6 left it: no per-day visitor counts, no sketches.
    jobboard_store::dispatch!(t.db().writer(), p => {
        for sql in [
            "ALTER TABLE analytics_daily DROP COLUMN sketch",
            "ALTER TABLE analytics_daily DROP COLUMN visitors",
            "DELETE FROM schema_migrations WHERE version = 7",
        ] {
            sqlx::query(sql).execute(p).await.unwrap();
        }
    });
    let applied = t.db().migrate().await.unwrap();
    assert_eq!(applied, ["0007_analytics_sketches"]);
    assert_eq!(site_and_job_figures(&t, job).await, before);

    // Days without a sketch (an upgrade interrupted before they were built) are read from
    // the visitor rows: the same figures. New visitors on such a day are counted too.
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query("UPDATE analytics_daily SET sketch = NULL").execute(p).await.unwrap();
    });
    assert_eq!(site_and_job_figures(&t, job).await, before);
    let events: Vec<Value> = (0..1000)
        .map(|i| json!({"type": "job_view", "job_id": job, "visitor_id": format!("new{i}")}))
        .collect();
    t.post("/analytics/events", json!({ "events": events }))
        .await
        .expect(200);
    let after = site_and_job_figures(&t, job).await;
    let total = distinct_over(seeded_days()) + 1000;
    assert_estimate(&after.0["data"]["visitors"], total);
    assert_eq!(after.1["data"]["visitors"], distinct_over(7) + 1000);
    assert_estimate(&after.2["data"]["visitors"][job.to_string()], total);
    // Building the missing sketches changes no figure.
    let built = jobboard_domain::analytics::rebuild_sketches(t.db())
        .await
        .unwrap();
    assert_eq!(built, 2 * seeded_days() as u64);
    assert_eq!(site_and_job_figures(&t, job).await, after);
}

async fn serve_builds_missing_sketches_in_the_background(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    let job = t.insert_job(t.org_id, "Background").await;
    for d in 0..3 {
        let at = format!("{}T00:00:00Z", day(d));
        let events: Vec<Value> = (0..50)
            .map(|i| json!({"type": "job_view", "job_id": job, "visitor_id": format!("b{}", d * 20 + i), "occurred_at": at}))
            .collect();
        t.post("/analytics/events", json!({ "events": events }))
            .await
            .expect(200);
    }
    let before = site_and_job_figures(&t, job).await;
    let db = t.db().clone();
    let count = |sql: &'static str| {
        let db = db.clone();
        async move {
            let n: i64 = jobboard_store::dispatch!(db.reader(), p => {
                sqlx::query_scalar(sql).fetch_one(p).await.unwrap()
            });
            n
        }
    };
    let missing = "SELECT COUNT(*) FROM analytics_daily WHERE sketch IS NULL AND visitors > 0";
    // As an upgrade from version 6 leaves the database: no sketches, the work recorded.
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query("UPDATE analytics_daily SET sketch = NULL").execute(p).await.unwrap();
        sqlx::query("INSERT INTO maintenance_tasks (name) VALUES ('analytics_sketches') ON CONFLICT DO NOTHING")
            .execute(p)
            .await
            .unwrap();
    });
    assert!(count(missing).await > 0);
    // A node starting now serves at once and builds them in the background.
    let mut config = jobboard::config::Config::with_database(&t.database_url);
    config.worker = false;
    let node = jobboard::server::App::start(config).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let _running = jobboard::server::spawn(node.clone(), listener).unwrap();
    let mut done = node.upgrades_done.subscribe();
    tokio::time::timeout(std::time::Duration::from_secs(60), done.wait_for(|d| *d))
        .await
        .expect("the background upgrade work finishes")
        .unwrap();
    assert_eq!(count(missing).await, 0);
    assert_eq!(count("SELECT COUNT(*) FROM maintenance_tasks").await, 0);
    assert_eq!(site_and_job_figures(&t, job).await, before);
}
