//! `jobboard backup` and `jobboard restore`: a backup taken while 20 clients write holds
//! every write acknowledged before it began and passes SQLite's integrity check; a
//! restore is refused while a server uses the database, and replaces it (keeping the old
//! one aside) once nothing does. On PostgreSQL both say to use pg_dump and change nothing.

use std::{
    collections::HashSet,
    path::PathBuf,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use jobboard_store::{Db, backup};
use serde_json::json;
use sqlx::{ConnectOptions, sqlite::SqliteConnectOptions};

use jobboard_domain::JobId;

use crate::{backends, common::*};

backends!(
    a_backup_taken_under_writes_holds_every_acknowledged_write,
    a_restore_waits_for_the_database_to_be_free_and_keeps_the_old_one,
);

/// A fresh directory of the test's own.
fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jbt_backup_{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The ids of the jobs in the SQLite file at `path`.
async fn job_ids(path: &std::path::Path) -> HashSet<uuid::Uuid> {
    let mut conn = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .connect()
        .await
        .unwrap();
    sqlx::query_scalar::<_, uuid::Uuid>("SELECT id FROM jobs")
        .fetch_all(&mut conn)
        .await
        .unwrap()
        .into_iter()
        .collect()
}

async fn post_job(t: &TestApp, title: &str) -> uuid::Uuid {
    let r = t
        .post(
            "/jobs",
            json!({"title": title, "company_name": "Acme", "description": "<p>Work.</p>"}),
        )
        .await;
    r.expect(201);
    r.body["data"]["id"].as_str().unwrap().parse().unwrap()
}

async fn a_backup_taken_under_writes_holds_every_acknowledged_write(b: Backend) {
    let t = TestApp::spawn(b).await;
    let dir = scratch();
    let to = dir.join("backup.db");
    if b == Backend::Postgres {
        let e = backup::backup(&t.database_url, &to).await.unwrap_err();
        assert!(e.to_string().contains("pg_dump"), "{e}");
        assert!(!to.exists());
        return;
    }
    // 20 clients write jobs through the API until told to stop.
    let acked: Arc<Mutex<Vec<(Instant, uuid::Uuid)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..20 {
        let (client, url, key) = (
            t.client.clone(),
            format!("{}/api/jobs", t.base),
            t.key.clone(),
        );
        let (acked, stop) = (acked.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut slowest = Duration::ZERO;
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let sent = Instant::now();
                let r = client
                    .post(&url)
                    .header("x-api-key", &key)
                    .json(
                        &json!({"title": format!("Writer {w} job {n}"), "company_name": "Acme",
                                  "description": "<p>Work.</p>", "status": "active"}),
                    )
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 201);
                let body: serde_json::Value = r.json().await.unwrap();
                let at = Instant::now();
                slowest = slowest.max(at - sent);
                let id = body["data"]["id"].as_str().unwrap().parse().unwrap();
                acked.lock().unwrap().push((at, id));
            }
            slowest
        }));
    }
    let count = |acked: &Arc<Mutex<Vec<(Instant, uuid::Uuid)>>>| acked.lock().unwrap().len();
    let deadline = Instant::now() + Duration::from_secs(60);
    while count(&acked) < 300 {
        assert!(Instant::now() < deadline, "the writers did not get going");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let began = Instant::now();
    let report = backup::backup(&t.database_url, &to).await.unwrap();
    let after = count(&acked);
    while count(&acked) < after + 100 {
        assert!(Instant::now() < deadline, "writes stalled after the backup");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut slowest = Duration::ZERO;
    for w in writers {
        slowest = slowest.max(w.await.unwrap());
    }
    let before: HashSet<uuid::Uuid> = acked
        .lock()
        .unwrap()
        .iter()
        .filter(|(at, _)| *at <= began)
        .map(|(_, id)| *id)
        .collect();
    let copied = job_ids(&to).await;
    assert!(before.len() >= 300);
    let missing: Vec<_> = before.difference(&copied).collect();
    assert!(
        missing.is_empty(),
        "acknowledged before the backup, missing from it: {missing:?}"
    );
    assert_eq!(backup::verify(&to).await.unwrap(), report.schema_version);
    assert!(report.schema_version >= 34 && report.bytes > 0);
    eprintln!(
        "backup: {} jobs acknowledged before it began, {} in the copy, {} in all; copy {} ms; slowest write {} ms",
        before.len(),
        copied.len(),
        count(&acked),
        report.copy_took.as_millis(),
        slowest.as_millis()
    );
    // A backup never overwrites a file.
    let e = backup::backup(&t.database_url, &to).await.unwrap_err();
    assert!(e.to_string().contains("exists already"), "{e}");
    assert_eq!(job_ids(&to).await, copied);
    std::fs::remove_dir_all(dir).ok();
}

async fn a_restore_waits_for_the_database_to_be_free_and_keeps_the_old_one(b: Backend) {
    let t = TestApp::spawn(b).await;
    let dir = scratch();
    if b == Backend::Postgres {
        let e = backup::restore(&t.database_url, &dir.join("x.db"))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("pg_restore"), "{e}");
        return;
    }
    let mut kept = HashSet::new();
    for title in ["Baker", "Cook", "Pilot"] {
        kept.insert(post_job(&t, title).await);
    }
    let to = dir.join("backup.db");
    backup::backup(&t.database_url, &to).await.unwrap();
    post_job(&t, "After the backup").await;
    // The server's database is in use: refused, nothing changed.
    let e = backup::restore(&t.database_url, &to).await.unwrap_err();
    assert!(e.to_string().contains("in use"), "{e}");
    let listed = t.get("/jobs?status=all").await;
    assert_eq!(listed.body["meta"]["pagination"]["total_items"], 4);
    // A damaged backup is refused before anything is touched.
    let damaged = dir.join("damaged.db");
    let mut bytes = std::fs::read(&to).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&damaged, bytes).unwrap();
    let target = dir.join("target.db");
    let url = format!("sqlite://{}", target.display());
    let db = Db::connect(&url, 1).await.unwrap();
    db.migrate().await.unwrap();
    // Another database, in use by a process of its own: refused too.
    let e = backup::restore(&url, &to).await.unwrap_err();
    assert!(e.to_string().contains("in use"), "{e}");
    db.close().await;
    drop(db);
    assert!(backup::restore(&url, &damaged).await.is_err());
    assert!(job_ids(&target).await.is_empty());
    // Free: restored, the old database kept aside.
    let report = backup::restore(&url, &to).await.unwrap();
    assert_eq!(job_ids(&target).await, kept);
    let previous = report.previous.expect("the replaced database is kept");
    assert!(job_ids(&previous).await.is_empty());
    // A server starts on it and serves what the backup held.
    let db = Db::connect(&url, 1).await.unwrap();
    db.migrate().await.unwrap();
    let jobs = jobboard_domain::jobs::get_many(
        &db,
        t.org_id,
        &kept.iter().copied().map(JobId).collect::<Vec<_>>(),
    )
    .await
    .unwrap();
    assert_eq!(jobs.len(), 3);
    db.close().await;
    std::fs::remove_dir_all(dir).ok();
}
