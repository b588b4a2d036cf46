//! Analytics: ingestion, per-job figures, site figures, periods and their boundaries.

use chrono::{Duration, Utc};
use jobboard_domain::JobId;
use reqwest::Method;
use serde_json::{Value, json};

use crate::{backends, common::*};

backends!(
    job_figures_count_views_clicks_visitors_and_applications,
    periods_include_exactly_their_days,
    anonymous_visitors_are_hashed_per_address_and_agent,
    ingestion_is_validated_all_or_nothing,
    job_ids_are_checked,
    reports_keep_their_key_order,
    a_visitor_is_one_visitor_whatever_other_databases_ingest,
    statements_as_long_as_a_list_are_not_kept_prepared,
);

#[test]
fn queries_are_documented_as_read() {
    let doc = serde_json::to_value(jobboard::api::openapi()).unwrap();
    let param = |path: &str, name: &str| -> Value {
        doc["paths"][path]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{path} {name}"))
            .clone()
    };
    let ids = param("/analytics/jobs", "jobIds");
    assert_eq!(ids["required"], true);
    assert_eq!(
        ids["schema"],
        json!({"type": "array", "items": {"type": "string", "format": "uuid"}, "minItems": 1, "maxItems": 100})
    );
    assert_eq!(
        (&ids["style"], &ids["explode"]),
        (&json!("form"), &json!(true))
    );
    let periods = json!(["7d", "30d", "6mo", "12mo"]);
    assert_eq!(
        param("/analytics/jobs", "period")["schema"]["enum"],
        periods
    );
    assert_eq!(param("/analytics", "period")["schema"]["enum"], periods);
    for day in ["from", "to"] {
        let schema = &param("/analytics", day)["schema"];
        assert_eq!(schema["format"], "date");
        assert_eq!(schema["pattern"], r"^\d{4}-\d{2}-\d{2}$");
    }
    let page = &param("/applications", "page")["schema"];
    assert_eq!(
        (&page["minimum"], &page["maximum"]),
        (&json!(1), &json!(1_000_000))
    );
    let status = &param("/applications", "status")["schema"];
    assert_eq!(status["maxItems"], 6);
    assert_eq!(
        status["items"]["enum"],
        json!([
            "new",
            "reviewing",
            "interviewing",
            "offered",
            "hired",
            "rejected"
        ])
    );
    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["EventsIn"]["additionalProperties"], false);
    assert_eq!(schemas["EventIn"]["additionalProperties"], false);
    assert_eq!(
        schemas["EventType"]["enum"],
        json!(["job_view", "apply_click", "page_view"])
    );
    assert_eq!(
        schemas["ReportPeriod"]["enum"],
        json!(["7d", "30d", "6mo", "12mo", "custom"])
    );
}

fn ts(days_ago: i64, hour: u32) -> String {
    let d = (Utc::now() - Duration::days(days_ago)).date_naive();
    format!("{}T{hour:02}:00:00Z", d.format("%Y-%m-%d"))
}

async fn ingest(t: &TestApp, events: Value) -> Resp {
    t.post("/analytics/events", json!({ "events": events }))
        .await
}

async fn job_figures_count_views_clicks_visitors_and_applications(b: Backend) {
    let t = TestApp::spawn(b).await;
    let j1 = t.insert_job(t.org_id, "One").await;
    let j2 = t.insert_job(t.org_id, "Two").await;
    let r = ingest(
        &t,
        json!([
            {"type": "job_view", "job_id": j1, "visitor_id": "v1"},
            {"type": "job_view", "job_id": j1, "visitor_id": "v1"},
            {"type": "job_view", "job_id": j1, "visitor_id": "v2"},
            {"type": "apply_click", "job_id": j1, "visitor_id": "v2"},
            {"type": "job_view", "job_id": j2, "visitor_id": "v3", "path": "/jobs/two", "referrer": "https://example.com/"},
            {"type": "page_view", "path": "/", "visitor_id": "v4"},
        ]),
    )
    .await;
    r.expect(200);
    assert_eq!(r.body["data"]["accepted"], 6);
    for _ in 0..2 {
        t.post(
            &format!("/jobs/{j1}/applications"),
            json!({"name": "A", "email": "a@example.com"}),
        )
        .await
        .expect(201);
    }
    let r = t.get(&format!("/analytics/jobs?jobIds={j1},{j2}")).await;
    r.expect(200);
    let (k1, k2) = (j1.to_string(), j2.to_string());
    assert_eq!(r.body["data"]["views"], json!({&k1: 3, &k2: 1}));
    assert_eq!(r.body["data"]["apply_clicks"], json!({&k1: 1, &k2: 0}));
    assert_eq!(r.body["data"]["visitors"], json!({&k1: 2, &k2: 1}));
    assert_eq!(r.body["data"]["applications"], json!({&k1: 2, &k2: 0}));
    assert_eq!(r.body["meta"], json!({"period": "30d", "total_jobs": 2}));
    // A second batch adds to the same day.
    ingest(
        &t,
        json!([{"type": "job_view", "job_id": j2, "visitor_id": "v1"}]),
    )
    .await
    .expect(200);
    let r = t
        .get(&format!("/analytics/jobs?jobIds={j2}&period=7d"))
        .await;
    assert_eq!(r.body["data"]["views"], json!({&k2: 2}));
    assert_eq!(r.body["data"]["visitors"], json!({&k2: 2}));
    assert_eq!(r.body["meta"]["period"], "7d");
}

