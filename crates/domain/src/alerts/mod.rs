//! Job alerts: "email me new jobs like these". A visitor subscribes an address to the
//! board's current filters at a frequency; nothing is mailed before the confirmation link
//! is opened. A confirmed alert then gets, at its frequency, one mail listing the jobs
//! that went live since its previous mail and match its filters as `GET /api/jobs`
//! matches them; a job is never mailed twice to one alert, and no mail goes when nothing
//! is new. Every mail is queued in the transaction that moves the alert's cursor (one
//! per page of alerts), and carries the manage and one-click unsubscribe links (RFC 8058).
//!
//! Links carry the alert's id signed with an installation secret, so nothing secret is
//! stored per alert and a link cannot be guessed. Alerts exist only while the service
//! sends mail: without an SMTP server, subscribing is refused (`409`).

mod mail;
pub mod model;
pub(crate) mod store;

use std::collections::{HashMap, HashSet};

use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::json;
use uuid::Uuid;

pub use model::*;

use crate::{
    Error, Input, JobId, OrgId, Result, Ts,
    db::{Db, Outgoing, secrets},
    jobs,
    kind::{Email, Enum, Text},
    links,
    mail::store::{EnqueueError, enqueue, on_request_allowed},
    request,
};

/// Unconfirmed alerts are forgotten after this long.
pub const PENDING_LIFETIME: std::time::Duration = std::time::Duration::from_secs(7 * 86_400);
/// Alerts handled per page of a pass (bounds its memory).
const PAGE: i64 = 500;
/// Newest live jobs an alert pass matches per organization.
const MAX_ENTRIES: i64 = 2_000;
/// Distinct sets of filters whose matches a pass keeps at once.
const MAX_CACHED: usize = 1_000;
/// Jobs that went live in the last seconds are left to the next pass (see
/// `store::newest`).
const SETTLE: std::time::Duration = std::time::Duration::from_secs(5);

request! {
    /// A subscription (the board's form).
    pub struct SubscribeIn {
        pub email: required Email,
        /// Default `daily`.
        pub frequency: optional Enum<Frequency>,
        /// The board's filters as a query string (`search=rust&is_remote=true`).
        pub query: optional Text<0, 2000>,
    }
}

/// Subscribing while no mail can be sent.
fn no_mail() -> Error {
    Error::conflict(
        "This service sends no mail (no SMTP server is configured), so it keeps no job alerts.",
        json!({ "reason": "mail_not_configured" }),
    )
}

/// The key that signs alert links (read; made on first use).
async fn link_key(db: &Db) -> Result<Vec<u8>> {
    match secrets::get(db, "alert_links").await? {
        Some(k) => Ok(k),
        None => Ok(secrets::get_or_create(db, "alert_links").await?),
    }
}

fn sign(key: &[u8], id: Uuid) -> String {
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(id.as_bytes());
    let tag = mac.finalize().into_bytes();
    format!(
        "{}{}",
        id.simple(),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&tag[..16])
    )
}

/// The alert a link's token names, when its signature holds (checked in constant time).
fn verify(key: &[u8], token: &str) -> Option<Uuid> {
    let (id, tag) = (token.get(..32)?, token.get(32..)?);
    let id = Uuid::parse_str(id).ok()?;
    let tag = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(tag)
        .ok()?;
    if tag.len() != 16 {
        return None;
    }
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key).ok()?;
    mac.update(id.as_bytes());
    mac.verify_truncated_left(&tag).ok()?;
    Some(id)
}

/// The path of the page that manages and stops alert `id` (what its mails link to).
pub async fn manage_path(db: &Db, id: Uuid) -> Result<String> {
    let key = link_key(db).await?;
    Ok(format!("/alerts/unsubscribe/{}", sign(&key, id)))
}

/// An alert's filters in words ("every new job", "search: rust; remote").
pub fn described(query: &str) -> String {
    mail::describe(query)
}

/// What links and mails need of the organization.
#[derive(sqlx::FromRow)]
struct Board {
    name: String,
    domain: Option<String>,
}

