//! How an index follows its organization's jobs: the changes committed since its last
//! read (`job_changes`), each job read with its change, applied once.

use std::{collections::HashMap, sync::atomic::Ordering, time::Instant};

use jobboard_search::index::{Doc, Key};
use uuid::Uuid;

use super::Live;
use crate::{
    Countries, OrgId, Ts,
    db::{Db, DbResult, Pool},
    jobs::index,
};

/// Where an index's next change read starts.
#[derive(Debug, Clone)]
pub(super) enum Mark {
    /// SQLite: the last change id applied.
    Sqlite(i64),
    /// PostgreSQL: the oldest transaction running at the last read, and the changes of
    /// transactions from it on that are already applied (by change id, with their
    /// transaction).
    Postgres {
        xmin: u64,
        applied: HashMap<i64, u64>,
    },
}

/// A change and, when the job still exists, its row (read in the same statement).
#[derive(Debug, sqlx::FromRow)]
struct ChangeRow {
    version: Option<i64>,
    xmin: Option<String>,
    change: Option<i64>,
    xid: Option<String>,
    job_id: Option<Uuid>,
    changed_created: Option<Ts>,
    text: Option<bool>,
    id: Option<Uuid>,
    created_at: Option<Ts>,
    status: Option<String>,
    is_sticky: Option<bool>,
    is_remote: Option<bool>,
    job_type: Option<String>,
    category_id: Option<Uuid>,
    location: Option<String>,
    country: Option<String>,
    remote_countries: Option<Countries>,
    salary_min: Option<f64>,
    salary_max: Option<f64>,
    expires_at: Option<Ts>,
    title: Option<String>,
    company_name: Option<String>,
    description_text: Option<String>,
}

impl ChangeRow {
    fn doc(&self) -> Option<Doc> {
        Some(Doc {
            id: self.id?,
            created_at: self.created_at?,
            status: self.status.clone()?,
            is_sticky: self.is_sticky?,
            is_remote: self.is_remote?,
            job_type: self.job_type.clone(),
            category_id: self.category_id,
            location: self.location.clone(),
            countries: index::countries_of(
                self.country.as_deref(),
                self.is_remote?,
                self.remote_countries.as_ref(),
            ),
            salary: index::salary_of(self.salary_min, self.salary_max),
            expires_at: self.expires_at,
            title: self.title.clone()?,
            company_name: self.company_name.clone()?,
            description_text: self.description_text.clone()?,
        })
    }
}

const CHANGE_COLUMNS: &str = "c.id AS change, c.job_id, c.created_at AS changed_created, \
    c.text, j.id, j.created_at, j.status, j.is_sticky, j.is_remote, j.job_type, \
    j.category_id, j.location, j.country, j.remote_countries, j.salary_min, j.salary_max, \
    j.expires_at, j.title, j.company_name, j.description_text";

impl Live {
    /// Applies every change committed before this call began (or, with `seen`, before
    /// the organization's job list version was `seen`).
    pub(super) async fn catch_up(&self, db: &Db, org_id: OrgId, seen: Option<i64>) -> DbResult<()> {
        if seen.is_some_and(|v| self.version.load(Ordering::Acquire) >= v) {
            return Ok(());
        }
        // A read that starts after this point covers this call.
        let ticket = self.started.load(Ordering::Acquire) + 1;
        let _one = self.refresh.lock().await;
        if self.finished.load(Ordering::Acquire) >= ticket {
            return Ok(());
        }
        let n = self.started.fetch_add(1, Ordering::AcqRel) + 1;
        let mark = self.mark.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let rows: Vec<ChangeRow> = match (&mark, db.reader()) {
            (Mark::Sqlite(last), Pool::Sqlite(p)) => {
                let sql = format!(
                    "SELECT x.version, NULL AS xmin, NULL AS xid, {CHANGE_COLUMNS} \
                     FROM (SELECT {} AS version) x \
                     LEFT JOIN job_changes c ON c.org_id = $1 AND c.id > $2 \
                     LEFT JOIN jobs j ON j.id = c.job_id AND j.org_id = c.org_id \
                     ORDER BY c.id",
                    crate::job_list_version!("$1")
                );
                sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(org_id)
                    .bind(*last)
                    .fetch_all(p)
                    .await?
            }
            (Mark::Postgres { xmin, .. }, Pool::Postgres(p)) => {
                let sql = format!(
                    "SELECT s.version, s.xmin, c.xid::text AS xid, {CHANGE_COLUMNS} \
                     FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin, \
                     {} AS version) s \
                     LEFT JOIN job_changes c ON c.org_id = $1 AND c.xid >= $2::text::xid8 \
                     LEFT JOIN jobs j ON j.id = c.job_id AND j.org_id = c.org_id \
                     ORDER BY c.id",
                    crate::job_list_version!("$1")
                );
                sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(org_id)
                    .bind(xmin.to_string())
                    .fetch_all(p)
                    .await?
            }
            _ => Vec::new(),
        };
        let new_mark = self.apply(mark, &rows);
        *self.mark.lock().unwrap_or_else(|e| e.into_inner()) = new_mark;
        if let Some(v) = rows.first().and_then(|r| r.version) {
            self.version.fetch_max(v, Ordering::AcqRel);
        }
        *self.last_read.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.finished.store(n, Ordering::Release);
        Ok(())
    }

    /// Applies the changes of `rows` not applied before; returns the next mark.
    fn apply(&self, mark: Mark, rows: &[ChangeRow]) -> Mark {
        // Each job once, with whether any of its changes touched its words.
        let mut jobs: Vec<(Key, bool, Option<Doc>)> = Vec::new();
        let mut seen: HashMap<Key, usize> = HashMap::new();
        let mut mark = mark;
        for r in rows {
            let (Some(change), Some(job_id), Some(created)) =
                (r.change, r.job_id, r.changed_created)
            else {
                continue;
            };
            match &mut mark {
                Mark::Sqlite(last) => *last = (*last).max(change),
                Mark::Postgres { applied, .. } => {
                    let xid = r.xid.as_deref().and_then(|x| x.parse().ok()).unwrap_or(0);
                    if applied.insert(change, xid).is_some() {
                        continue;
                    }
                }
            }
            let key = (created.micros(), job_id);
            let text = r.text.unwrap_or(true);
            match seen.get(&key) {
                Some(&i) => jobs[i].1 |= text,
                None => {
                    seen.insert(key, jobs.len());
                    jobs.push((key, text, r.doc()));
                }
            }
        }
        if let Mark::Postgres { xmin, applied } = &mut mark
            && let Some(x) = rows
                .first()
                .and_then(|r| r.xmin.as_deref())
                .and_then(|x| x.parse().ok())
        {
            *xmin = x;
            applied.retain(|_, xid| *xid >= x);
        }
        if jobs.is_empty() {
            return mark;
        }
        let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
        for (key, text, doc) in &jobs {
            match doc {
                Some(d) if (d.created_at.micros(), d.id) == *key => {
                    if index.put(d, *text).is_err() {
                        self.broken.store(true, Ordering::Relaxed);
                    }
                }
                _ => index.remove(*key),
            }
        }
        // Measured again after a sixteenth of its jobs (16 to 1,024), so that a small
        // board's index is counted as it grows as well as a large one's.
        let applied = self.since_measured.fetch_add(jobs.len(), Ordering::Relaxed) + jobs.len();
        if applied >= (index.len() / 16).clamp(16, 1024) {
            self.since_measured.store(0, Ordering::Relaxed);
            self.measured(index.heap_bytes());
        }
        mark
    }
}
