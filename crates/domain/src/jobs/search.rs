//! Job lists: filters, full-text search and totals, as SQL for either backend. Every
//! total is exact. Unfiltered lists are paged from the list index and counted from
//! counters kept by triggers; on SQLite, searches and filtered lists are answered by the
//! tagged full-text index ([`super::find`]); otherwise a page is chosen from an index and
//! only its rows are read, and the matches are counted.

use uuid::Uuid;

use super::{
    find, indexes,
    model::{JobListItem, JobStatus, ListFilter, Total},
};
use crate::{
    JobId, OrgId, Ts,
    db::{Backend, Db, DbResult},
    dispatch,
};

const LIST_COLUMNS: &str = JobListItem::COLUMNS;

enum Arg {
    Text(String),
    I64(i64),
    Bool(bool),
    F64(f64),
    Uuid(Uuid),
    Ts(Ts),
}

struct Sql {
    text: String,
    args: Vec<Arg>,
}

impl Sql {
    fn arg(&mut self, a: Arg) -> String {
        self.args.push(a);
        format!("${}", self.args.len())
    }
    fn list(&mut self, items: impl IntoIterator<Item = Arg>) -> String {
        let marks: Vec<String> = items.into_iter().map(|a| self.arg(a)).collect();
        marks.join(", ")
    }
}

macro_rules! bind_all {
    ($q:expr, $args:expr) => {{
        let mut q = $q;
        for a in $args {
            q = match a {
                Arg::Text(v) => q.bind(v),
                Arg::I64(v) => q.bind(*v),
                Arg::Bool(v) => q.bind(*v),
                Arg::F64(v) => q.bind(*v),
                Arg::Uuid(v) => q.bind(*v),
                Arg::Ts(v) => q.bind(*v),
            };
        }
        q
    }};
}

/// The WHERE clause of a list (parameters start at `$1`), without the search condition.
fn where_clause(org_id: OrgId, f: &ListFilter, now: Ts) -> Sql {
    let mut s = Sql {
        text: String::new(),
        args: Vec::new(),
    };
    let org = s.arg(Arg::I64(org_id.0));
    let mut conds = vec![format!("org_id = {org}")];
    if let Some(statuses) = &f.statuses {
        let marks = s.list(statuses.iter().map(|v| Arg::Text(v.as_str().to_string())));
        conds.push(format!("status IN ({marks})"));
    }
    // An active job past its expiry is no longer live, even before the scheduler moves it.
    let now_mark = s.arg(Arg::Ts(now));
    conds.push(format!(
        "(status <> 'active' OR expires_at IS NULL OR expires_at > {now_mark})"
    ));
    s.text = conds.join(" AND ");
    s
}

/// The conditions of the filters other than organization, status and search, joined
/// with AND (`None` when there are none).
fn filter_conds(s: &mut Sql, f: &ListFilter) -> Option<String> {
    let mut conds = Vec::new();
    if !f.job_types.is_empty() {
        let marks = s.list(
            f.job_types
                .iter()
                .map(|v| Arg::Text(v.as_str().to_string())),
        );
        conds.push(format!("job_type IN ({marks})"));
    }
    if !f.categories.is_empty() {
        let marks = s.list(f.categories.iter().map(|v| Arg::Uuid(v.0)));
        conds.push(format!("category_id IN ({marks})"));
    }
    if let Some(r) = f.is_remote {
        let m = s.arg(Arg::Bool(r));
        conds.push(format!("is_remote = {m}"));
    }
    if !f.locations.is_empty() {
        let alts: Vec<String> = f
            .locations
            .iter()
            .map(|l| {
                let m = s.arg(Arg::Text(find::like_pattern(l)));
                format!("lower(location) LIKE {m} ESCAPE '\\'")
            })
            .collect();
        conds.push(format!("({})", alts.join(" OR ")));
    }
    if let Some(min) = f.salary_min {
        let m = s.arg(Arg::F64(min));
        conds.push(format!("COALESCE(salary_max, salary_min) >= {m}"));
    }
    if let Some(c) = &f.country {
        let code = s.arg(Arg::Text(c.clone()));
        let remote = s.arg(Arg::Bool(true));
        let listed = s.arg(Arg::Text(format!("%,{c},%")));
        conds.push(format!(
            "(country = {code} OR (is_remote = {remote} AND ',' || remote_countries || ',' LIKE {listed}))"
        ));
    }
    (!conds.is_empty()).then(|| conds.join(" AND "))
}

