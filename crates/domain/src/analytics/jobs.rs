//! Per-job figures: visitors, views, apply clicks and applications of the jobs asked for
//! over a period.

use std::collections::HashMap;

use chrono::NaiveDate;

use super::{
    hll::Sketch,
    model::{JobReport, JobsQuery, PerJob, Period},
    store,
    visitors::DailyVisitors,
};
use crate::{
    JobId, OrgId, QueryInput, Result,
    db::{Db, Owned, owned_ids},
};

/// The figures of the jobs `q` asks for (`jobIds`, each a job of the organization, and
/// `period`, default `30d`) over the period ending `today`. Every problem with the query,
/// unknown jobs included, is reported at once.
///
/// Distinct visitors are counted while the jobs' (day, visitor) rows add up to at most
/// the exact bound, and estimated per job from the daily sketches beyond (flagged by
/// `visitors_exact`).
pub async fn jobs(
    db: &Db,
    org_id: OrgId,
    mut q: QueryInput,
    today: NaiveDate,
) -> Result<JobReport> {
    let raw = JobsQuery::read(&mut q);
    let mut ids: Vec<JobId> = Vec::with_capacity(raw.job_ids.len());
    for id in raw.job_ids {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let known = owned_ids(db, Owned::Jobs, org_id, &ids).await?;
    if let Some(missing) = ids.iter().find(|id| !known.contains(id)) {
        q.error(
            "jobIds",
            "not_found",
            format!("{missing} is not a job of this organization."),
        );
    }
    q.finish()?;
    let period = raw.period.unwrap_or(Period::Days30);
    let w = period.window(today);
    let counters = store::job_counters(db, org_id, &ids, &w).await?;
    let mut all = DailyVisitors::default();
    for c in counters.values() {
        all.add(c.visitors);
    }
    let visitors_exact = !all.estimated();
    let visitors: HashMap<JobId, i64> = if visitors_exact {
        if all.rows > 0 {
            store::exact_visitors(db, org_id, &ids, &w).await?
        } else {
            HashMap::new()
        }
    } else {
        let busy: Vec<JobId> = counters
            .iter()
            .filter(|(_, c)| c.visitors.rows > 0)
            .map(|(j, _)| *j)
            .collect();
        store::merged_sketches(db, org_id, &busy, &w, Sketch::new)
            .await?
            .into_iter()
            .map(|(job, sketch)| {
                let daily = counters.get(&job).map(|c| c.visitors).unwrap_or_default();
                (job, daily.clamp(&sketch))
            })
            .collect()
    };
    let applications = store::applications_by_job(db, org_id, &ids, &w).await?;
    let per = |figure: &dyn Fn(&JobId) -> Option<i64>| {
        PerJob(
            ids.iter()
                .map(|id| (*id, figure(id).unwrap_or(0)))
                .collect(),
        )
    };
    Ok(JobReport {
        period,
        total_jobs: ids.len(),
        visitors: per(&|id| visitors.get(id).copied()),
        views: per(&|id| counters.get(id).map(|c| c.views)),
        apply_clicks: per(&|id| counters.get(id).map(|c| c.apply_clicks)),
        applications: per(&|id| applications.get(id).copied()),
        visitors_exact,
    })
}
