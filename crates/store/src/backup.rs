//! Backups of an SQLite database taken while the server serves and writes, and their
//! restoration.
//!
//! A backup is SQLite's `VACUUM INTO`: one read transaction copies a consistent snapshot
//! of the database into a new, compact file, while writers go on (in WAL mode readers
//! never block writers). The copy is checked (`PRAGMA integrity_check`, the schema
//! version) before the backup is reported done. On PostgreSQL, `pg_dump` is the tool.
//!
//! Every process that opens an SQLite file through [`super::Db`] holds a shared lock on
//! `<file>-lock` for as long as it has it open; a restore takes that lock exclusively, so
//! it is refused while a server (or a command) uses the database, and no server can
//! start in the middle of it. The database a restore replaces is kept beside it.

use std::{
    fs::{File, OpenOptions, TryLockError},
    path::{Path, PathBuf},
    str::FromStr,
    time::{Duration, Instant},
};

use anyhow::Context;
use sqlx::{
    ConnectOptions, Connection,
    sqlite::{SqliteConnectOptions, SqliteConnection},
};

/// What a backup or a restore did.
#[derive(Debug, Clone)]
pub struct Report {
    /// Bytes of the file written.
    pub bytes: u64,
    /// The newest migration of the copy.
    pub schema_version: i64,
    /// How long the copy took (the read transaction of the snapshot, the check apart).
    pub copy_took: Duration,
    /// Where a restore moved the database it replaced.
    pub previous: Option<PathBuf>,
}

const ON_POSTGRES: &str = "this database is PostgreSQL: take backups with pg_dump \
     (e.g. `pg_dump --format=custom --file=jobboard.dump DBNAME`) and restore them with \
     pg_restore (docs/operating.md, Backups)";

fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// The file of an SQLite URL (an in-memory database has none).
pub fn sqlite_file(url: &str) -> anyhow::Result<PathBuf> {
    let opts = SqliteConnectOptions::from_str(url)
        .with_context(|| format!("not an SQLite database URL: {}", super::redact_url(url)))?;
    let path = opts.get_filename().to_path_buf();
    if url.contains(":memory:") || url.contains("mode=memory") || path.as_os_str().is_empty() {
        anyhow::bail!("an in-memory database has no file to back up or restore");
    }
    Ok(path)
}

/// `path` with `suffix` added to its file name (`jobboard.db` -> `jobboard.db-lock`).
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn lock_file(db: &Path) -> anyhow::Result<File> {
    let path = with_suffix(db, "-lock");
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))
}

/// True when another process (a server, a command) has the SQLite database at `db` open.
/// Call it with no handle of this process open, since its own lock counts too.
pub fn open_elsewhere(db: &Path) -> bool {
    let Ok(f) = lock_file(db) else {
        return false;
    };
    match f.try_lock() {
        Ok(()) => {
            let _ = f.unlock();
            false
        }
        Err(TryLockError::WouldBlock) => true,
        Err(TryLockError::Error(_)) => false,
    }
}

/// The shared lock a process holds while it has the database at `db` open; refused
/// while a restore replaces it. Where no lock file can be made (a read-only folder) the
/// database opens without one, with a warning: only `restore` then cannot tell it is in
/// use.
pub(super) fn hold_shared(db: &Path) -> anyhow::Result<Option<File>> {
    let f = match lock_file(db) {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "no lock file beside the database; restore cannot tell it is in use");
            return Ok(None);
        }
    };
    match f.try_lock_shared() {
        Ok(()) => Ok(Some(f)),
        Err(TryLockError::WouldBlock) => anyhow::bail!(
            "{} is being restored from a backup; start again once the restore is done",
            db.display()
        ),
        Err(TryLockError::Error(e)) => {
            tracing::warn!(error = %e, "the database's lock file cannot be locked; restore cannot tell it is in use");
            Ok(None)
        }
    }
}

async fn open(path: &Path, read_only: bool) -> anyhow::Result<SqliteConnection> {
    SqliteConnectOptions::new()
        .filename(path)
        .read_only(read_only)
        .busy_timeout(Duration::from_secs(30))
        .connect()
        .await
        .with_context(|| format!("opening {}", path.display()))
}