/// The search as a query of the backend's full-text index. Words are letters and digits
/// only, and on SQLite each is a quoted prefix phrase, so no input can form query syntax.
fn search_query(backend: Backend, words: &[String]) -> String {
    match backend {
        Backend::Sqlite => find::words_query(words),
        Backend::Postgres => words
            .iter()
            .map(|w| format!("{w}:*"))
            .collect::<Vec<_>>()
            .join(" & "),
    }
}

/// A page of jobs and the exact number matching. `seen`: the organization's job list
/// version the caller has read, when it has (the search index then reads no changes
/// when it has applied that version).
pub async fn list(
    db: &Db,
    org_id: OrgId,
    f: &ListFilter,
    (limit, offset): (i64, i64),
    now: Ts,
    seen: Option<i64>,
) -> DbResult<(Vec<JobListItem>, Total)> {
    let exact = |items| Total { items };
    if f.counted() {
        let total = counted_total(db, org_id, f.statuses.as_deref(), now).await?;
        if offset >= total {
            return Ok((Vec::new(), exact(total)));
        }
        return Ok((page(db, org_id, f, now, limit, offset).await?, exact(total)));
    }
    if let Some(found) = indexes::find(db, org_id, f, (limit, offset), now, seen).await? {
        let ids: Vec<JobId> = found.ids;
        let rows = rows_by_id(db, org_id, &ids).await?;
        return Ok((rows, found.total));
    }
    // Salary and country are not in the full-text index: the general query answers them
    // when the node's search index cannot.
    if !f.by_row()
        && let crate::db::Pool::Sqlite(pool) = db.reader()
    {
        let mut conn = pool.acquire().await?;
        if let Some(found) = find::find(&mut conn, org_id, f, limit, offset, now).await? {
            let rows = rows_by_seq(&mut conn, &found.seqs).await?;
            return Ok((rows, found.total));
        }
    }
    let backend = db.backend();
    let p = page_query(backend, org_id, f, now, limit, offset);
    let c = count_query(backend, org_id, f, now);
    let (rows, total): (Vec<JobListItem>, i64) = match db.reader() {
        crate::db::Pool::Sqlite(pool) => (
            bind_all!(sqlx::query_as(sqlx::AssertSqlSafe(p.text)), &p.args)
                .fetch_all(pool)
                .await?,
            bind_all!(sqlx::query_scalar(sqlx::AssertSqlSafe(c.text)), &c.args)
                .fetch_one(pool)
                .await?,
        ),
        // One snapshot for the page and the total, with room for the bitmap of every
        // match: with the default `work_mem` (4 MB) the bitmap of a common word's matches
        // turns lossy past about 100,000 jobs and every row of its pages is checked again
        // (measured: 2.3 s instead of 0.7 s for 146,000 matches).
        crate::db::Pool::Postgres(pool) => {
            let mut tx = pool.begin().await?;
            sqlx::query("SET LOCAL work_mem = '16MB'")
                .execute(&mut *tx)
                .await?;
            let rows = bind_all!(sqlx::query_as(sqlx::AssertSqlSafe(p.text)), &p.args)
                .fetch_all(&mut *tx)
                .await?;
            let total = bind_all!(sqlx::query_scalar(sqlx::AssertSqlSafe(c.text)), &c.args)
                .fetch_one(&mut *tx)
                .await?;
            tx.commit().await?;
            (rows, total)
        }
    };
    Ok((rows, exact(total)))
}

