//! Storing a batch of events: the counters, the visitor rows and the sketches of the
//! daily rows, in one transaction; and the daily salt of anonymous visitor hashes.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Mutex,
};

use rand::RngCore;

use super::SITE;
use super::{Built, Key, day_text, write_sketches};
use crate::{
    JobId, OrgId,
    analytics::{
        hll::Sketch,
        model::{EventType, Hit},
    },
    db::{Db, DbResult},
    dispatch, dispatch_tx,
};

#[derive(Default, Clone, Copy)]
struct Counts {
    page_views: i64,
    job_views: i64,
    apply_clicks: i64,
    /// Visitors new to the row in this batch.
    visitors: i64,
}

/// Adds `hits` to the roll-ups in one transaction.
///
/// Visitor rows go first; the ones new to their (job, day) raise that daily row's
/// `visitors` and are added to its sketch (read back from the counter upsert, which on
/// PostgreSQL also locks the row until commit, so concurrent batches cannot lose each
/// other's registers). Rows are written in key order, so concurrent batches lock them in
/// the same order.
pub async fn ingest(db: &Db, org_id: OrgId, hits: &[Hit]) -> DbResult<()> {
    let mut counts: BTreeMap<Key, Counts> = BTreeMap::new();
    let mut visitors: BTreeSet<(JobId, String, [u8; 16])> = BTreeSet::new();
    for h in hits {
        let day = day_text(h.day);
        let mut rows = vec![SITE];
        rows.extend(h.job_id);
        for job in rows {
            let c = counts.entry((job, day.clone())).or_default();
            match h.kind {
                EventType::PageView => c.page_views += 1,
                EventType::JobView => c.job_views += 1,
                EventType::ApplyClick => c.apply_clicks += 1,
            }
            visitors.insert((job, day.clone(), h.visitor));
        }
    }
    if counts.is_empty() {
        return Ok(());
    }
    let mut tx = db.begin().await?;
    dispatch_tx!(&mut tx, t => {
        let mut qb = sqlx::QueryBuilder::new("INSERT INTO analytics_visitors (org_id, job_id, day, visitor) ");
        qb.push_values(visitors.iter(), |mut row, (job, day, v)| {
            row.push_bind(org_id).push_bind(*job).push_bind(day.clone()).push_bind(v.to_vec());
        });
        qb.push(" ON CONFLICT DO NOTHING RETURNING job_id, day, visitor");
        let fresh: Vec<(JobId, String, Vec<u8>)> = qb.build_query_as().persistent(false).fetch_all(&mut **t).await?;
        let mut new_visitors: BTreeMap<Key, Vec<[u8; 16]>> = BTreeMap::new();
        for (job, day, v) in fresh {
            let Ok(v) = <[u8; 16]>::try_from(v.as_slice()) else { continue };
            let key = (job, day);
            if let Some(c) = counts.get_mut(&key) {
                c.visitors += 1;
            }
            new_visitors.entry(key).or_default().push(v);
        }
        let mut qb = sqlx::QueryBuilder::new(
            "INSERT INTO analytics_daily (org_id, job_id, day, page_views, job_views, apply_clicks, visitors) ",
        );
        qb.push_values(counts.iter(), |mut row, ((job, day), c)| {
            row.push_bind(org_id)
                .push_bind(*job)
                .push_bind(day.clone())
                .push_bind(c.page_views)
                .push_bind(c.job_views)
                .push_bind(c.apply_clicks)
                .push_bind(c.visitors);
        });
        qb.push(
            " ON CONFLICT (org_id, job_id, day) DO UPDATE SET
               page_views = analytics_daily.page_views + excluded.page_views,
               job_views = analytics_daily.job_views + excluded.job_views,
               apply_clicks = analytics_daily.apply_clicks + excluded.apply_clicks,
               visitors = analytics_daily.visitors + excluded.visitors
             RETURNING job_id, day, visitors, sketch",
        );
        let rows: Vec<(JobId, String, i64, Option<Vec<u8>>)> = qb.build_query_as().persistent(false).fetch_all(&mut **t).await?;
        let mut sketches: Vec<Built> = Vec::new();
        for (job, day, total, stored) in rows {
            let key = (job, day);
            let Some(added) = new_visitors.get(&key) else { continue };
            let mut sketch = match stored {
                Some(bytes) => match Sketch::from_bytes(&bytes) {
                    Some(s) => s,
                    // Unreadable: left alone, reads fall back to the visitor rows.
                    None => continue,
                },
                None if total > added.len() as i64 => {
                    // A row from before sketches whose sketch is not built yet: a sketch of
                    // the new visitors only would undercount; it is built from all the rows
                    // by the upgrade, and until then reads count the rows.
                    continue;
                }
                None => Sketch::new(),
            };
            for v in added {
                sketch.insert(v);
            }
            sketches.push((key, sketch.to_bytes(), total));
        }
        sketches.sort_by(|a, b| a.0.cmp(&b.0));
        if !sketches.is_empty() {
            write_sketches(&mut **t, org_id, &sketches, false).await?;
        }
    });
    tx.commit().await
}

/// The salt of `day` for hashing addresses, created on first use and shared by every
/// node; salts of days before yesterday are deleted.
pub async fn daily_salt(db: &Db, day: chrono::NaiveDate) -> DbResult<Vec<u8>> {
    // The salt of the day, per database (a process may serve several: tests do).
    static CACHE: Mutex<Option<(u64, chrono::NaiveDate, Vec<u8>)>> = Mutex::new(None);
    if let Some((id, d, s)) = CACHE.lock().unwrap_or_else(|e| e.into_inner()).as_ref()
        && *id == db.id()
        && *d == day
    {
        return Ok(s.clone());
    }
    let mut fresh = vec![0u8; 32];
    rand::rng().fill_bytes(&mut fresh);
    let yesterday = day.pred_opt().map(day_text).unwrap_or_default();
    let salt: Vec<u8> = dispatch!(db.writer(), p => {
        sqlx::query("INSERT INTO analytics_salts (day, salt) VALUES ($1, $2) ON CONFLICT (day) DO NOTHING")
            .bind(day_text(day))
            .bind(&fresh)
            .execute(p)
            .await?;
        sqlx::query("DELETE FROM analytics_salts WHERE day < $1")
            .bind(yesterday)
            .execute(p)
            .await?;
        sqlx::query_scalar("SELECT salt FROM analytics_salts WHERE day = $1").bind(day_text(day)).fetch_one(p).await?
    });
    *CACHE.lock().unwrap_or_else(|e| e.into_inner()) = Some((db.id(), day, salt.clone()));
    Ok(salt)
}
