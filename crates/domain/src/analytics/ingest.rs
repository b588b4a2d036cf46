//! Ingestion: a batch of events checked as a whole (every bad field of every event at
//! once; one bad event refuses the batch), each event reduced to its day, its job and
//! its visitor's hash, then stored in one transaction.

use std::collections::HashSet;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{
    model::{Client, EventIn, EventType, EventsIn, Hit, check_recent},
    store,
};
use crate::{
    Input, JobId, OrgId, Result, Ts,
    db::{Db, Owned, owned_ids},
};

/// A valid event, with its position in the batch.
struct Valid {
    index: usize,
    event: EventIn,
}

/// Records a batch of 1 to 1,000 events (see [`EventsIn`]) sent by `client`; answers how
/// many were recorded. All or nothing: any invalid event, or one naming a job that is not
/// the organization's, refuses the batch with every problem found.
pub async fn ingest(db: &Db, org_id: OrgId, mut body: Input, client: &Client) -> Result<usize> {
    let items = EventsIn::read(&mut body)
        .map(|b| b.events)
        .unwrap_or_default();
    let now = db.now();
    let mut valid: Vec<Valid> = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let field = format!("events[{index}]");
        let Value::Object(map) = item else {
            body.error(&field, "invalid_type", "Must be an object.");
            continue;
        };
        let mut e = Input::nested_at(&format!("{field}."), map);
        let mut event = EventIn::read(&mut e);
        if let Some(t) = event.as_ref().and_then(|ev| ev.occurred_at)
            && let Err((code, message)) = check_recent(t, now)
        {
            e.error("occurred_at", code, message);
            event = None;
        }
        if let Some(ev) = &event
            && matches!(ev.kind, EventType::JobView | EventType::ApplyClick)
            && ev.job_id.is_none()
            && !e.has_errors()
        {
            e.error(
                "job_id",
                "required",
                "Required for job_view and apply_click events.",
            );
        }
        // Unknown fields (added by `absorb`) refuse the batch but do not spare the event
        // the check of its job.
        let ok = !e.has_errors();
        body.absorb(e);
        if let (true, Some(event)) = (ok, event) {
            valid.push(Valid { index, event });
        }
    }
    check_jobs(db, org_id, &valid, &mut body).await?;
    body.finish()?;
    let hits = hits(db, org_id, valid, client, now).await?;
    store::ingest(db, org_id, &hits).await?;
    Ok(hits.len())
}

/// Adds an `events[i].job_id` error for every event naming a job that is not one of the
/// organization's (looked up in one query).
async fn check_jobs(db: &Db, org_id: OrgId, valid: &[Valid], body: &mut Input) -> Result<()> {
    let known = known_jobs(db, org_id, valid.iter().filter_map(|v| v.event.job_id)).await?;
    for v in valid {
        if let Some(j) = v.event.job_id
            && !known.contains(&j)
        {
            body.error(
                &format!("events[{}].job_id", v.index),
                "not_found",
                "No job with this id exists.",
            );
        }
    }
    Ok(())
}

/// The hits of the valid events: each event's UTC day, job and visitor hash. A caller's
/// `visitor_id` is hashed with the organization; without one, see [`Salts::visitor`].
async fn hits(
    db: &Db,
    org_id: OrgId,
    valid: Vec<Valid>,
    client: &Client,
    now: Ts,
) -> Result<Vec<Hit>> {
    let mut salts = Salts::default();
    let mut out = Vec::with_capacity(valid.len());
    for Valid { event, .. } in valid {
        let day = event.occurred_at.unwrap_or(now).0.date_naive();
        let visitor = match &event.visitor_id {
            Some(v) => hash16(&[b"id", &org_id.0.to_be_bytes(), v.as_bytes()]),
            None => salts.visitor(db, org_id, day, client).await?,
        };
        out.push(Hit {
            kind: event.kind,
            job_id: event.job_id,
            day,
            visitor,
        });
    }
    Ok(out)
}

/// The salts of the days met so far (each read or made once per batch).
#[derive(Default)]
struct Salts(Vec<(chrono::NaiveDate, Vec<u8>)>);

impl Salts {
    /// The visitor hash of `client` on `day`: its address and user agent hashed with the
    /// day's salt and the organization, so no address is kept and a day's hashes cannot
    /// be linked to another day's.
    async fn visitor(
        &mut self,
        db: &Db,
        org_id: OrgId,
        day: chrono::NaiveDate,
        client: &Client,
    ) -> Result<[u8; 16]> {
        let salt = match self.0.iter().find(|(d, _)| *d == day) {
            Some((_, s)) => s.clone(),
            None => {
                let s = store::daily_salt(db, day).await?;
                self.0.push((day, s.clone()));
                s
            }
        };
        let ip = client.address.map(|c| c.to_string()).unwrap_or_default();
        Ok(hash16(&[
            b"addr",
            &salt,
            &org_id.0.to_be_bytes(),
            ip.as_bytes(),
            b"\0",
            client.user_agent.as_bytes(),
        ]))
    }
}

/// A visit the board saw itself (a page, a job page, an apply click), recorded later in a
/// batch with others (see [`record_views`]).
#[derive(Debug, Clone)]
pub struct View {
    pub org_id: OrgId,
    pub kind: EventType,
    pub job_id: Option<JobId>,
    pub at: Ts,
    pub client: Client,
}

/// Records views the board saw, grouped by organization, each group in one transaction,
/// with the visitor hash of the ingestion endpoint. Views of a job deleted meanwhile are
/// dropped. Answers how many were recorded.
pub async fn record_views(db: &Db, mut views: Vec<View>) -> Result<usize> {
    views.sort_by_key(|v| v.org_id);
    let mut recorded = 0;
    for group in views.chunk_by(|a, b| a.org_id == b.org_id) {
        let org_id = group[0].org_id;
        let known = known_jobs(db, org_id, group.iter().filter_map(|v| v.job_id)).await?;
        let mut salts = Salts::default();
        let mut hits = Vec::with_capacity(group.len());
        for v in group {
            if v.job_id.is_some_and(|j| !known.contains(&j)) {
                continue;
            }
            let day = v.at.0.date_naive();
            hits.push(Hit {
                kind: v.kind,
                job_id: v.job_id,
                day,
                visitor: salts.visitor(db, org_id, day, &v.client).await?,
            });
        }
        store::ingest(db, org_id, &hits).await?;
        recorded += hits.len();
    }
    Ok(recorded)
}

/// Which of `ids` are jobs of the organization (one query for the distinct ids).
async fn known_jobs(
    db: &Db,
    org_id: OrgId,
    ids: impl Iterator<Item = JobId>,
) -> Result<HashSet<JobId>> {
    let ids: Vec<JobId> = ids.collect::<HashSet<_>>().into_iter().collect();
    Ok(owned_ids(db, Owned::Jobs, org_id, &ids)
        .await?
        .into_iter()
        .collect())
}

/// The first 16 bytes of the SHA-256 of `parts`, each prefixed with its length (so no
/// two lists of parts hash alike).
fn hash16(parts: &[&[u8]]) -> [u8; 16] {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    let d = h.finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&d[..16]);
    out
}
