//! `jobboard imports run` killed with SIGKILL halfway through a large source, then run
//! again: every job of the source once.

use std::{
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use super::*;

backends!(a_run_killed_halfway_reruns_without_duplicates);

const JOBS: usize = 3000;

async fn count(t: &TestApp, sql: &'static str) -> i64 {
    jobboard_store::dispatch!(t.db().reader(), p => {
        sqlx::query_scalar::<_, i64>(sql).fetch_one(p).await.unwrap()
    })
}

async fn a_run_killed_halfway_reruns_without_duplicates(b: Backend) {
    let t = TestApp::spawn_with(b, |c| {
        c.worker = false;
        c.scheduler = false;
    })
    .await;
    let feeds = Feeds::start().await;
    let jobs: Vec<(i64, String)> = (0..JOBS as i64)
        .map(|i| (9_000_000 + i, format!("Baker {i}")))
        .collect();
    let refs: Vec<(i64, &str)> = jobs.iter().map(|(i, s)| (*i, s.as_str())).collect();
    feeds.put("big", super::greenhouse(&refs, None), None);
    let s = source(&t, "greenhouse", &feeds.url("big"), json!({})).await;
    let mut child = Command::new(env!("CARGO_BIN_EXE_jobboard"))
        .env_remove("DATABASE_URL")
        .env_remove("JOBBOARD_CONFIG")
        .env("JOBBOARD_ALLOW_PRIVATE_TARGETS", "1")
        .env("RUST_LOG", "warn")
        .args(["--database", &t.database_url, "imports", "run"])
        .arg(s.id.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let items = "SELECT COUNT(*) FROM import_items";
    let deadline = Instant::now() + Duration::from_secs(120);
    while count(&t, items).await < (JOBS / 10) as i64 {
        assert!(Instant::now() < deadline, "the run stored nothing");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    let _ = child.wait();
    let halfway = count(&t, items).await;
    assert!(
        halfway < JOBS as i64,
        "killed before the end: {halfway} stored"
    );
    // What was stored is whole pages: every key has its job.
    assert_eq!(count(&t, "SELECT COUNT(*) FROM jobs").await, halfway);
    let fetcher = t.app.imports.clone();
    let c = run_now(&t, &fetcher, &s).await;
    assert_eq!(c.created as i64, JOBS as i64 - halfway, "{c:?}");
    assert_eq!(c.unchanged as i64, halfway, "{c:?}");
    assert_eq!(count(&t, "SELECT COUNT(*) FROM jobs").await, JOBS as i64);
    assert_eq!(
        count(&t, "SELECT COUNT(DISTINCT job_id) FROM import_items").await,
        JOBS as i64
    );
    assert_eq!(events_named(&t, "job.created").await, JOBS);
}