async fn periods_include_exactly_their_days(b: Backend) {
    let t = TestApp::spawn(b).await;
    let j = t.insert_job(t.org_id, "Timed").await;
    // 7d covers today and the six days before it, from their first instant.
    let six_days_start = format!(
        "{}T00:00:00Z",
        (Utc::now() - Duration::days(6))
            .date_naive()
            .format("%Y-%m-%d")
    );
    let seven_days_end = format!(
        "{}T23:59:59.999Z",
        (Utc::now() - Duration::days(7))
            .date_naive()
            .format("%Y-%m-%d")
    );
    ingest(
        &t,
        json!([
            {"type": "job_view", "job_id": j, "visitor_id": "a", "occurred_at": six_days_start},
            {"type": "job_view", "job_id": j, "visitor_id": "b", "occurred_at": seven_days_end},
            {"type": "job_view", "job_id": j, "visitor_id": "c", "occurred_at": ts(29, 1)},
            {"type": "job_view", "job_id": j, "visitor_id": "d", "occurred_at": ts(30, 1)},
            {"type": "job_view", "job_id": j, "visitor_id": "e", "occurred_at": ts(100, 1)},
            {"type": "job_view", "job_id": j, "visitor_id": "f", "occurred_at": ts(300, 1)},
        ]),
    )
    .await
    .expect(200);
    let k = j.to_string();
    for (period, views) in [("7d", 1), ("30d", 3), ("6mo", 5), ("12mo", 6)] {
        let r = t
            .get(&format!("/analytics/jobs?jobIds={j}&period={period}"))
            .await;
        r.expect(200);
        assert_eq!(r.body["data"]["views"][&k], views, "period {period}");
        assert_eq!(r.body["data"]["visitors"][&k], views, "period {period}");
    }
    let r = t
        .get(&format!("/analytics/jobs?jobIds={j}&period=1y"))
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["period"]);
}

async fn anonymous_visitors_are_hashed_per_address_and_agent(b: Backend) {
    let t = TestApp::spawn(b).await;
    let j = t.insert_job(t.org_id, "Anon").await;
    let body =
        json!({"events": [{"type": "job_view", "job_id": j}, {"type": "job_view", "job_id": j}]});
    for agent in ["Browser A", "Browser A", "Browser B"] {
        t.req(Method::POST, "/analytics/events")
            .header("user-agent", agent)
            .json(body.clone())
            .send()
            .await
            .expect(200);
    }
    let r = t.get(&format!("/analytics/jobs?jobIds={j}")).await;
    assert_eq!(r.body["data"]["views"][j.to_string()], 6);
    assert_eq!(r.body["data"]["visitors"][j.to_string()], 2);
    // What is stored is a hash: the address appears nowhere.
    let stored: Vec<Vec<u8>> = jobboard_store::dispatch!(t.db().reader(), p => {
        sqlx::query_scalar("SELECT visitor FROM analytics_visitors").fetch_all(p).await.unwrap()
    });
    assert!(!stored.is_empty());
    for v in stored {
        assert_eq!(v.len(), 16);
        assert!(!v.windows(9).any(|w| w == b"127.0.0.1"));
    }
}