/// Copies the database of `conn` into the new file `to` with `VACUUM INTO`.
async fn vacuum_into(conn: &mut SqliteConnection, to: &Path) -> anyhow::Result<Duration> {
    let target = to
        .to_str()
        .context("the backup's path must be valid UTF-8")?;
    let started = Instant::now();
    sqlx::query("VACUUM INTO $1")
        .bind(target)
        .execute(&mut *conn)
        .await
        .with_context(|| format!("copying the database into {}", to.display()))?;
    Ok(started.elapsed())
}

/// Checks the copy at `path`: SQLite's integrity check passes and it holds this
/// service's schema; answers its newest migration.
pub async fn verify(path: &Path) -> anyhow::Result<i64> {
    let mut conn = open(path, true).await?;
    let problems: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_all(&mut conn)
        .await
        .with_context(|| format!("checking {}", path.display()))?;
    if problems != ["ok"] {
        anyhow::bail!(
            "{} fails SQLite's integrity check: {}",
            path.display(),
            problems.join("; ")
        );
    }
    let version: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM schema_migrations")
        .fetch_one(&mut conn)
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "{} is not a jobboard database (no schema_migrations)",
                path.display()
            )
        })?;
    conn.close().await.ok();
    version.with_context(|| format!("{} has no migration applied", path.display()))
}

/// Takes a consistent copy of the SQLite database of `url` into the new file `to` while
/// it serves, and checks it.
pub async fn backup(url: &str, to: &Path) -> anyhow::Result<Report> {
    if is_postgres(url) {
        anyhow::bail!(ON_POSTGRES);
    }
    let source = sqlite_file(url)?;
    if !source.exists() {
        anyhow::bail!("{} does not exist", source.display());
    }
    if to.exists() {
        anyhow::bail!(
            "{} exists already: a backup never overwrites a file; choose a new name",
            to.display()
        );
    }
    let mut conn = open(&source, false).await?;
    let copy_took = vacuum_into(&mut conn, to).await?;
    conn.close().await.ok();
    match verify(to).await {
        Ok(schema_version) => Ok(Report {
            bytes: std::fs::metadata(to)?.len(),
            schema_version,
            copy_took,
            previous: None,
        }),
        Err(e) => {
            let _ = std::fs::remove_file(to);
            Err(e.context("the backup was removed"))
        }
    }
}

/// Replaces the SQLite database of `url` with the backup at `from`: refused while any
/// process has the database open, and when the backup is damaged or was made by a newer
/// release. The replaced database (with its `-wal` and `-shm` files) is moved to
/// `<file>.before-restore-<unix time>`.
pub async fn restore(url: &str, from: &Path) -> anyhow::Result<Report> {
    if is_postgres(url) {
        anyhow::bail!(ON_POSTGRES);
    }
    let target = sqlite_file(url)?;
    let version = verify(from)
        .await
        .context("the backup cannot be restored")?;
    let newest = super::migrate::latest_version();
    if version > newest {
        anyhow::bail!(
            "the backup has schema version {version}, newer than this release's {newest}: \
             restore it with the release that made it"
        );
    }
    let lock = lock_file(&target)?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => anyhow::bail!(
            "{} is in use by a jobboard server or command: stop it, then restore",
            target.display()
        ),
        Err(TryLockError::Error(e)) => return Err(e).context("locking the database"),
    }
    let staging = with_suffix(&target, ".restoring");
    let _ = std::fs::remove_file(&staging);
    let mut conn = open(from, true).await?;
    let copy_took = vacuum_into(&mut conn, &staging).await?;
    conn.close().await.ok();
    let schema_version = verify(&staging).await?;
    let previous = if target.exists() {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let aside = with_suffix(&target, &format!(".before-restore-{stamp}"));
        for suffix in ["", "-wal", "-shm"] {
            let from = with_suffix(&target, suffix);
            if from.exists() {
                std::fs::rename(&from, with_suffix(&aside, suffix))
                    .with_context(|| format!("moving {} aside", from.display()))?;
            }
        }
        Some(aside)
    } else {
        None
    };
    std::fs::rename(&staging, &target)
        .with_context(|| format!("moving the restored copy to {}", target.display()))?;
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        File::open(dir).and_then(|d| d.sync_all()).ok();
    }
    drop(lock);
    Ok(Report {
        bytes: std::fs::metadata(&target)?.len(),
        schema_version,
        copy_took,
        previous,
    })
}
