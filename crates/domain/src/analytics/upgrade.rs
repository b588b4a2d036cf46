//! The sketch upgrade: daily rows written before sketches existed (schema version 7) get
//! theirs built from their visitor rows, after the migrations, while the service runs
//! (reads are correct meanwhile, only slower). Resumed where an interrupted run stopped.

use std::collections::{BTreeMap, HashSet};

use super::{
    hll::Sketch,
    store::{self, Built, DailyKey},
};
use crate::{JobId, OrgId, Result, db::Db};

/// The maintenance task migration 7 records.
const TASK: &str = "analytics_sketches";

/// Builds the sketches left to build by migration 7 (see [`rebuild_sketches`]), if any,
/// and records that it is done. `serve` runs it in the background, `migrate` to the end.
pub async fn finish_upgrade(db: &Db) -> Result<()> {
    if !store::task_pending(db, TASK).await? {
        return Ok(());
    }
    let built = rebuild_sketches(db).await?;
    tracing::info!(built, "analytics sketches of earlier days built");
    store::task_done(db, TASK).await?;
    Ok(())
}

/// Builds the missing sketches of daily rows from their visitor rows, in batches of rows
/// in key order; returns how many were built. A row that gains visitors meanwhile is left
/// without one (reads then count its visitor rows), so no sketch misses a visitor.
pub async fn rebuild_sketches(db: &Db) -> Result<u64> {
    const BATCH: i64 = 1000;
    /// Visitor rows held in memory at once (at least one daily row's).
    const BATCH_VISITORS: i64 = 100_000;
    let mut after: Option<DailyKey> = None;
    let mut built = 0u64;
    loop {
        let rows = store::rows_without_sketch(db, after.as_ref(), BATCH).await?;
        let mut held = 0;
        let keys: Vec<DailyKey> = rows
            .into_iter()
            .take_while(|(_, visitors)| {
                let first = held == 0;
                held += visitors;
                first || held <= BATCH_VISITORS
            })
            .map(|(key, _)| key)
            .collect();
        let Some(last) = keys.last().cloned() else {
            return Ok(built);
        };
        // The visitor rows of each (organization, job) of the batch over its days.
        let mut spans: BTreeMap<(OrgId, JobId), (String, String)> = BTreeMap::new();
        for (org, job, day) in &keys {
            let span = spans
                .entry((*org, *job))
                .or_insert_with(|| (day.clone(), day.clone()));
            span.1 = day.clone();
        }
        let wanted: HashSet<&DailyKey> = keys.iter().collect();
        let mut sketches: BTreeMap<DailyKey, (Sketch, i64)> = BTreeMap::new();
        for ((org, job), (from, to)) in &spans {
            for (day, v) in store::visitors_between(db, *org, *job, from, to).await? {
                let key = (*org, *job, day);
                if !wanted.contains(&key) {
                    continue;
                }
                let entry = sketches.entry(key).or_default();
                entry.1 += 1;
                if let Ok(v) = <[u8; 16]>::try_from(v.as_slice()) {
                    entry.0.insert(&v);
                }
            }
        }
        let mut by_org: BTreeMap<OrgId, Vec<Built>> = BTreeMap::new();
        for ((org, job, day), (sketch, n)) in &sketches {
            by_org
                .entry(*org)
                .or_default()
                .push(((*job, day.clone()), sketch.to_bytes(), *n));
        }
        store::write_built(db, &by_org).await?;
        built += sketches.len() as u64;
        after = Some(last);
    }
}