async fn ingestion_is_validated_all_or_nothing(b: Backend) {
    let t = TestApp::spawn(b).await;
    let j = t.insert_job(t.org_id, "Valid").await;
    let future = (Utc::now() + Duration::hours(1)).to_rfc3339();
    let r = ingest(
        &t,
        json!([
            {"type": "job_view", "job_id": j},
            {"type": "job_view"},
            {"type": "click", "job_id": j},
            {"type": "apply_click", "job_id": uuid::Uuid::now_v7()},
            {"type": "page_view", "occurred_at": future},
            {"type": "page_view", "colour": "red"},
            "not an object",
        ]),
    )
    .await;
    r.expect_error(422, "validation_failed");
    let mut fields = r.error_fields();
    fields.sort();
    assert_eq!(
        fields,
        [
            "events[1].job_id",
            "events[2].type",
            "events[3].job_id",
            "events[4].occurred_at",
            "events[5].colour",
            "events[6]"
        ]
    );
    // Nothing of the batch was recorded.
    let r = t.get(&format!("/analytics/jobs?jobIds={j}")).await;
    assert_eq!(r.body["data"]["views"][j.to_string()], 0);
    let many: Vec<Value> = (0..1001).map(|_| json!({"type": "page_view"})).collect();
    let r = ingest(&t, Value::Array(many)).await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["events"]);
    ingest(&t, json!([]))
        .await
        .expect_error(422, "validation_failed");
    t.post("/analytics/events", json!({}))
        .await
        .expect_error(422, "validation_failed");
    let max: Vec<Value> = (0..1000)
        .map(|i| json!({"type": "job_view", "job_id": j, "visitor_id": format!("v{}", i % 10)}))
        .collect();
    let r = ingest(&t, Value::Array(max)).await;
    r.expect(200);
    assert_eq!(r.body["data"]["accepted"], 1000);
    let r = t.get(&format!("/analytics/jobs?jobIds={j}")).await;
    assert_eq!(r.body["data"]["views"][j.to_string()], 1000);
    assert_eq!(r.body["data"]["visitors"][j.to_string()], 10);
}

async fn job_ids_are_checked(b: Backend) {
    let t = TestApp::spawn(b).await;
    let mine = t.insert_job(t.org_id, "Mine").await;
    let (other_org, other_key) = t.new_org("Other", "*", 1000, 1000).await;
    let theirs = t.insert_job(other_org, "Theirs").await;
    let r = t
        .get(&format!("/analytics/jobs?jobIds={mine},{theirs}"))
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["jobIds"]);
    t.get("/analytics/jobs")
        .await
        .expect_error(422, "validation_failed");
    t.get("/analytics/jobs?jobIds=xyz")
        .await
        .expect_error(422, "validation_failed");
    let many: Vec<String> = (0..101).map(|_| uuid::Uuid::now_v7().to_string()).collect();
    t.get(&format!("/analytics/jobs?jobIds={}", many.join(",")))
        .await
        .expect_error(422, "validation_failed");
    // Another organization's events cannot touch this organization's job either.
    let r = t
        .req(Method::POST, "/analytics/events")
        .key(&other_key)
        .json(json!({"events": [{"type": "job_view", "job_id": mine}]}))
        .send()
        .await;
    r.expect_error(422, "validation_failed");
    let r = t.get(&format!("/analytics/jobs?jobIds={mine}")).await;
    r.expect(200);
    assert_eq!(r.body["data"]["views"][mine.to_string()], 0);
}

