//! Job lists: filters, full-text search and totals, as SQL for either backend. Pages are
//! chosen from an index and only their rows are read; unfiltered totals come from
//! counters kept by triggers; filtered and search totals count at most [`COUNT_LIMIT`]
//! candidates.

use uuid::Uuid;

use super::model::{JobListItem, JobStatus, ListFilter, Total};
use crate::{
    db::{Backend, Db, DbResult},
    dispatch,
    domain::Ts,
};

const LIST_COLUMNS: &str = JobListItem::COLUMNS;

enum Arg {
    Text(String),
    I64(i64),
    Bool(bool),
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
                Arg::Uuid(v) => q.bind(*v),
                Arg::Ts(v) => q.bind(*v),
            };
        }
        q
    }};
}

fn escape_like(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('%');
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// At most this many candidate jobs are examined to count the matches of a filtered list
/// or a search (the jobs of the listed statuses, or the search's word matches, newest
/// first). When there are more, the count is the number of matches among them: a lower
/// bound, reported with `total_items_exact: false`.
pub const COUNT_LIMIT: i64 = 10_000;

/// The WHERE clause of a list (parameters start at `$1`), without the search condition.
fn where_clause(org_id: i64, f: &ListFilter, now: Ts) -> Sql {
    let mut s = Sql {
        text: String::new(),
        args: Vec::new(),
    };
    let org = s.arg(Arg::I64(org_id));
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
        let marks = s.list(f.categories.iter().map(|v| Arg::Uuid(*v)));
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
                let m = s.arg(Arg::Text(escape_like(l)));
                format!("lower(location) LIKE {m} ESCAPE '\\'")
            })
            .collect();
        conds.push(format!("({})", alts.join(" OR ")));
    }
    (!conds.is_empty()).then(|| conds.join(" AND "))
}

