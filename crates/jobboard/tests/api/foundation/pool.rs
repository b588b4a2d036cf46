//! The connection pool: what its size promises, and the notifications that reach every
//! node without taking a connection from it.

use std::time::Duration;

use jobboard_store::Db;
use serde_json::json;
use tokio::sync::Notify;

use crate::{backends, common::*, webhook_receiver::Receiver};

backends!(the_smallest_pool_serves_requests_and_workers);

/// Two connections (the least `db_max_connections` gives on PostgreSQL) serve the API and
/// the workers: listening for other nodes' commits takes none of them.
async fn the_smallest_pool_serves_requests_and_workers(b: Backend) {
    let t = TestApp::spawn_with(b, |c| c.db_max_connections = 2).await;
    let rx = Receiver::start().await;
    t.post(
        "/webhooks",
        json!({"event": "job.created", "target_type": "webhook", "target_url": rx.url("/hook")}),
    )
    .await
    .expect(201);
    t.post("/jobs", json!({"title": "Rust Engineer", "description": "<p>Build</p>", "company_name": "Acme", "location": "Berlin"}))
        .await
        .expect(201);
    t.get("/jobs").await.expect(200);
    assert!(
        rx.wait_until(Duration::from_secs(20), |h| h.len() == 1)
            .await,
        "the webhook did not arrive"
    );
    for pool in [t.db().reader(), &*t.db().writer()] {
        take_every_connection(pool).await;
    }
}

/// A commit that notifies a channel wakes whoever listens on it through another handle
/// (another node) of the same PostgreSQL database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_wakes_the_listeners_of_every_node() {
    if !postgres_available("foundation::pool::a_commit_wakes_the_listeners_of_every_node") {
        return;
    }
    static WOKEN: Notify = Notify::const_new();
    let (url, _) = fresh_database(Backend::Postgres).await;
    let writer = Db::connect(&url, 2).await.unwrap();
    let other = Db::connect(&url, 2).await.unwrap();
    other.listen("jobboard_pool_test", &WOKEN);
    // The listener starts in the background: notify until it hears one.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let woken = WOKEN.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let mut tx = writer.begin().await.unwrap();
        tx.notify_after_commit("jobboard_pool_test");
        tx.commit().await.unwrap();
        if tokio::time::timeout(Duration::from_millis(200), woken)
            .await
            .is_ok()
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no notification arrived in 20 seconds"
        );
    }
    other.close().await;
    writer.close().await;
    drop_postgres_database(&url);
}

/// Waits (up to 20 s) until `db` counts the announced commits, and returns the count.
async fn counting(db: &Db) -> u64 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(n) = db.changes() {
            return n;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the changes are not counted after 20 seconds"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits (up to 20 s) until `db`'s count of changes is no longer `n`.
async fn counted_past(db: &Db, n: u64, what: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while db.changes() == Some(n) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not counted after 20 seconds"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every commit on PostgreSQL is announced to every node: a transaction committed through
/// one handle (one node) moves the other handle's count of changes, and so does a write
/// its caller announces; a lost notification connection moves it too (what was read
/// before may have missed a change), and the count goes on once the node listens again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_commit_is_announced_to_every_node() {
    if !postgres_available("foundation::pool::every_commit_is_announced_to_every_node") {
        return;
    }
    let (url, _) = fresh_database(Backend::Postgres).await;
    let writer = Db::connect(&url, 2).await.unwrap();
    let other = Db::connect(&url, 2).await.unwrap();
    let n = counting(&other).await;
    assert!(other.unchanged(n));

    // A transaction of the other node: announced once it has committed.
    let mut tx = writer.begin().await.unwrap();
    jobboard_store::dispatch_tx!(&mut tx, t => {
        sqlx::query("CREATE TABLE announced (n INTEGER)").execute(&mut **t).await.unwrap();
    });
    tx.commit().await.unwrap();
    counted_past(&other, n, "a transaction's commit").await;
    assert!(!other.unchanged(n));

    // A write through the writer pool, announced by its caller.
    let n = counting(&other).await;
    writer.announce_change().await;
    counted_past(&other, n, "an announced write").await;

    // The notification connection is lost: the count moves (nothing read before is
    // reused), and goes on once the node listens again.
    let n = counting(&other).await;
    let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
    use sqlx::Connection;
    let ended: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    )
    .fetch_all(&mut admin)
    .await
    .unwrap();
    assert!(!ended.is_empty(), "no listening connection found");
    counted_past(&other, n, "the lost connection").await;
    let again = counting(&other).await;
    assert_ne!(again, n);
    assert!(!other.unchanged(n));
    // ...and counts again from there.
    writer.announce_change().await;
    counted_past(&other, again, "an announced write after the reconnection").await;

    admin.close().await.unwrap();
    other.close().await;
    writer.close().await;
    drop_postgres_database(&url);
}

/// On PostgreSQL the board a host reaches is read once and reused until a commit is
/// announced: a change another node wrote without announcing it is not seen, and is seen
/// once it is announced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_is_reused_until_a_change_is_announced() {
    if !postgres_available("foundation::pool::a_board_is_reused_until_a_change_is_announced") {
        return;
    }
    use jobboard_domain::orgs;
    use sqlx::Connection;
    let (url, _) = fresh_database(Backend::Postgres).await;
    let db = Db::connect(&url, 2).await.unwrap();
    db.migrate().await.unwrap();
    let org = orgs::create_with(&db, "Acme", Some("jobs.example.test"))
        .await
        .unwrap();
    counting(&db).await;
    let mut other = sqlx::PgConnection::connect(&url).await.unwrap();
    let tagline = async |db: &Db| {
        orgs::board_for_host(db, "jobs.example.test")
            .await
            .unwrap()
            .expect("a board")
            .org
            .tagline
    };

    // Other tests of this process commit too, and a commit of this process is seen at
    // once: the reuse shows when none came between the two reads.
    let mut shown = false;
    for attempt in 0..50 {
        let line = format!("Hiring, take {attempt}");
        assert_ne!(tagline(&db).await.as_deref(), Some(line.as_str()));
        let writes = jobboard_store::committed_writes();
        sqlx::query("UPDATE organizations SET tagline = $2 WHERE id = $1")
            .bind(org.id)
            .bind(&line)
            .execute(&mut other)
            .await
            .unwrap();
        let read = tagline(&db).await;
        if jobboard_store::committed_writes() == writes {
            assert_ne!(
                read.as_deref(),
                Some(line.as_str()),
                "read again, not reused"
            );
            shown = true;
            break;
        }
    }
    assert!(
        shown,
        "no two reads without a commit of this process between them"
    );

    // Announced: seen well before the reuse runs out (five seconds).
    let stored: Option<String> =
        sqlx::query_scalar("SELECT tagline FROM organizations WHERE id = $1")
            .bind(org.id)
            .fetch_one(&mut other)
            .await
            .unwrap();
    sqlx::query("SELECT pg_notify($1, '')")
        .bind(jobboard_store::CHANGES)
        .execute(&mut other)
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while tagline(&db).await != stored {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the announced change is not seen after 2 seconds"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    other.close().await.unwrap();
    db.close().await;
    drop_postgres_database(&url);
}