async fn reports_keep_their_key_order(b: Backend) {
    let t = TestApp::spawn(b).await;
    let j1 = t.insert_job(t.org_id, "First").await;
    let j2 = t.insert_job(t.org_id, "Second").await;
    ingest(
        &t,
        json!([
            {"type": "job_view", "job_id": j1, "visitor_id": "a"},
            {"type": "job_view", "job_id": j2, "visitor_id": "a"},
            {"type": "job_view", "job_id": j2, "visitor_id": "b"},
        ]),
    )
    .await
    .expect(200);
    // Per-job figures follow the order the ids were asked in (a repeated id counts once).
    let r = t
        .get(&format!("/analytics/jobs?jobIds={j2},{j1},{j2}&period=7d"))
        .await;
    r.expect(200);
    let maps = |a: i64, b: i64| format!(r#"{{"{j2}":{a},"{j1}":{b}}}"#);
    assert_eq!(
        r.text,
        format!(
            r#"{{"data":{{"visitors":{},"views":{},"apply_clicks":{},"applications":{}}},"meta":{{"period":"7d","total_jobs":2}}}}"#,
            maps(2, 1),
            maps(2, 1),
            maps(0, 0),
            maps(0, 0)
        )
    );
    let today = Utc::now().date_naive().format("%Y-%m-%d").to_string();
    let r = t.get(&format!("/analytics?from={today}&to={today}")).await;
    r.expect(200);
    assert_eq!(
        r.text,
        format!(
            r#"{{"data":{{"visitors":2,"pageviews":0,"job_views":3,"apply_clicks":0,"applications":0,"jobs_posted":2,"members_joined":0,"timeseries":[{{"date":"{today}","visitors":2,"pageviews":0,"job_views":3,"apply_clicks":0,"applications":0}}]}},"meta":{{"period":"custom","from":"{today}","to":"{today}"}}}}"#
        )
    );
    // Dates are read exactly as documented: YYYY-MM-DD.
    let r = t
        .get(&format!("/analytics?from=2026-1-05&to={today}"))
        .await;
    r.expect_error(422, "validation_failed");
    assert_eq!(r.error_fields(), ["from"]);
}

/// The daily salt is kept per database: another database of the same process ingesting
/// (today, then another day) never changes how this one hashes a visitor.
async fn a_visitor_is_one_visitor_whatever_other_databases_ingest(b: Backend) {
    let ours = TestApp::spawn(b).await;
    let other = TestApp::spawn(b).await;
    let j = ours.insert_job(ours.org_id, "Ours").await;
    let k = other.insert_job(other.org_id, "Theirs").await;
    let yesterday = (Utc::now() - Duration::days(1)).to_rfc3339();
    for (t, body) in [
        (
            &other,
            json!({"events": [{"type": "job_view", "job_id": k}]}),
        ),
        (
            &ours,
            json!({"events": [{"type": "job_view", "job_id": j}]}),
        ),
        (
            &other,
            json!({"events": [{"type": "job_view", "job_id": k, "occurred_at": yesterday}]}),
        ),
        (
            &ours,
            json!({"events": [{"type": "job_view", "job_id": j}]}),
        ),
    ] {
        t.req(Method::POST, "/analytics/events")
            .header("user-agent", "Browser A")
            .json(body)
            .send()
            .await
            .expect(200);
    }
    let r = ours.get(&format!("/analytics/jobs?jobIds={j}")).await;
    assert_eq!(r.body["data"]["views"][j.to_string()], 2);
    assert_eq!(r.body["data"]["visitors"][j.to_string()], 1);
}

/// The statements kept prepared by the app's connections, counted when none is in use
/// (the workers and the scheduler take them too), waiting at most ten seconds for that.
async fn prepared(t: &TestApp) -> usize {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let writer = t.db().writer().prepared_statements();
        let counted = match t.backend {
            // One pool serves reads and writes.
            Backend::Postgres => writer,
            Backend::Sqlite => writer
                .zip(t.db().reader().prepared_statements())
                .map(|(w, r)| w + r),
        };
        if let Some(n) = counted {
            return n;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "a connection stayed in use for ten seconds"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// One round of [`statements_as_long_as_a_list_are_not_kept_prepared`]: an ingestion of `n`
/// views of the first job on `n` days by `n` visitors (a daily row and a visitor row a day
/// for the job and for the site: `2n` of each), and the report of the first `n` jobs.
async fn lists_of_length(t: &TestApp, jobs: &[JobId], n: usize) {
    let events: Vec<Value> = (0..n)
        .map(|i| {
            json!({"type": "job_view", "job_id": jobs[0], "visitor_id": format!("len{n}-{i}"), "occurred_at": ts(i as i64, 0)})
        })
        .collect();
    ingest(t, json!(events)).await.expect(200);
    let ids: Vec<String> = jobs[..n].iter().map(|j| j.to_string()).collect();
    t.get(&format!("/analytics/jobs?jobIds={}", ids.join(",")))
        .await
        .expect(200);
}

/// An ingestion writes with multi-row statements as long as its batch, a report reads
/// with statements as long as its list of jobs. Kept prepared, each length would stay on
/// every connection that ran it (up to 100 a connection), memory that rises for hours
/// while new lengths come. Twenty more lengths, after twenty that prepared the statements
/// that do not change, leave the count where it was (kept, each would add two statements
/// or more).
///
/// The pool is held at two connections, both opened before the count (a connection opened
/// later would bring the statements that do not change with it).
async fn statements_as_long_as_a_list_are_not_kept_prepared(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.db_max_connections = 2).await;
    for pool in [t.db().reader(), &*t.db().writer()] {
        take_every_connection(pool).await;
    }
    let mut jobs = Vec::new();
    for i in 0..40 {
        jobs.push(t.insert_job(t.org_id, &format!("Job {i}")).await);
    }
    for n in 1..=20 {
        lists_of_length(&t, &jobs, n).await;
    }
    let before = prepared(&t).await;
    for n in 21..=40 {
        lists_of_length(&t, &jobs, n).await;
    }
    let after = prepared(&t).await;
    assert!(
        after < before + 10,
        "{before} statements prepared before twenty new lengths, {after} after"
    );
}