async fn board(db: &Db, org_id: OrgId) -> Result<Board> {
    let org = crate::orgs::get(db, org_id).await?;
    Ok(Board {
        name: org.name,
        domain: org.domain,
    })
}

async fn queue(
    tx: &mut crate::db::Tx,
    org_id: OrgId,
    msg: &crate::mail::message::Message,
) -> Result<()> {
    match enqueue(tx, org_id, msg).await {
        Ok(_) => Ok(()),
        Err(EnqueueError::Invalid(why)) => {
            // What the outbox says is for the log; the visitor is told in words.
            tracing::warn!(%why, kind = %msg.kind, "alert mail refused by the outbox");
            Err(Error::field(
                "email",
                "invalid_format",
                "No mail can be sent to this address. Check it and try again.",
            ))
        }
        Err(EnqueueError::Db(e)) => Err(e.into()),
    }
}

/// Subscribes an address from a form body: a new pending alert (or the pending one of
/// the same address, filters and frequency) and its confirmation mail, in one
/// transaction. An address already subscribed to these filters gets nothing, and the
/// answer is the same, so nobody learns whether an address is subscribed.
pub async fn subscribe(db: &Db, org_id: OrgId, body: Input, now: Ts) -> Result<()> {
    let out = db.outgoing().ok_or_else(no_mail)?;
    let req = SubscribeIn::parse(body)?;
    let (query, _) = canonical_query(req.query.as_deref().unwrap_or(""))?;
    let frequency = req.frequency.unwrap_or(Frequency::Daily);
    let key = link_key(db).await?;
    let b = board(db, org_id).await?;
    let links = mail::Links {
        out,
        domain: b.domain.as_deref(),
    };
    let mut tx = db.begin().await?;
    // A recipient gets a bounded number of mails anyone can ask for, per day, whatever
    // the form, board or node; past it the answer is the same and nothing is sent.
    if !on_request_allowed(&mut tx, &links::email_identity(&req.email), now).await? {
        tracing::info!(
            org_id = org_id.0,
            "alert confirmation not sent: the recipient's daily cap is reached"
        );
        tx.commit().await?;
        return Ok(());
    }
    let alert = match store::same(&mut tx, org_id, &req.email, &query, frequency).await? {
        Some(a) if a.status == AlertStatus::Active => {
            tx.commit().await?;
            return Ok(());
        }
        Some(a) => a,
        None => {
            let a = Alert {
                id: Uuid::now_v7(),
                email: req.email.clone(),
                frequency,
                query,
                status: AlertStatus::Pending,
                created_at: now,
                confirmed_at: None,
                last_sent_at: None,
                last_error: None,
                last_error_at: None,
                org_id,
                cursor: 0,
                last_run_at: None,
            };
            store::insert(&mut tx, &a).await?;
            a
        }
    };
    let msg = mail::confirmation(&alert, &sign(&key, alert.id), &b.name, &links);
    queue(&mut tx, org_id, &msg).await?;
    tx.commit().await?;
    Ok(())
}

/// The alert of a link's token (any status) on the board of `org_id`, or `404` (also for
/// another organization's alert: its board is where its links work).
pub async fn by_token(db: &Db, org_id: OrgId, token: &str) -> Result<Alert> {
    let key = link_key(db).await?;
    let id = verify(&key, token).ok_or(Error::NotFound("alert"))?;
    store::by_id(db, id)
        .await?
        .filter(|a| a.org_id == org_id)
        .ok_or(Error::NotFound("alert"))
}

/// Confirms the alert of a link opened on the board of `org_id`: from now on it matches
/// the jobs that go live after this moment. Opening the link again changes nothing; on
/// another organization's board it is `404` and changes nothing.
pub async fn confirm(db: &Db, org_id: OrgId, token: &str, now: Ts) -> Result<Alert> {
    let alert = by_token(db, org_id, token).await?;
    if alert.status == AlertStatus::Pending {
        let cursor = store::newest(db, alert.org_id, now).await?;
        store::confirm(db, alert.id, cursor, now).await?;
    }
    store::by_id(db, alert.id)
        .await?
        .ok_or(Error::NotFound("alert"))
}

