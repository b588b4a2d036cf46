//! The migration runner (the project's own, not `sqlx::migrate!`; docs/development.md
//! says why): servers that start at once on one new database apply each migration
//! exactly once between them, and every one of them then finds the schema current.

use std::collections::BTreeSet;

use crate::{backends, common::*};
use jobboard_store::Db;

backends!(
    servers_starting_at_once_apply_each_migration_once,
    a_database_of_a_later_release_is_refused,
);

/// A database a later release migrated is refused, with what to do, and left as it is.
async fn a_database_of_a_later_release_is_refused(b: Backend) {
    let (url, file) = fresh_database(b).await;
    let db = Db::connect(&url, 2).await.unwrap();
    db.migrate().await.unwrap();
    jobboard_store::dispatch!(db.writer(), p => {
        sqlx::query("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (9999, '9999_later', 'x', 'now')")
            .execute(p)
            .await
            .unwrap();
    });
    let e = db.migrate().await.unwrap_err().to_string();
    assert!(e.contains("later release") && e.contains("9999"), "{e}");
    let (ok, _, err) = run_cli(&["migrate"], &url);
    assert!(!ok && err.contains("later release"), "{err}");
    db.close().await;
    if let Some(f) = file {
        let _ = std::fs::remove_file(f);
    } else {
        drop_postgres_database(&url);
    }
}

async fn servers_starting_at_once_apply_each_migration_once(b: Backend) {
    let (url, file) = fresh_database(b).await;
    let mut nodes = Vec::new();
    for _ in 0..4 {
        nodes.push(Db::connect(&url, 4).await.unwrap());
    }
    // At once: each run's statements interleave with the others' on their own
    // connections.
    let (a, b2, c, d) = tokio::join!(
        nodes[0].migrate(),
        nodes[1].migrate(),
        nodes[2].migrate(),
        nodes[3].migrate()
    );
    let mut applied = Vec::new();
    for run in [a, b2, c, d] {
        applied.extend(run.expect("every node's migration run succeeds"));
    }
    let distinct: BTreeSet<&String> = applied.iter().collect();
    assert_eq!(
        distinct.len(),
        applied.len(),
        "a migration was applied twice: {applied:?}"
    );
    assert!(applied.iter().any(|m| m == "0001_foundation"));
    for db in &nodes {
        assert!(db.ready().await, "every node finds the schema current");
        let (rows, versions): (i64, i64) = jobboard_store::dispatch!(db.reader(), p => {
            sqlx::query_as("SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations")
                .fetch_one(p)
                .await
                .unwrap()
        });
        assert_eq!(rows, versions);
        assert_eq!(rows as usize, applied.len());
    }
    for db in nodes {
        db.close().await;
    }
    if let Some(f) = file {
        let _ = std::fs::remove_file(f);
    }
}