/// The search as a query of the backend's full-text index. Words are letters and digits
/// only, and on SQLite each is a quoted prefix phrase, so no input can form query syntax.
fn search_query(backend: Backend, words: &[String]) -> String {
    match backend {
        Backend::Sqlite => words
            .iter()
            .map(|w| format!("\"{}\"*", w.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" "),
        Backend::Postgres => words
            .iter()
            .map(|w| format!("{w}:*"))
            .collect::<Vec<_>>()
            .join(" & "),
    }
}

/// A page of jobs and the number matching. Unfiltered lists are counted from the
/// counters; filtered lists and searches examine at most [`COUNT_LIMIT`] candidates.
pub async fn list(
    db: &Db,
    org_id: i64,
    f: &ListFilter,
    limit: i64,
    offset: i64,
    now: Ts,
) -> DbResult<(Vec<JobListItem>, Total)> {
    if f.counted() {
        let total = counted_total(db, org_id, f.statuses.as_deref(), now).await?;
        if offset >= total {
            return Ok((
                Vec::new(),
                Total {
                    items: total,
                    exact: true,
                },
            ));
        }
        let (rows, _) = page(db, org_id, f, now, limit, offset).await?;
        return Ok((
            rows,
            Total {
                items: total,
                exact: true,
            },
        ));
    }
    let (rows, more) = page(db, org_id, f, now, limit, offset).await?;
    let mut total = bounded_count(db, org_id, f, now).await?;
    // A lower bound is never below what the page itself shows.
    if !rows.is_empty() {
        total.items = total
            .items
            .max(offset + rows.len() as i64 + i64::from(more));
    }
    Ok((rows, total))
}

/// One page (and whether a job follows it): the page is chosen from an index, then only
/// its rows are read.
async fn page(
    db: &Db,
    org_id: i64,
    f: &ListFilter,
    now: Ts,
    limit: i64,
    offset: i64,
) -> DbResult<(Vec<JobListItem>, bool)> {
    let backend = db.backend();
    if backend == Backend::Sqlite && !f.search_words.is_empty() {
        return search_page_sqlite(db, org_id, f, now, limit, offset).await;
    }
    let mut w = where_clause(org_id, f, now);
    if let Some(c) = filter_conds(&mut w, f) {
        w.text = format!("{} AND {c}", w.text);
    }
    if !f.search_words.is_empty() {
        let m = w.arg(Arg::Text(search_query(backend, &f.search_words)));
        w.text = format!("{} AND search @@ to_tsquery('simple', {m})", w.text);
    }
    let key = match backend {
        Backend::Sqlite => "seq",
        Backend::Postgres => "id",
    };
    let order = "ORDER BY is_sticky DESC, created_at DESC, id DESC";
    let lim = w.arg(Arg::I64(limit + 1));
    let off = w.arg(Arg::I64(offset));
    let sql = format!(
        "SELECT {LIST_COLUMNS} FROM jobs WHERE {key} IN \
         (SELECT {key} FROM jobs WHERE {} {order} LIMIT {lim} OFFSET {off}) {order}",
        w.text
    );
    let mut rows: Vec<JobListItem> = dispatch!(db.reader(), p => {
        bind_all!(sqlx::query_as(sqlx::AssertSqlSafe(sql)), &w.args).fetch_all(p).await?
    });
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    Ok((rows, more))
}

/// A page of a search on SQLite: the sticky matches (few) by their own query, then the
/// others in the full-text index's own order (newest first), which stops after the page.
async fn search_page_sqlite(
    db: &Db,
    org_id: i64,
    f: &ListFilter,
    now: Ts,
    limit: i64,
    offset: i64,
) -> DbResult<(Vec<JobListItem>, bool)> {
    let mut w = where_clause(org_id, f, now);
    let conds = filter_conds(&mut w, f);
    let hint = if conds.is_none() {
        " INDEXED BY jobs_search_keys"
    } else {
        ""
    };
    if let Some(c) = conds {
        w.text = format!("{} AND {c}", w.text);
    }
    let m = w.arg(Arg::Text(search_query(Backend::Sqlite, &f.search_words)));
    // Sticky matches: from the index of the sticky jobs (few), newest first.
    let sql = format!(
        "SELECT j.seq FROM jobs_fts_sticky CROSS JOIN jobs j ON j.seq = jobs_fts_sticky.rowid \
         WHERE jobs_fts_sticky MATCH {m} AND {} AND j.is_sticky = 1 ORDER BY jobs_fts_sticky.rowid DESC",
        w.text
    );
    let sticky: Vec<i64> = dispatch!(db.reader(), p => {
        bind_all!(sqlx::query_scalar(sqlx::AssertSqlSafe(sql)), &w.args).fetch_all(p).await?
    });
    let mut seqs: Vec<i64> = sticky
        .iter()
        .skip(offset as usize)
        .take(limit as usize + 1)
        .copied()
        .collect();
    let want = limit + 1 - seqs.len() as i64;
    if want > 0 {
        let skip = (offset - sticky.len() as i64).max(0);
        let lim = w.arg(Arg::I64(want));
        let off = w.arg(Arg::I64(skip));
        // Walks the matches newest first and stops after the page.
        let sql = format!(
            "SELECT j.seq FROM jobs_fts CROSS JOIN jobs j{hint} ON j.seq = jobs_fts.rowid \
             WHERE jobs_fts MATCH {m} AND {} AND j.is_sticky = 0 \
             ORDER BY jobs_fts.rowid DESC LIMIT {lim} OFFSET {off}",
            w.text
        );
        let rest: Vec<i64> = dispatch!(db.reader(), p => {
            bind_all!(sqlx::query_scalar(sqlx::AssertSqlSafe(sql)), &w.args).fetch_all(p).await?
        });
        seqs.extend(rest);
    }
    let more = seqs.len() as i64 > limit;
    seqs.truncate(limit as usize);
    if seqs.is_empty() {
        return Ok((Vec::new(), more));
    }
    let marks: Vec<String> = (1..=seqs.len()).map(|i| format!("${i}")).collect();
    let sql = format!(
        "SELECT {LIST_COLUMNS} FROM jobs WHERE seq IN ({}) ORDER BY is_sticky DESC, seq DESC",
        marks.join(", ")
    );
    let rows: Vec<JobListItem> = dispatch!(db.reader(), p => {
        let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql));
        for s in &seqs {
            q = q.bind(*s);
        }
        q.fetch_all(p).await?
    });
    Ok((rows, more))
}

