//! Instant indexing: telling search engines the moment a job is published, changed or
//! taken down (docs/distribution.md).
//!
//! A job's write leaves a *notice* for each search engine account its organization has
//! (the Google Indexing API, IndexNow), in the write's transaction: `updated` when the job
//! goes live or a live job's public fields change, `deleted` when a live job leaves the
//! board (expired, deleted, moved back to pending or draft); the jobs say which
//! (`jobs::notices`), this module writes and delivers what they say. One notice waits per URL and
//! engine: a further change before it is delivered changes what it says (the latest
//! wins), so each change is told once and no change is lost. The indexing worker
//! (`jobboard_delivery::indexing`) delivers them, retried on a schedule; Google's notices
//! within the organization's daily quota, featured and newest jobs first, the rest the
//! next day ([`store::claim`]).

pub mod store;

use serde::Serialize;

use crate::{
    Error, JobId, OrgId, Result, Ts,
    db::{Db, DbResult, Tx},
    dispatch, dispatch_tx, text_enum,
};

text_enum!(
    /// The search engines told.
    Engine { Google = "google", IndexNow = "indexnow" }
);

text_enum!(
    /// What a notice tells: the page is new or changed (`updated`, Google's `URL_UPDATED`),
    /// or gone (`deleted`, Google's `URL_DELETED`).
    Action { Updated = "updated", Deleted = "deleted" }
);

/// What a notice names: a job's page, and where the job stands in the priority of
/// Google's quota (featured, then newest).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Page<'a> {
    pub job_id: JobId,
    /// The page's path on the board.
    pub path: &'a str,
    pub featured: bool,
    pub created_at: Ts,
}

/// Leaves the notices that `page` is `action`ed, in the write's transaction `tx`: one per
/// engine the organization has an account at while its indexing is on, merged into a
/// notice of the same page still waiting.
pub(crate) async fn note(
    tx: &mut Tx,
    org_id: OrgId,
    page: Page<'_>,
    action: Action,
) -> DbResult<()> {
    note_all(tx, &[(org_id, page, action)]).await
}

/// The insert of search engines' notices (with [`NOTICES_TAIL`]), one statement: nothing
/// is written for an organization without an account or with its indexing off. Followed
/// by the time the notices are due and made (`now, FALSE, now`), then `FROM (pages) v
/// CROSS JOIN` and the tail, where the pages are a `VALUES` list, whose columns both
/// engines name `column1`, `column2`, ...: the Google notice's id, the IndexNow one's,
/// the organization, the job, the path, the action, featured, the job's creation time.
pub(crate) const NOTICES_HEAD: &str = "INSERT INTO index_notices (id, org_id, engine, job_id, path, \
     action, featured, job_created_at, status, attempts, next_attempt_at, dirty, created_at) \
     SELECT CASE e.engine WHEN 'google' THEN v.column1 ELSE v.column2 END, o.id, e.engine, \
     v.column4, v.column5, v.column6, v.column7, v.column8, 'pending', 0, ";

/// The end of [`NOTICES_HEAD`]'s statement.
pub(crate) const NOTICES_TAIL: &str = " organizations o \
     JOIN (SELECT 'google' AS engine UNION ALL SELECT 'indexnow') e \
       ON (e.engine = 'google' AND o.google_indexing_key IS NOT NULL) \
       OR (e.engine = 'indexnow' AND o.indexnow_key IS NOT NULL) \
     WHERE o.id = v.column3 AND o.indexing \
     ON CONFLICT (org_id, engine, path) WHERE status = 'pending' DO UPDATE SET \
       action = excluded.action, featured = excluded.featured, \
       job_created_at = excluded.job_created_at, dirty = TRUE";

