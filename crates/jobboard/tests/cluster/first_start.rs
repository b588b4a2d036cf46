//! The first start of a cluster: three nodes started at the same moment on an empty
//! (migrated) database make one organization and print one first key (README: "the first
//! `serve` on an empty database creates organization 1 and prints its first API key,
//! once").

use std::time::Duration;

use sqlx::Connection;
use tokio::time::Instant;

use crate::{
    harness::Cluster,
    observe::{poll, secs},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_starting_together_make_one_organization() {
    let Some(mut c) =
        Cluster::empty_database("first_start::nodes_starting_together_make_one_organization").await
    else {
        return;
    };
    c.cli(&["migrate"], None);
    // Nodes that start together reach their first-start work at about the same moment.
    // A lock that lets the organizations table be read but not written makes it the same
    // moment every time: it is held until each node waits to write (or is ready), or
    // until the nodes' waits stopped changing for two seconds (nodes that wait for one
    // another first).
    let mut conn = sqlx::PgConnection::connect(&c.database_url).await.unwrap();
    let mut tx = conn.begin().await.unwrap();
    sqlx::query("LOCK TABLE organizations IN SHARE MODE")
        .execute(&mut *tx)
        .await
        .unwrap();
    c.spawn_nodes();
    let mut watcher = sqlx::PgConnection::connect(&c.database_url).await.unwrap();
    let nodes = c.nodes.len() as i64;
    let mut last: Option<((i64, i64, i64), Instant)> = None;
    poll("every node at its first start", secs(30), async || {
        let (on_table, waiting): (i64, i64) = sqlx::query_as(
            "SELECT COUNT(DISTINCT pid) FILTER (WHERE relation = 'organizations'::regclass),
                    COUNT(DISTINCT pid)
             FROM pg_locks WHERE NOT granted AND pid IN
               (SELECT pid FROM pg_stat_activity WHERE datname = current_database())",
        )
        .fetch_one(&mut watcher)
        .await
        .unwrap();
        let mut ready = 0;
        for n in &c.nodes {
            ready += i64::from(n.is_ready(&c.client).await);
        }
        let seen = (on_table, waiting, ready);
        let since = match last {
            Some((prev, since)) if prev == seen => since,
            _ => Instant::now(),
        };
        last = Some((seen, since));
        let stuck = waiting + ready >= nodes && since.elapsed() >= Duration::from_secs(2);
        if on_table + ready >= nodes || stuck {
            Ok(())
        } else {
            Err(format!(
                "{on_table} waiting for the table, {waiting} for any lock, {ready} ready"
            ))
        }
    })
    .await;
    tx.commit().await.unwrap();
    for n in &c.nodes {
        n.ready(&c.client).await;
    }
    watcher.close().await.unwrap();
    conn.close().await.unwrap();

    let orgs = c.cli(&["orgs", "list"], None);
    let printed: Vec<String> = c
        .nodes
        .iter()
        .map(|n| n.printed())
        .filter(|out| out.contains("Created organization"))
        .collect();
    // Without the first start's advisory lock every node counted no organization and
    // made one of its own, printing its own first key.
    assert_eq!(
        (orgs.lines().count(), printed.len()),
        (1, 1),
        "three nodes starting together on an empty database made these organizations:\n\
         {orgs}and printed {} first keys:\n{}",
        printed.len(),
        printed.join("\n")
    );
}
