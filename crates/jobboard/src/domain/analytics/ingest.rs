//! Ingestion: a batch of events checked as a whole (every bad field of every event at
//! once; one bad event refuses the batch), each event reduced to its day, its job and
//! its visitor's hash, then stored in one transaction.

use std::collections::HashSet;

use serde_json::Value;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{
    model::{Client, EventIn, EventType, EventsIn, Hit},
    store,
};
use crate::{
    db::{Db, Owned, owned_ids},
    domain::{Input, Result, Ts},
};

/// A valid event, with its position in the batch.
struct Valid {
    index: usize,
    event: EventIn,
}

/// Records a batch of 1 to 1,000 events (see [`EventsIn`]) sent by `client`; answers how
/// many were recorded. All or nothing: any invalid event, or one naming a job that is not
/// the organization's, refuses the batch with every problem found.
pub async fn ingest(db: &Db, org_id: i64, mut body: Input, client: &Client) -> Result<usize> {
    let items = EventsIn::read(&mut body)
        .map(|b| b.events)
        .unwrap_or_default();
    let now = Ts::now();
    let mut valid: Vec<Valid> = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let field = format!("events[{index}]");
        let Value::Object(map) = item else {
            body.error(&field, "invalid_type", "Must be an object.");
            continue;
        };
        let mut e = Input::nested_at(&format!("{field}."), map);
        let event = EventIn::read(&mut e);
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
async fn check_jobs(db: &Db, org_id: i64, valid: &[Valid], body: &mut Input) -> Result<()> {
    let ids: Vec<Uuid> = valid
        .iter()
        .filter_map(|v| v.event.job_id)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let known: HashSet<Uuid> = owned_ids(db, Owned::Jobs, org_id, &ids)
        .await?
        .into_iter()
        .collect();
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
/// `visitor_id` is hashed with the organization; without one, the client's address and
/// user agent are hashed with the day's salt, so no address is kept and a day's hashes
/// cannot be linked to another day's.
async fn hits(
    db: &Db,
    org_id: i64,
    valid: Vec<Valid>,
    client: &Client,
    now: Ts,
) -> Result<Vec<Hit>> {
    let ip = client.address.map(|c| c.to_string()).unwrap_or_default();
    let mut out = Vec::with_capacity(valid.len());
    let mut salts: Vec<(chrono::NaiveDate, Vec<u8>)> = Vec::new();
    for Valid { event, .. } in valid {
        let day = event.occurred_at.unwrap_or(now).0.date_naive();
        let visitor = match &event.visitor_id {
            Some(v) => hash16(&[b"id", &org_id.to_be_bytes(), v.as_bytes()]),
            None => {
                let salt = match salts.iter().find(|(d, _)| *d == day) {
                    Some((_, s)) => s.clone(),
                    None => {
                        let s = store::daily_salt(db, day).await?;
                        salts.push((day, s.clone()));
                        s
                    }
                };
                hash16(&[
                    b"addr",
                    &salt,
                    &org_id.to_be_bytes(),
                    ip.as_bytes(),
                    b"\0",
                    client.user_agent.as_bytes(),
                ])
            }
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
