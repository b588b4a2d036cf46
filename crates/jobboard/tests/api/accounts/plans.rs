//! The account pages read only the member's own rows: their statements are answered
//! through the indexes made for them (`jobs_owner`, `applications_email`), as the
//! server's own database engine plans them (bench/accounts.sh measures them at
//! 1,000,000 jobs, with the plans on that data).

use sqlx::Row;

use super::*;
use crate::backends;
use jobboard_store::{Backend as Engine, dispatch_tx};

backends!(the_members_statements_use_their_indexes);

/// The plan of `sql` as text. On PostgreSQL sequential scans are made dear for the
/// statement, so that the plan shows whether an index can answer it at all on a few rows.
async fn plan(t: &TestApp, sql: &str) -> String {
    let sqlite = t.db().backend() == Engine::Sqlite;
    let (explain, column) = if sqlite {
        (format!("EXPLAIN QUERY PLAN {sql}"), "detail")
    } else {
        (format!("EXPLAIN {sql}"), "QUERY PLAN")
    };
    let mut tx = t.db().begin().await.unwrap();
    let lines: Vec<String> = dispatch_tx!(&mut tx, c => {
        if !sqlite {
            sqlx::query("SET LOCAL enable_seqscan = off")
                .execute(&mut **c)
                .await
                .unwrap();
        }
        sqlx::query(sqlx::AssertSqlSafe(explain))
            .fetch_all(&mut **c)
            .await
            .unwrap()
            .iter()
            .map(|r| r.try_get::<String, _>(column).unwrap())
            .collect()
    });
    drop(tx);
    lines.join("\n")
}

async fn the_members_statements_use_their_indexes(b: Backend) {
    let sink = SmtpSink::start().await;
    let t = spawn(b, &sink, "closed", "auto", "pending").await;
    let member = member(&t, "owner@example.com", "employer", "approved").await;
    for i in 0..30 {
        let r = t
            .post(
                "/jobs",
                json!({"title": format!("Job {i}"), "description": "x", "company_name": "Acme",
                       "owner_user_id": if i % 3 == 0 { json!(member) } else { json!(null) }}),
            )
            .await;
        r.expect(201);
        let job = r.body["data"]["id"].as_str().unwrap().to_string();
        t.post(
            &format!("/jobs/{job}/applications"),
            json!({"name": "A", "email": format!("applicant{i}@example.com")}),
        )
        .await
        .expect(201);
    }
    let sqlite = t.db().backend() == Engine::Sqlite;
    let (mid, fold) = if sqlite {
        (format!("X'{}'", member.replace('-', "")), "lower(email)")
    } else {
        (
            format!("'{member}'::uuid"),
            "translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')",
        )
    };
    let org = t.org_id.0;
    let page = plan(
        &t,
        &format!(
            "SELECT id FROM jobs WHERE org_id = {org} AND owner_user_id = {mid} \
             ORDER BY created_at DESC, id DESC LIMIT 50 OFFSET 0"
        ),
    )
    .await;
    assert!(page.contains("jobs_owner"), "{page}");
    let count = plan(
        &t,
        &format!("SELECT COUNT(*) FROM jobs WHERE org_id = {org} AND owner_user_id = {mid}"),
    )
    .await;
    assert!(count.contains("jobs_owner"), "{count}");
    let applications = plan(
        &t,
        &format!(
            "SELECT id FROM applications WHERE org_id = {org} AND {fold} = 'owner@example.com' \
             ORDER BY created_at DESC, id DESC"
        ),
    )
    .await;
    assert!(
        applications.contains("applications_email"),
        "{applications}"
    );
}