/// [`note`] for several pages (of one organization or several) with one statement: a
/// batch of writes in one transaction. No two may name the same page of one organization.
pub(crate) async fn note_all(tx: &mut Tx, notes: &[(OrgId, Page<'_>, Action)]) -> DbResult<()> {
    if notes.is_empty() {
        return Ok(());
    }
    let now = tx.now();
    let written = dispatch_tx!(tx, t => {
        let mut qb = sqlx::QueryBuilder::new(NOTICES_HEAD);
        qb.push_bind(now).push(", FALSE, ").push_bind(now).push(" FROM (");
        qb.push_values(notes, |mut row, (org_id, page, action)| {
            row.push_bind(uuid::Uuid::now_v7())
                .push_bind(uuid::Uuid::now_v7())
                .push_bind(*org_id)
                .push_bind(page.job_id)
                .push_bind(page.path)
                .push_bind(action.as_str())
                .push_bind(page.featured)
                .push_bind(page.created_at);
        });
        qb.push(") v CROSS JOIN").push(NOTICES_TAIL);
        // One page's statement is always the same text: kept prepared.
        qb.build()
            .persistent(notes.len() == 1)
            .execute(&mut **t)
            .await?
            .rows_affected()
    });
    if written > 0 {
        tx.notify_after_commit(store::CHANNEL);
        store::WAKE.notify_waiters();
    }
    Ok(())
}

/// An organization's instant indexing settings, as the command line shows them (the
/// Google key itself is never shown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct Settings {
    /// Notices are written (default on).
    pub indexing: bool,
    pub indexnow_key: Option<String>,
    /// A service account key is set.
    pub google: bool,
    /// Notices the Google Indexing API takes from this organization a day.
    pub google_indexing_quota: i64,
}

/// The settings of organization `org_id`.
pub async fn settings(db: &Db, org_id: OrgId) -> Result<Settings> {
    let row: Option<Settings> = dispatch!(db.reader(), p => {
        sqlx::query_as(
            "SELECT indexing, indexnow_key, google_indexing_key IS NOT NULL AS google, \
             google_indexing_quota FROM organizations WHERE id = $1",
        )
        .bind(org_id)
        .fetch_optional(p)
        .await
        .map_err(crate::db::StoreError::from)?
    });
    row.ok_or(Error::NotFound("organization"))
}

/// True for an IndexNow key as the protocol defines one: 8 to 128 letters, digits and
/// dashes.
pub fn is_indexnow_key(k: &str) -> bool {
    (8..=128).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// What the command line changes.
#[derive(Debug, Clone, Default)]
pub struct Change {
    pub indexing: Option<bool>,
    /// `Some(None)` removes the key.
    pub indexnow_key: Option<Option<String>>,
    /// A service account's JSON key, checked by the caller; `Some(None)` removes it.
    pub google_key: Option<Option<String>>,
    pub google_quota: Option<i64>,
}

/// Applies `c` to organization `org_id`'s settings.
pub async fn update(db: &Db, org_id: OrgId, c: Change) -> Result<Settings> {
    if let Some(Some(k)) = &c.indexnow_key
        && !is_indexnow_key(k)
    {
        return Err(Error::field(
            "indexnow_key",
            "invalid_format",
            "An IndexNow key is 8 to 128 letters, digits and dashes.",
        ));
    }
    if let Some(q) = c.google_quota
        && !(1..=1_000_000).contains(&q)
    {
        return Err(Error::field(
            "google_indexing_quota",
            "out_of_range",
            "Must be between 1 and 1000000.",
        ));
    }
    let mut tx = db.begin().await?;
    macro_rules! write {
        ($column:literal, $value:expr) => {{
            let sql = concat!("UPDATE organizations SET ", $column, " = $2 WHERE id = $1");
            dispatch_tx!(&mut tx, t => {
                sqlx::query(sql)
                    .bind(org_id)
                    .bind($value)
                    .execute(&mut **t)
                    .await
                    .map_err(crate::db::StoreError::from)?;
            });
        }};
    }
    if let Some(v) = c.indexing {
        write!("indexing", v);
    }
    if let Some(v) = c.indexnow_key {
        write!("indexnow_key", v);
    }
    if let Some(v) = c.google_key {
        write!("google_indexing_key", v);
    }
    if let Some(v) = c.google_quota {
        write!("google_indexing_quota", v);
    }
    tx.commit().await?;
    settings(db, org_id).await
}

/// The IndexNow key of the organization whose board serves `/<file>`, when `file` is
/// that key's `.txt` (the file that proves the key is the site's).
pub async fn key_file(db: &Db, org_id: OrgId, file: &str) -> Result<Option<String>> {
    let Some(key) = file.strip_suffix(".txt").filter(|k| is_indexnow_key(k)) else {
        return Ok(None);
    };
    let found: Option<String> = dispatch!(db.reader(), p => {
        sqlx::query_scalar("SELECT indexnow_key FROM organizations WHERE id = $1 AND indexnow_key = $2")
            .bind(org_id)
            .bind(key)
            .fetch_optional(p)
            .await
            .map_err(crate::db::StoreError::from)?
    });
    Ok(found)
}

/// The start of the day after `now` in the Google Indexing API's quota day (its quota
/// resets at midnight Pacific Time; counted here at UTC-8 all year, so in summer the
/// day turns an hour later than Google's and never before it).
pub fn next_quota_day(now: Ts) -> Ts {
    const SHIFT: i64 = 8 * 3_600_000_000;
    const DAY: i64 = 86_400_000_000;
    let local = now.micros() - SHIFT;
    Ts::from_micros((local.div_euclid(DAY) + 1) * DAY + SHIFT)
}

/// The quota day of `now` (`2026-11-27`), as the ledger keys it.
pub fn quota_day(now: Ts) -> String {
    let start = next_quota_day(now).micros() - 86_400_000_000;
    Ts::from_micros(start - 8 * 3_600_000_000)
        .0
        .format("%Y-%m-%d")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quota_day_turns_at_midnight_pacific_standard_time() {
        let at = |s: &str| Ts(chrono::DateTime::parse_from_rfc3339(s).unwrap().to_utc());
        assert_eq!(quota_day(at("2026-11-27T07:59:59Z")), "2026-11-26");
        assert_eq!(quota_day(at("2026-11-27T08:00:00Z")), "2026-11-27");
        assert_eq!(
            next_quota_day(at("2026-11-27T07:59:59Z")),
            at("2026-11-27T08:00:00Z")
        );
        assert_eq!(
            next_quota_day(at("2026-11-27T08:00:00Z")),
            at("2026-11-28T08:00:00Z")
        );
    }
}
