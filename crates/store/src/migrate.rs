//! A small migration runner: the SQL of each backend is embedded in the binary, applied in
//! version order, each in its own transaction, and recorded with a checksum.

use sha2::{Digest, Sha256};
use sqlx::Connection;

use super::{Db, Pool};

struct Migration {
    version: i64,
    name: &'static str,
    sqlite: &'static str,
    postgres: &'static str,
}

macro_rules! migration {
    ($version:expr, $file:literal) => {
        Migration {
            version: $version,
            name: $file,
            sqlite: include_str!(concat!("../migrations/sqlite/", $file, ".sql")),
            postgres: include_str!(concat!("../migrations/postgres/", $file, ".sql")),
        }
    };
}

const MIGRATIONS: &[Migration] = &[
    migration!(1, "0001_foundation"),
    migration!(2, "0002_jobs"),
    migration!(3, "0003_members"),
    migration!(4, "0004_cms"),
    migration!(5, "0005_webhooks"),
    migration!(6, "0006_applications_analytics"),
    migration!(7, "0007_analytics_sketches"),
    migration!(8, "0008_job_list_versions"),
    migration!(10, "0010_mail"),
    migration!(11, "0011_member_email_identity"),
    migration!(12, "0012_board"),
    migration!(14, "0014_dashboard"),
    migration!(17, "0017_access_cancel_due"),
    migration!(19, "0019_payments_outlive_members"),
    migration!(20, "0020_webhook_secret_rotation"),
    migration!(21, "0021_cms_rules"),
    migration!(22, "0022_employer_mail"),
    migration!(23, "0023_jobs_list_all"),
    migration!(24, "0024_job_alerts"),
    migration!(25, "0025_job_search_tags"),
    migration!(26, "0026_rate_limit_groups"),
    migration!(27, "0027_counter_shards"),
    migration!(28, "0028_job_changes"),
    migration!(29, "0029_mail_recipients"),
    migration!(30, "0030_domain_claims"),
    migration!(31, "0031_login_throttle"),
    migration!(32, "0032_password_reset"),
    migration!(33, "0033_alert_failures"),
    migration!(34, "0034_audit_log"),
    migration!(35, "0035_two_factor"),
    migration!(36, "0036_retention"),
    migration!(37, "0037_delivery_log_retention"),
    migration!(38, "0038_member_accounts"),
    migration!(39, "0039_payments"),
    migration!(40, "0040_post_packs"),
    migration!(41, "0041_imports"),
    migration!(42, "0042_job_places"),
    migration!(43, "0043_instant_indexing"),
    migration!(44, "0044_job_changes_places"),
    migration!(45, "0045_applications_after_job"),
];

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
    version BIGINT PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)";

/// Arbitrary constant naming the advisory lock that serialises migrations across nodes.
const PG_LOCK_KEY: i64 = 0x6a6f_6262_6f61_7264;

fn checksum(sql: &str) -> String {
    hex::encode(Sha256::digest(sql.as_bytes()))
}

pub(super) async fn run(db: &Db) -> anyhow::Result<Vec<String>> {
    let mut applied = Vec::new();
    match &*db.writer() {
        Pool::Postgres(pool) => {
            let mut conn = pool.acquire().await?;
            sqlx::query("SELECT pg_advisory_lock($1)")
                .bind(PG_LOCK_KEY)
                .execute(&mut *conn)
                .await?;
            let result = async {
                sqlx::raw_sql(CREATE_TABLE).execute(&mut *conn).await?;
                not_newer(sqlx::query_scalar(NEWEST).fetch_one(&mut *conn).await?)?;
                for m in MIGRATIONS {
                    let mut tx = conn.begin().await?;
                    let done: Option<String> = sqlx::query_scalar(
                        "SELECT checksum FROM schema_migrations WHERE version = $1",
                    )
                    .bind(m.version)
                    .fetch_optional(&mut *tx)
                    .await?;
                    if check(m, done.as_deref(), m.postgres)? {
                        continue;
                    }
                    sqlx::raw_sql(m.postgres).execute(&mut *tx).await?;
                    record(&mut *tx, m, m.postgres).await?;
                    tx.commit().await?;
                    applied.push(m.name.to_string());
                }
                anyhow::Ok(())
            }
            .await;
            sqlx::query("SELECT pg_advisory_unlock($1)")
                .bind(PG_LOCK_KEY)
                .execute(&mut *conn)
                .await?;
            result?;
        }
        Pool::Sqlite(pool) => {
            let mut conn = pool.acquire().await?;
            sqlx::raw_sql(CREATE_TABLE).execute(&mut *conn).await?;
            not_newer(sqlx::query_scalar(NEWEST).fetch_one(&mut *conn).await?)?;
            for m in MIGRATIONS {
                // IMMEDIATE takes the write lock first, so two processes cannot both apply.
                let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
                let done: Option<String> =
                    sqlx::query_scalar("SELECT checksum FROM schema_migrations WHERE version = $1")
                        .bind(m.version)
                        .fetch_optional(&mut *tx)
                        .await?;
                if check(m, done.as_deref(), m.sqlite)? {
                    continue;
                }
                sqlx::raw_sql(m.sqlite).execute(&mut *tx).await?;
                record(&mut *tx, m, m.sqlite).await?;
                tx.commit().await?;
                applied.push(m.name.to_string());
            }
        }
    }
    Ok(applied)
}

const NEWEST: &str = "SELECT MAX(version) FROM schema_migrations";

/// Refuses a database that a later release has migrated: this one does not know what
/// its newer tables and columns mean.
fn not_newer(newest: Option<i64>) -> anyhow::Result<()> {
    match newest {
        Some(v) if v > latest_version() => anyhow::bail!(
            "this database was migrated by a later release (schema version {v}; this release \
             knows versions up to {}): run that release, or restore a backup taken before \
             the upgrade",
            latest_version()
        ),
        _ => Ok(()),
    }
}

/// True when `m` is already applied; an error when it was applied with other SQL.
fn check(m: &Migration, stored: Option<&str>, sql: &str) -> anyhow::Result<bool> {
    match stored {
        None => Ok(false),
        Some(sum) if sum == checksum(sql) => Ok(true),
        Some(_) => anyhow::bail!("migration {} was changed after it was applied", m.name),
    }
}

async fn record<'c, E>(ex: E, m: &Migration, sql: &str) -> sqlx::Result<()>
where
    E: sqlx::Executor<'c>,
    for<'q> i64: sqlx::Encode<'q, E::Database> + sqlx::Type<E::Database>,
    for<'q> String: sqlx::Encode<'q, E::Database> + sqlx::Type<E::Database>,
    for<'q> <E::Database as sqlx::Database>::Arguments: sqlx::IntoArguments<E::Database>,
{
    sqlx::query("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES ($1, $2, $3, $4)")
        .bind(m.version)
        .bind(m.name.to_string())
        .bind(checksum(sql))
        .bind(chrono::Utc::now().to_rfc3339())
        .execute(ex)
        .await?;
    Ok(())
}

/// The newest migration of this release.
pub(super) fn latest_version() -> i64 {
    MIGRATIONS.last().map(|m| m.version).unwrap_or(0)
}

pub(super) async fn is_current(db: &Db) -> anyhow::Result<bool> {
    let max: Option<i64> = crate::dispatch!(db.reader(), p => {
        sqlx::query_scalar(NEWEST).fetch_one(p).await?
    });
    Ok(max == Some(latest_version()))
}
