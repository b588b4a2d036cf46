//! The search index behind lists: exact totals, every change followed, case and accents,
//! organizations too large for it, late commits, concurrent writers, indexing at start
//! and during a bulk load, and its bounds.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::*;
use crate::backends;

backends!(
    filtered_and_search_totals_are_exact,
    searches_and_filters_follow_every_change,
    past_the_index_bounds_lists_stay_exact,
    search_ignores_case_and_accents,
    lists_stay_exact_when_the_index_does_not_fit,
    a_job_committed_late_is_listed_in_its_place,
    a_starting_node_indexes_the_organizations_with_jobs,
    jobs_posted_concurrently_arrive_in_place,
    a_board_loaded_in_bulk_is_indexed_before_its_first_list,
);

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
    // Those lists came from the index, read from the database in more than one page
    // (jobs created at the same time are told apart by id).
    let m = t.metrics().await;
    assert_eq!(gauge(&m.text, "jobboard_search_indexes"), 1.0, "{}", m.text);
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
    match &*t.db().writer() {
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

/// Jobs posted concurrently through the API reach the index in list order: none is
/// misplaced and nothing is built again; on SQLite, where one writer stamps each job as
/// it stores it, none is even one place out of order, and on PostgreSQL no more than the
/// writers at once. Lists stay exact and newest first.
async fn jobs_posted_concurrently_arrive_in_place(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    create_active(&t, "First Harbour Pilot", json!({})).await;
    assert_eq!(fresh(&t, "search=harbour").await.1, 1);
    let writers = 60;
    // Each job's creation time, as its creation answered.
    let mut created: HashMap<String, chrono::DateTime<chrono::FixedOffset>> = HashMap::new();
    for round in 0..4 {
        let bodies: Vec<Value> = (0..writers)
            .map(|i| {
                let mut body = job(&format!("Harbour Role {round}-{i}"));
                body["status"] = json!("active");
                body
            })
            .collect();
        let results =
            crate::members::futures_join_all(bodies.iter().map(|b| t.post("/jobs", b.clone())))
                .await;
        for r in &results {
            r.expect(201);
            let at = r.body["data"]["created_at"].as_str().unwrap();
            created.insert(
                r.body["data"]["title"].as_str().unwrap().to_string(),
                chrono::DateTime::parse_from_rfc3339(at).unwrap(),
            );
        }
        assert_eq!(
            fresh(&t, "search=harbour").await.1,
            1 + writers * (round + 1)
        );
    }
    // Every page, newest first by the creation times the writers were answered.
    let mut listed = Vec::new();
    for page in 1..=3 {
        let r = t
            .req(
                Method::GET,
                &format!("/jobs?search=harbour&per_page=100&page={page}"),
            )
            .header("cache-control", "no-cache")
            .send()
            .await;
        r.expect(200);
        listed.extend(titles(&r));
    }
    assert_eq!(listed.len(), 1 + 4 * writers as usize);
    assert_eq!(listed.last().unwrap(), "First Harbour Pilot");
    let times: Vec<_> = listed[..listed.len() - 1]
        .iter()
        .map(|title| created[title])
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{listed:?}");
    let m = t.metrics().await;
    let text = &m.text;
    assert_eq!(
        gauge(text, "jobboard_search_index_misplaced_jobs"),
        0.0,
        "{text}"
    );
    assert_eq!(
        gauge(text, "jobboard_search_index_forgotten_jobs"),
        0.0,
        "{text}"
    );
    assert_eq!(
        gauge(text, r#"jobboard_search_index_builds_total{cause="worn"}"#),
        0.0,
        "{text}"
    );
    assert_eq!(
        gauge(text, r#"jobboard_search_index_builds_total{cause="first"}"#),
        1.0,
        "{text}"
    );
    let displacement = gauge(text, "jobboard_search_index_displacement");
    match b {
        Backend::Sqlite => assert_eq!(displacement, 0.0, "{text}"),
        Backend::Postgres => assert!(displacement <= writers as f64, "{text}"),
    }
}

/// An organization loaded in bulk with no list meanwhile (more jobs than a first list
/// indexes at once) is indexed by the node while it loads: its first list finds the
/// index built, and builds nothing.
async fn a_board_loaded_in_bulk_is_indexed_before_its_first_list(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.scheduler = false).await;
    // Past the 20,000 jobs a first list indexes before it answers.
    insert_bulk(&t, 20_100).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let m = t.metrics().await;
        if gauge(&m.text, "jobboard_search_indexes") >= 1.0 {
            assert_eq!(
                gauge(
                    &m.text,
                    r#"jobboard_search_index_builds_total{cause="first"}"#
                ),
                1.0,
                "{}",
                m.text
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no index built: {}",
            m.text
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(fresh(&t, "job_types=contract").await.1, 10_050);
    create_active(&t, "Bulk Harbour Pilot", json!({"job_type": "contract"})).await;
    assert_eq!(
        fresh(&t, "job_types=contract&search=harbour").await,
        (vec!["Bulk Harbour Pilot".to_string()], 1)
    );
    let m = t.metrics().await;
    let builds: f64 = ["first", "again", "worn"]
        .iter()
        .map(|c| {
            gauge(
                &m.text,
                &format!("jobboard_search_index_builds_total{{cause=\"{c}\"}}"),
            )
        })
        .sum();
    assert_eq!(builds, 1.0, "{}", m.text);
}