/// Unsubscribes the alert of a link opened on the board of `org_id` (also when it is
/// already unsubscribed).
pub async fn unsubscribe(db: &Db, org_id: OrgId, token: &str) -> Result<Alert> {
    let alert = by_token(db, org_id, token).await?;
    store::unsubscribe(db, alert.id).await?;
    store::by_id(db, alert.id)
        .await?
        .ok_or(Error::NotFound("alert"))
}

/// A page of the organization's alerts, newest first.
pub async fn list(db: &Db, org_id: OrgId, q: &AlertListQuery) -> Result<AlertPage> {
    let (rows, total) = store::list(db, org_id, q, true).await?;
    Ok(AlertPage { rows, total })
}

/// Every alert of the organization that `q` filters (for the CSV export), newest first.
pub async fn export(db: &Db, org_id: OrgId, q: &AlertListQuery) -> Result<Vec<Alert>> {
    Ok(store::list(db, org_id, q, false).await?.0)
}

/// Deletes an alert of the organization.
pub async fn delete(db: &Db, org_id: OrgId, id: Uuid) -> Result<()> {
    if store::delete(db, org_id, id).await? {
        Ok(())
    } else {
        Err(Error::NotFound("alert"))
    }
}

/// The scheduler's pass: runs the instant alerts (when jobs went live since the last
/// pass) and the daily and weekly ones (once per period, from `hour` UTC). Answers how
/// many alert mails were queued. (Unconfirmed alerts are forgotten by
/// [`crate::retention::purge_unconfirmed_alerts`].)
pub async fn run(db: &Db, now: Ts, hour: u32) -> Result<u64> {
    let Some(out) = db.outgoing() else {
        return Ok(0);
    };
    let mut sent = 0;
    for f in [Frequency::Instant, Frequency::Daily, Frequency::Weekly] {
        sent += run_frequency(db, out, f, now, hour).await?;
    }
    Ok(sent)
}

/// One pass of the alerts of `f`.
pub async fn run_frequency(
    db: &Db,
    out: &Outgoing,
    f: Frequency,
    now: Ts,
    hour: u32,
) -> Result<u64> {
    let boundary = model::boundary(f, now, hour);
    let settled = now.earlier_by(SETTLE);
    let (done_until, seq_mark) = store::run_mark(db, f).await?;
    // Only settled entries count, here as in each organization's pass: an entry left
    // for later must not be marked as handled.
    let newest_all = store::newest_overall(db, settled).await?;
    let orgs = match f {
        Frequency::Instant if newest_all <= seq_mark => return Ok(0),
        Frequency::Instant => store::orgs_with_entries_after(db, seq_mark).await?,
        _ if done_until.is_some_and(|d| d >= boundary) => return Ok(0),
        _ => store::orgs_with_alerts(db, f).await?,
    };
    let key = link_key(db).await?;
    let mut sent = 0;
    let mut failed = 0;
    // One organization's failure (its database reads, say) does not hold up the others'
    // mail; the pass is then not marked done, so the next one tries it again (alerts
    // already mailed are not mailed twice: their cursors moved).
    for org_id in orgs {
        match run_org(db, out, &key, org_id, f, boundary, now, settled).await {
            Ok(n) => sent += n,
            Err(e) => {
                failed += 1;
                tracing::error!(org_id = org_id.0, frequency = %f.as_str(), error = ?e, "alert pass failed for an organization");
            }
        }
    }
    if failed == 0 {
        store::set_run_mark(db, f, boundary, newest_all).await?;
    }
    Ok(sent)
}