/// One page: chosen from an index, then only its rows are read.
async fn page(
    db: &Db,
    org_id: OrgId,
    f: &ListFilter,
    now: Ts,
    limit: i64,
    offset: i64,
) -> DbResult<Vec<JobListItem>> {
    let p = page_query(db.backend(), org_id, f, now, limit, offset);
    Ok(dispatch!(db.reader(), pool => {
        bind_all!(sqlx::query_as(sqlx::AssertSqlSafe(p.text)), &p.args).fetch_all(pool).await?
    }))
}

/// The statement of one page of the list `f`.
fn page_query(
    backend: Backend,
    org_id: OrgId,
    f: &ListFilter,
    now: Ts,
    limit: i64,
    offset: i64,
) -> Sql {
    let mut w = conditions(backend, org_id, f, now);
    let key = match backend {
        Backend::Sqlite => "seq",
        Backend::Postgres => "id",
    };
    let order = "ORDER BY is_sticky DESC, created_at DESC, id DESC";
    let lim = w.arg(Arg::I64(limit));
    let off = w.arg(Arg::I64(offset));
    w.text = format!(
        "SELECT {LIST_COLUMNS} FROM jobs WHERE {key} IN \
         (SELECT {key} FROM jobs WHERE {} {order} LIMIT {lim} OFFSET {off}) {order}",
        w.text
    );
    w
}

/// The rows of these jobs (by `seq`, SQLite), in list order.
async fn rows_by_seq(
    conn: &mut sqlx::SqliteConnection,
    seqs: &[i64],
) -> DbResult<Vec<JobListItem>> {
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    let marks: Vec<String> = (1..=seqs.len()).map(|i| format!("${i}")).collect();
    let sql = format!(
        "SELECT {LIST_COLUMNS} FROM jobs WHERE seq IN ({}) ORDER BY is_sticky DESC, seq DESC",
        marks.join(", ")
    );
    let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql));
    for s in seqs {
        q = q.bind(*s);
    }
    Ok(q.fetch_all(&mut *conn).await?)
}

/// The rows of these jobs of the organization, in the order of `ids` (a job deleted
/// since its ids were chosen is left out).
async fn rows_by_id(db: &Db, org_id: OrgId, ids: &[JobId]) -> DbResult<Vec<JobListItem>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let marks: Vec<String> = (2..ids.len() + 2).map(|i| format!("${i}")).collect();
    // `+org_id`: the organization is checked on each row found by id, never used to
    // choose an index (SQLite would otherwise walk the organization's jobs for three ids
    // or more: 0.6 s at a million jobs).
    let sql = format!(
        "SELECT {LIST_COLUMNS} FROM jobs WHERE +org_id = $1 AND id IN ({})",
        marks.join(", ")
    );
    let mut rows: Vec<JobListItem> = dispatch!(db.reader(), p => {
        let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(org_id);
        for id in ids {
            q = q.bind(*id);
        }
        q.fetch_all(p).await?
    });
    let place: std::collections::HashMap<JobId, usize> =
        ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    rows.sort_by_key(|r| place.get(&r.id).copied().unwrap_or(usize::MAX));
    Ok(rows)
}

/// Every condition of the list `f`: organization, statuses, liveness, filters and search.
fn conditions(backend: Backend, org_id: OrgId, f: &ListFilter, now: Ts) -> Sql {
    let mut w = where_clause(org_id, f, now);
    if let Some(c) = filter_conds(&mut w, f) {
        w.text = format!("{} AND {c}", w.text);
    }
    if !f.search_words.is_empty() {
        let m = w.arg(Arg::Text(search_query(backend, &f.search_words)));
        w.text = match backend {
            Backend::Sqlite => format!(
                "{} AND seq IN (SELECT rowid FROM jobs_find WHERE jobs_find MATCH {m})",
                w.text
            ),
            Backend::Postgres => format!("{} AND search @@ to_tsquery('simple', {m})", w.text),
        };
    }
    w
}

