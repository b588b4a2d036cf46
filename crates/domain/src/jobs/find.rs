//! Searches and filtered lists on SQLite, answered by the `jobs_find` full-text index
//! alone: a job's words and, as tags, its organization, status, stickiness, job type,
//! remoteness, category and location (migration `0025_job_search_tags`). A list is one
//! full-text query, an intersection of posting lists: it is counted exactly in the index
//! and paged in the index's rowid order (newest first) without reading a row, so its cost
//! follows the page, not how common the words are or how many jobs match.

use sqlx::{Connection, SqliteConnection};

use super::model::{JobStatus, ListFilter, Total};
use crate::{OrgId, Ts, db::DbResult};

/// A location filter matching more distinct locations than this is answered by the
/// general query instead (an `OR` of that many tags would cost more than it saves).
const MAX_LOCATIONS: usize = 1_000;

/// Active jobs past `expires_at` that the scheduler has not yet moved are left out of a
/// list by rowid; with more of them than this (a scheduler long stopped), the general query
/// answers instead.
const MAX_OVERDUE: usize = 1_000;

/// The columns user words are matched in (never `tags`).
const TEXT_COLUMNS: &str = "{title company_name description_text}";

/// What the index answered: the page's rows (by `seq`, in list order) and the exact
/// number of jobs in the list.
pub(super) struct Found {
    pub seqs: Vec<i64>,
    pub total: Total,
}

/// A phrase of the full-text query language, quoted so that no input forms syntax.
fn phrase(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// `tags : ("a" OR "b" ...)`.
fn any_tag(tags: impl IntoIterator<Item = String>) -> String {
    let alts: Vec<String> = tags.into_iter().map(|t| phrase(&t)).collect();
    format!("tags : ({})", alts.join(" OR "))
}

/// The tag of a closed-set value: its letters and digits only, as the migration's
/// triggers write it.
fn tag_word(s: &str) -> String {
    s.chars().filter(|c| c.is_ascii_alphanumeric()).collect()
}

/// The words of a search as a query of the text columns: each word a word prefix.
pub(super) fn words_query(words: &[String]) -> String {
    let ps: Vec<String> = words.iter().map(|w| format!("{}*", phrase(w))).collect();
    format!("{TEXT_COLUMNS} : ({})", ps.join(" "))
}

/// `s` as a LIKE pattern matching any text that contains it (escape: backslash).
pub(super) fn like_pattern(s: &str) -> String {
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

/// A page of the list `f` and its exact total, or `None` when the index cannot answer it
/// within its bounds (see [`MAX_LOCATIONS`], [`MAX_OVERDUE`]). Every statement reads one
/// snapshot.
pub(super) async fn find(
    conn: &mut SqliteConnection,
    org_id: OrgId,
    f: &ListFilter,
    limit: i64,
    offset: i64,
    now: Ts,
) -> DbResult<Option<Found>> {
    let empty = || {
        Some(Found {
            seqs: Vec::new(),
            total: Total { items: 0 },
        })
    };
    let statuses: Vec<&str> = match &f.statuses {
        Some(l) => l.iter().map(|s| s.as_str()).collect(),
        None => JobStatus::ALL.to_vec(),
    };
    if statuses.is_empty() {
        return Ok(empty());
    }
    let mut tx = conn.begin().await?;
    let mut conds = Vec::new();
    if !f.search_words.is_empty() {
        conds.push(words_query(&f.search_words));
    }
    if !f.job_types.is_empty() {
        conds.push(any_tag(
            f.job_types
                .iter()
                .map(|t| format!("0t{}", tag_word(t.as_str()))),
        ));
    }
    if let Some(r) = f.is_remote {
        conds.push(any_tag([format!("0r{}", u8::from(r))]));
    }
    if !f.categories.is_empty() {
        conds.push(any_tag(
            f.categories
                .iter()
                .map(|c| format!("0c{}", hex::encode_upper(c.0.as_bytes()))),
        ));
    }
    if !f.locations.is_empty() {
        let alts: Vec<String> = (0..f.locations.len())
            .map(|i| format!("lower(location) LIKE ${} ESCAPE '\\'", i + 2))
            .collect();
        let sql = format!(
            "SELECT id FROM job_locations WHERE org_id = $1 AND ({}) LIMIT {}",
            alts.join(" OR "),
            MAX_LOCATIONS + 1
        );
        let mut q = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(org_id);
        for l in &f.locations {
            q = q.bind(like_pattern(l));
        }
        let ids: Vec<i64> = q.fetch_all(&mut *tx).await?;
        if ids.is_empty() {
            return Ok(empty());
        }
        if ids.len() > MAX_LOCATIONS {
            return Ok(None);
        }
        conds.push(any_tag(ids.iter().map(|i| format!("0l{i}"))));
    }
    // Active jobs past their expiry are no longer listed, even before the scheduler moves
    // them: they are left out by rowid.
    let overdue: Vec<i64> = if statuses.contains(&"active") {
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT seq FROM jobs INDEXED BY jobs_overdue WHERE org_id = $1 AND status = 'active' \
             AND expires_at IS NOT NULL AND expires_at <= $2 LIMIT {}",
            MAX_OVERDUE + 1
        )))
        .bind(org_id)
        .bind(now)
        .fetch_all(&mut *tx)
        .await?
    } else {
        Vec::new()
    };
    if overdue.len() > MAX_OVERDUE {
        return Ok(None);
    }
    let (exclude, overdue_json) = if overdue.is_empty() {
        ("", String::new())
    } else {
        (
            " AND rowid NOT IN (SELECT value FROM json_each($2))",
            serde_json::to_string(&overdue).unwrap_or_default(),
        )
    };

    // Sticky jobs first, then the others; each part newest first (rowid order).
    let mut seqs = Vec::new();
    let mut items = 0i64;
    let mut skip = offset;
    for sticky in [1, 0] {
        let mut parts = vec![any_tag(
            statuses
                .iter()
                .map(|s| format!("0o{org_id}s{}k{sticky}", tag_word(s))),
        )];
        parts.extend(conds.iter().cloned());
        let expr = parts.join(" AND ");
        let count_sql = format!("SELECT count(*) FROM jobs_find WHERE jobs_find MATCH $1{exclude}");
        let mut q = sqlx::query_scalar(sqlx::AssertSqlSafe(count_sql)).bind(&expr);
        if !overdue.is_empty() {
            q = q.bind(&overdue_json);
        }
        let n: i64 = q.fetch_one(&mut *tx).await?;
        items += n;
        let want = limit - seqs.len() as i64;
        if want > 0 && skip < n {
            let page_sql = format!(
                "SELECT rowid FROM jobs_find WHERE jobs_find MATCH $1{exclude} \
                 ORDER BY rowid DESC LIMIT {want} OFFSET {skip}"
            );
            let mut q = sqlx::query_scalar(sqlx::AssertSqlSafe(page_sql)).bind(&expr);
            if !overdue.is_empty() {
                q = q.bind(&overdue_json);
            }
            let part: Vec<i64> = q.fetch_all(&mut *tx).await?;
            seqs.extend(part);
        }
        skip = (skip - n).max(0);
    }
    tx.commit().await?;
    Ok(Some(Found {
        seqs,
        total: Total { items },
    }))
}
