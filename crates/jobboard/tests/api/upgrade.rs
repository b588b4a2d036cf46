//! Upgrades: databases made by release 0.1.0, the first release of the schema
//! (migrations 0001-0044), with records of every kind, are kept in
//! `tests/fixtures/upgrade/0.1.0/` (an SQLite file, a PostgreSQL dump, and what the API
//! answered on them). This release opens each, applies its own migrations, and answers
//! every list and item as 0.1.0 did: every recorded field with the same value (later
//! releases may add fields, never change or drop one).
//!
//! The fixtures are made once, by the release they stand for:
//! `UPDATE_UPGRADE_FIXTURES=1 cargo test -p jobboard --test api upgrade` (with
//! PostgreSQL's `pg_dump` on the path).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::{
    backends,
    common::*,
    smtp_sink::SmtpSink,
    transfer::{answers, holds_every_kind, populate},
};

backends!(a_database_of_release_0_1_0_opens_with_every_record);

const RELEASE: &str = "0.1.0";

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/upgrade/{RELEASE}"))
}

fn recorded_path(b: Backend) -> PathBuf {
    dir().join(match b {
        Backend::Sqlite => "sqlite-answers.json",
        Backend::Postgres => "postgres-answers.json",
    })
}

/// The site's analytics of the day the fixture was made (a custom range: a period
/// ending today would move).
fn analytics_of(day: &str) -> String {
    format!("from={day}&to={day}")
}

/// Makes the fixture of `b`: a server of this release with an organization of every
/// kind of record, its database kept, and what the API answers recorded.
async fn make(b: Backend) {
    std::fs::create_dir_all(dir()).unwrap();
    let sink = SmtpSink::start().await;
    let t = crate::transfer::spawn(b, &sink).await;
    let (org, key) = t.new_org("Release board", "*", 1000, 1000).await;
    let _rx = populate(&t, org, &key).await;
    // Nothing may change with the date the test runs on: no job expires.
    jobboard_store::dispatch!(t.db().writer(), p => {
        sqlx::query("UPDATE jobs SET expires_at = NULL WHERE org_id = $1")
            .bind(org)
            .execute(p)
            .await
            .unwrap();
    });
    let day = jobboard_store::Ts::now().to_rfc3339()[..10].to_string();
    let got = answers(&t, &key, &analytics_of(&day)).await;
    holds_every_kind(&got);
    let record = json!({"release": RELEASE, "org": org.0, "key": key, "day": day, "answers": got});
    std::fs::write(
        recorded_path(b),
        serde_json::to_string_pretty(&record).unwrap() + "\n",
    )
    .unwrap();
    match b {
        Backend::Sqlite => {
            let to = dir().join("sqlite.db");
            let _ = std::fs::remove_file(&to);
            jobboard_store::backup::backup(&t.database_url, &to)
                .await
                .unwrap();
        }
        Backend::Postgres => {
            let out = std::process::Command::new("pg_dump")
                .args(["--no-owner", "--no-privileges", "--inserts", "--dbname"])
                .arg(&t.database_url)
                .output()
                .expect("pg_dump");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::write(dir().join("postgres.sql"), out.stdout).unwrap();
        }
    }
    t.stop().await;
}

/// A new database holding the fixture of `b`.
async fn load(b: Backend) -> (String, Option<PathBuf>) {
    let (url, path) = fresh_database(b).await;
    match b {
        Backend::Sqlite => {
            std::fs::copy(dir().join("sqlite.db"), path.as_ref().unwrap()).unwrap();
        }
        Backend::Postgres => {
            use sqlx::Connection;
            let dump = std::fs::read_to_string(dir().join("postgres.sql")).unwrap();
            // psql's own commands are not SQL.
            let sql: String = dump
                .lines()
                .filter(|l| !l.starts_with('\\'))
                .map(|l| format!("{l}\n"))
                .collect();
            // Its own connection: the dump empties the search path of the session.
            let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                .execute(&mut conn)
                .await
                .unwrap();
            conn.close().await.unwrap();
        }
    }
    (url, path)
}

/// `want` holds in `got`: every field of an object with the same value (more fields
/// allowed), arrays of the same length item by item, other values equal.
fn holds(got: &Value, want: &Value, at: &str) {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            for (k, v) in w {
                let inner = format!("{at}.{k}");
                holds(g.get(k).unwrap_or(&Value::Null), v, &inner);
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            assert_eq!(
                g.len(),
                w.len(),
                "{at}: {} items, {RELEASE} had {}",
                g.len(),
                w.len()
            );
            for (i, (g, w)) in g.iter().zip(w).enumerate() {
                holds(g, w, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(got, want, "{at} differs from what {RELEASE} answered"),
    }
}

async fn a_database_of_release_0_1_0_opens_with_every_record(b: Backend) {
    if std::env::var("UPDATE_UPGRADE_FIXTURES").is_ok_and(|v| v == "1") {
        make(b).await;
    }
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(recorded_path(b)).unwrap()).unwrap();
    let (url, path) = load(b).await;
    let sink = SmtpSink::start().await;
    let url2 = sink.url();
    let t = TestApp::spawn_on(b, url, path, move |c| {
        c.worker = false;
        c.scheduler = false;
        c.mail = crate::mail::with_smtp(&c.mail, &url2, vec![std::time::Duration::from_secs(60)]);
    })
    .await;
    assert!(
        t.db().ready().await,
        "every migration of this release is applied"
    );
    let key = recorded["key"].as_str().unwrap();
    let day = recorded["day"].as_str().unwrap();
    let got = answers(&t, key, &analytics_of(day)).await;
    let want = recorded["answers"].as_array().unwrap();
    assert_eq!(got.len(), want.len());
    for ((path, body), w) in got.iter().zip(want) {
        assert_eq!(path, w[0].as_str().unwrap());
        holds(body, &w[1], path);
    }
    // And the database goes on: a new job is listed with the old ones.
    let r = t
        .req(reqwest::Method::POST, "/jobs")
        .key(key)
        .json(json!({"title": "After the upgrade", "company_name": "Acme",
                     "description": "<p>New.</p>", "status": "active"}))
        .send()
        .await;
    r.expect(201);
    let list = t.req(reqwest::Method::GET, "/jobs").key(key).send().await;
    assert_eq!(list.body["meta"]["pagination"]["total_items"], 4);
}