/// The earliest `expires_at` after `now` among the organization's active jobs: the next
/// moment its lists change without a write.
pub async fn next_expiry(db: &Db, org_id: OrgId, now: Ts) -> DbResult<Option<Ts>> {
    let hint = match db.backend() {
        Backend::Sqlite => " INDEXED BY jobs_overdue",
        Backend::Postgres => "",
    };
    let sql = format!(
        "SELECT MIN(expires_at) FROM jobs{hint} WHERE org_id = $1 AND status = 'active' \
         AND expires_at IS NOT NULL AND expires_at > $2"
    );
    dispatch!(db.reader(), p => {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(org_id).bind(now).fetch_one(p).await.map_err(crate::db::StoreError::from)
    })
}

/// The statement that counts the matches of a filtered list or a search.
fn count_query(backend: Backend, org_id: OrgId, f: &ListFilter, now: Ts) -> Sql {
    let mut w = conditions(backend, org_id, f, now);
    w.text = format!("SELECT COUNT(*) FROM jobs WHERE {}", w.text);
    w
}

/// The number of jobs with these statuses, from the per-organization counters, less the
/// active jobs already past `expires_at` that the scheduler has not moved yet (one
/// statement).
async fn counted_total(
    db: &Db,
    org_id: OrgId,
    statuses: Option<&[JobStatus]>,
    now: Ts,
) -> DbResult<i64> {
    let mut s = Sql {
        text: String::new(),
        args: Vec::new(),
    };
    let org = s.arg(Arg::I64(org_id.0));
    let wanted = |st: &str| statuses.is_none_or(|l| l.iter().any(|x| x.as_str() == st));
    let listed: Vec<&str> = JobStatus::ALL
        .iter()
        .copied()
        .filter(|st| wanted(st))
        .collect();
    if listed.is_empty() {
        return Ok(0);
    }
    let marks = s.list(listed.iter().map(|v| Arg::Text(v.to_string())));
    let mut sql = format!(
        "SELECT CAST(COALESCE((SELECT SUM(n) FROM job_counts WHERE org_id = {org} AND status IN ({marks})), 0) AS BIGINT)"
    );
    if wanted("active") {
        // Without statistics SQLite would rather walk every active job of the list index.
        let hint = match db.backend() {
            Backend::Sqlite => " INDEXED BY jobs_overdue",
            Backend::Postgres => "",
        };
        let now = s.arg(Arg::Ts(now));
        sql.push_str(&format!(
            " - (SELECT COUNT(*) FROM jobs{hint} WHERE status = 'active' AND expires_at IS NOT NULL \
             AND expires_at <= {now} AND org_id = {org})"
        ));
    }
    let total: i64 = dispatch!(db.reader(), p => {
        bind_all!(sqlx::query_scalar(sqlx::AssertSqlSafe(sql)), &s.args).fetch_one(p).await?
    });
    Ok(total.max(0))
}

/// Which of `ids` the list `f` would show at `now` (same conditions as a page of the
/// list: statuses, expiry, filters and search), in no particular order.
pub async fn matching(
    db: &Db,
    org_id: OrgId,
    f: &ListFilter,
    ids: &[JobId],
    now: Ts,
) -> DbResult<Vec<JobId>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut w = conditions(db.backend(), org_id, f, now);
    let marks = w.list(ids.iter().map(|i| Arg::Uuid(i.0)));
    let sql = format!("SELECT id FROM jobs WHERE {} AND id IN ({marks})", w.text);
    Ok(dispatch!(db.reader(), p => {
        bind_all!(sqlx::query_scalar(sqlx::AssertSqlSafe(sql)), &w.args).persistent(false).fetch_all(p).await?
    }))
}