/// The earliest `expires_at` after `now` among the organization's active jobs: the next
/// moment its lists change without a write.
pub async fn next_expiry(db: &Db, org_id: i64, now: Ts) -> DbResult<Option<Ts>> {
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

/// Counts the matches of a filtered list or a search among at most [`COUNT_LIMIT`]
/// candidates; exact when there are no more candidates than that.
async fn bounded_count(db: &Db, org_id: i64, f: &ListFilter, now: Ts) -> DbResult<Total> {
    let backend = db.backend();
    let mut w = where_clause(org_id, f, now);
    let conds = filter_conds(&mut w, f);
    let sql = if f.search_words.is_empty() {
        // Candidates: the live jobs of the statuses, from the list index alone.
        let lim = w.arg(Arg::I64(COUNT_LIMIT));
        let test = conds.unwrap_or_else(|| "TRUE".into());
        format!(
            "SELECT COUNT(*), COALESCE(SUM(CASE WHEN {test} THEN 1 ELSE 0 END), 0) FROM \
             (SELECT job_type, category_id, is_remote, location FROM jobs WHERE {} LIMIT {lim}) c",
            w.text
        )
    } else {
        let mut test = w.text.clone();
        if let Some(c) = &conds {
            test = format!("{test} AND {c}");
        }
        let m = w.arg(Arg::Text(search_query(backend, &f.search_words)));
        let lim = w.arg(Arg::I64(COUNT_LIMIT));
        match backend {
            // Candidates: the newest word matches of the full-text index.
            Backend::Sqlite => {
                let (hint, cols) = if conds.is_none() {
                    (
                        " INDEXED BY jobs_search_keys",
                        "j.org_id, j.status, j.expires_at",
                    )
                } else {
                    (
                        "",
                        "j.org_id, j.status, j.expires_at, j.job_type, j.category_id, j.is_remote, j.location",
                    )
                };
                format!(
                    "SELECT COUNT(*), COALESCE(SUM(CASE WHEN {test} THEN 1 ELSE 0 END), 0) FROM \
                     (SELECT {cols} FROM jobs_fts CROSS JOIN jobs j{hint} ON j.seq = jobs_fts.rowid \
                      WHERE jobs_fts MATCH {m} ORDER BY jobs_fts.rowid DESC LIMIT {lim}) c"
                )
            }
            // Candidates: the organization's word matches, from the GIN index.
            Backend::Postgres => format!(
                "SELECT COUNT(*), COALESCE(SUM(CASE WHEN {test} THEN 1 ELSE 0 END), 0) FROM \
                 (SELECT org_id, status, expires_at, job_type, category_id, is_remote, location FROM jobs \
                  WHERE org_id = $1 AND search @@ to_tsquery('simple', {m}) LIMIT {lim}) c"
            ),
        }
    };
    let (candidates, matches): (i64, i64) = dispatch!(db.reader(), p => {
        bind_all!(sqlx::query_as(sqlx::AssertSqlSafe(sql)), &w.args).fetch_one(p).await?
    });
    Ok(Total {
        items: matches,
        exact: candidates < COUNT_LIMIT,
    })
}

/// The number of jobs with these statuses, from the per-organization counters, less the
/// active jobs already past `expires_at` that the scheduler has not moved yet (one
/// statement).
async fn counted_total(
    db: &Db,
    org_id: i64,
    statuses: Option<&[JobStatus]>,
    now: Ts,
) -> DbResult<i64> {
    let mut s = Sql {
        text: String::new(),
        args: Vec::new(),
    };
    let org = s.arg(Arg::I64(org_id));
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
    org_id: i64,
    f: &ListFilter,
    ids: &[Uuid],
    now: Ts,
) -> DbResult<Vec<Uuid>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let backend = db.backend();
    let mut w = where_clause(org_id, f, now);
    if let Some(c) = filter_conds(&mut w, f) {
        w.text = format!("{} AND {c}", w.text);
    }
    if !f.search_words.is_empty() {
        let m = w.arg(Arg::Text(search_query(backend, &f.search_words)));
        w.text = match backend {
            // Both full-text indexes: every job, and the sticky ones.
            Backend::Sqlite => format!(
                "{} AND seq IN (SELECT rowid FROM jobs_fts WHERE jobs_fts MATCH {m} \
                 UNION SELECT rowid FROM jobs_fts_sticky WHERE jobs_fts_sticky MATCH {m})",
                w.text
            ),
            Backend::Postgres => {
                format!("{} AND search @@ to_tsquery('simple', {m})", w.text)
            }
        };
    }
    let marks = w.list(ids.iter().map(|i| Arg::Uuid(*i)));
    let sql = format!("SELECT id FROM jobs WHERE {} AND id IN ({marks})", w.text);
    Ok(dispatch!(db.reader(), p => {
        bind_all!(sqlx::query_scalar(sqlx::AssertSqlSafe(sql)), &w.args).fetch_all(p).await?
    }))
}
