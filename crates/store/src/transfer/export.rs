//! Writing an organization's export: every exported table's rows of the organization,
//! read in one snapshot of the database (a consistent copy while the server writes).

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use anyhow::Context;
use futures_util::TryStreamExt;
use jobboard_core::{JsonDoc, Money, OrgId, Ts};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{
    Cell, FORMAT, FORMAT_VERSION, read_cell,
    tables::{Kind, TABLES},
};
use crate::{Db, Pool, dispatch};

/// What an export wrote.
#[derive(Debug, Clone, Default)]
pub struct ExportReport {
    /// Rows written, by table, in the file's order (tables without rows included).
    pub rows: Vec<(&'static str, u64)>,
    /// Bytes of the file.
    pub bytes: u64,
    /// Webhook deliveries and mails of the organization still waiting to be sent here:
    /// not in the export (they are sent by this server).
    pub pending_deliveries: i64,
    pub pending_mails: i64,
}

/// Writes every exported record of organization `org` in `db` to the new file `to` (never
/// overwritten; readable by its owner only, since it holds secrets: webhook and payment
/// secrets, password and key hashes, two-factor secrets). The rows are read in one
/// snapshot, so the file is consistent while the server writes.
pub async fn export(db: &Db, org: OrgId, to: &Path) -> anyhow::Result<ExportReport> {
    if to.exists() {
        anyhow::bail!("{} exists: an export never overwrites a file", to.display());
    }
    let partial = partial_path(to);
    let file = open_private(&partial)?;
    let mut out = Hashed::new(std::io::BufWriter::with_capacity(1 << 16, file));
    let done = write_all(db, org, &mut out).await;
    let report = match done {
        Ok(report) => report,
        Err(e) => {
            drop(out);
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    };
    let (inner, bytes) = out.finish(report.rows.iter().map(|(_, n)| n).sum())?;
    inner.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&partial, to).with_context(|| format!("renaming to {}", to.display()))?;
    Ok(ExportReport { bytes, ..report })
}

async fn write_all<W: Write>(
    db: &Db,
    org: OrgId,
    out: &mut Hashed<W>,
) -> anyhow::Result<ExportReport> {
    let org_id = i64::from(org);
    let begin = match db.reader() {
        Pool::Sqlite(_) => "BEGIN",
        Pool::Postgres(_) => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    };
    dispatch!(db.reader(), p => {
        let mut tx = p.begin_with(begin).await?;
        let found: Option<i64> = sqlx::query_scalar("SELECT id FROM organizations WHERE id = $1")
            .bind(org_id)
            .fetch_optional(&mut *tx)
            .await?;
        if found.is_none() {
            anyhow::bail!("no organization {org_id} in this database");
        }
        let header = json!({
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "organization": org_id,
            "schema": crate::migrate::latest_version(),
            "exported_at": db.now().to_rfc3339(),
        });
        out.line(&header)?;
        let mut report = ExportReport::default();
        for table in TABLES {
            let cols = table.columns();
            let names: Vec<&str> = cols.iter().map(|c| c.name).collect();
            let sql = format!(
                "SELECT {} FROM {} WHERE {} ORDER BY {}",
                names.join(", "),
                table.name,
                table.rows,
                table.order
            );
            let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(org_id).fetch(&mut *tx);
            let mut n = 0u64;
            while let Some(r) = rows.try_next().await? {
                let mut row = serde_json::Map::with_capacity(cols.len());
                for (i, c) in cols.iter().enumerate() {
                    let cell: Cell = read_cell!(r, i, c.kind);
                    row.insert(c.name.to_string(), cell.to_json());
                }
                out.line(&json!({"table": table.name, "row": Value::Object(row)}))?;
                n += 1;
            }
            drop(rows);
            report.rows.push((table.name, n));
        }
        report.pending_deliveries = sqlx::query_scalar(
            "SELECT COUNT(*) FROM webhook_deliveries WHERE org_id = $1 AND status = 'pending'",
        )
        .bind(org_id)
        .fetch_one(&mut *tx)
        .await?;
        report.pending_mails = sqlx::query_scalar(
            "SELECT COUNT(*) FROM mail_outbox WHERE org_id = $1 AND status = 'pending'",
        )
        .bind(org_id)
        .fetch_one(&mut *tx)
        .await?;
        tx.rollback().await?;
        Ok(report)
    })
}

/// `to` with `.partial` added: where the file is written until it is whole.
fn partial_path(to: &Path) -> PathBuf {
    let mut s = to.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

fn open_private(path: &Path) -> anyhow::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path)
        .with_context(|| format!("creating {}", path.display()))
}

/// A writer of the file's lines that hashes every byte it writes (for the end line).
struct Hashed<W: Write> {
    inner: W,
    hash: Sha256,
    bytes: u64,
}

impl<W: Write> Hashed<W> {
    fn new(inner: W) -> Self {
        Hashed {
            inner,
            hash: Sha256::new(),
            bytes: 0,
        }
    }

    fn line(&mut self, v: &Value) -> anyhow::Result<()> {
        let mut s = serde_json::to_vec(v)?;
        s.push(b'\n');
        self.hash.update(&s);
        self.bytes += s.len() as u64;
        self.inner.write_all(&s)?;
        Ok(())
    }

    /// Writes the end line; returns the writer and the file's size.
    fn finish(mut self, rows: u64) -> anyhow::Result<(W, u64)> {
        let digest = hex::encode(self.hash.finalize_reset());
        let mut end = serde_json::to_vec(&json!({"end": {"rows": rows, "sha256": digest}}))?;
        end.push(b'\n');
        self.inner.write_all(&end)?;
        self.inner.flush()?;
        Ok((self.inner, self.bytes + end.len() as u64))
    }
}
