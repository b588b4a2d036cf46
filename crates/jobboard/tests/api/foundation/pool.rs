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