#[allow(clippy::too_many_arguments)]
async fn run_org(
    db: &Db,
    out: &Outgoing,
    key: &[u8],
    org_id: OrgId,
    f: Frequency,
    boundary: Ts,
    now: Ts,
    settled: Ts,
) -> Result<u64> {
    let newest = store::newest(db, org_id, settled).await?;
    let b = board(db, org_id).await?;
    let links = mail::Links {
        out,
        domain: b.domain.as_deref(),
    };
    let mut sent = 0;
    let mut after = None;
    // The jobs each distinct set of filters matches, kept across pages (bounded).
    let mut matched: HashMap<String, HashSet<JobId>> = HashMap::new();
    let mut matched_from = i64::MAX;
    loop {
        let page = store::due(db, org_id, f, boundary, newest, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = Some(last.id);
        let oldest = page.iter().map(|a| a.cursor).min().unwrap_or(0);
        let entries: Vec<(i64, JobId)> = store::entries_after(db, org_id, oldest, MAX_ENTRIES)
            .await?
            .into_iter()
            .filter(|(seq, _)| *seq <= newest)
            .collect();
        let ids: Vec<JobId> = entries.iter().map(|(_, id)| *id).collect();
        // Matches are valid for the same entries only.
        if oldest != matched_from || matched.len() >= MAX_CACHED {
            matched.clear();
            matched_from = oldest;
        }
        let mut planned: Vec<(&Alert, Vec<JobId>)> = Vec::with_capacity(page.len());
        for alert in &page {
            if !matched.contains_key(&alert.query) {
                let set = match canonical_query(&alert.query) {
                    Ok((_, filter)) => jobs::matching(db, org_id, &filter, &ids, now)
                        .await?
                        .into_iter()
                        .collect(),
                    Err(_) => HashSet::new(),
                };
                matched.insert(alert.query.clone(), set);
            }
            let set = &matched[&alert.query];
            // Newest first.
            let mine: Vec<JobId> = entries
                .iter()
                .rev()
                .filter(|(seq, id)| *seq > alert.cursor && set.contains(id))
                .map(|(_, id)| *id)
                .collect();
            planned.push((alert, mine));
        }
        let wanted: HashSet<JobId> = planned
            .iter()
            .flat_map(|(_, mine)| mine.iter().take(mail::MAX_LISTED).copied())
            .collect();
        let wanted: Vec<JobId> = wanted.into_iter().collect();
        let found: HashMap<JobId, jobs::Job> = jobs::get_many(db, org_id, &wanted)
            .await?
            .into_iter()
            .map(|j| (j.id, j))
            .collect();
        // One transaction per page: each alert's cursor moves (guarded) with its mail.
        let mut tx = db.begin().await?;
        for (alert, mine) in planned {
            let msg = (!mine.is_empty()).then(|| {
                let listed: Vec<jobs::Job> = mine
                    .iter()
                    .take(mail::MAX_LISTED)
                    .filter_map(|id| found.get(id).cloned())
                    .collect();
                mail::new_jobs(
                    alert,
                    &sign(key, alert.id),
                    &b.name,
                    &listed,
                    mine.len().saturating_sub(mail::MAX_LISTED),
                    &links,
                )
            });
            // A mail that cannot be queued (an address stored under an older rule, say)
            // is recorded for its alert, whose cursor still moves; the others go on.
            let refused = msg.as_ref().and_then(|m| m.validate().err());
            let sending = msg.is_some() && refused.is_none();
            let moved =
                store::advance(&mut tx, alert.id, alert.cursor, newest, now, sending).await?;
            if !moved {
                continue;
            }
            if let Some(why) = refused {
                tracing::warn!(alert_id = %alert.id, org_id = org_id.0, %why, "alert mail not queued");
                store::record_failure(&mut tx, alert.id, &why, now).await?;
                continue;
            }
            if let Some(msg) = msg {
                queue(&mut tx, org_id, &msg).await?;
                sent += 1;
            }
        }
        tx.commit().await?;
    }
    Ok(sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_signed() {
        let key = [7u8; 32];
        let id = Uuid::now_v7();
        let token = sign(&key, id);
        assert_eq!(verify(&key, &token), Some(id));
        assert_eq!(verify(&[8u8; 32], &token), None);
        let mut forged = token.clone();
        forged.replace_range(..1, if token.starts_with('0') { "1" } else { "0" });
        assert_eq!(verify(&key, &forged), None);
        assert_eq!(verify(&key, &token[..40]), None);
        assert_eq!(verify(&key, "x"), None);
    }
}
