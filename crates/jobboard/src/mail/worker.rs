//! The mail worker: claims due mails with a lease, hands each to the SMTP server, and
//! records the outcome right after the server's answer.
//!
//! ```text
//! mail_outbox --claim (lease)--> SMTP hand-over --> sent | queued for a retry | failed
//! ```
//!
//! It wakes when mail is queued (in process at once; on PostgreSQL through `LISTEN/NOTIFY`
//! from every node) and polls once a second as a fallback. [`drain_with`] runs the same
//! steps to completion for tests and tools.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex},
    time::Duration,
};

use lettre::{
    AsyncSmtpTransport, AsyncTransport, Tokio1Executor, message::Mailbox,
    transport::smtp::PoolConfig,
};
use rand::Rng;
use tokio::{sync::watch, task::JoinSet};
use uuid::Uuid;

use super::Setup;
use super::compose;
use crate::webhooks::Clock;
use jobboard_domain::mail::store::{self, MAIL_CHANNEL, MAIL_WAKE, Mail};
use jobboard_store::{Db, Ts, redact_url};

/// How long past the hand-over time-out a claimed mail stays leased: room for recording
/// the outcome before another node may take the mail.
const LEASE_MARGIN: Duration = Duration::from_secs(10);
/// Polling period when no wake-up arrives.
const POLL: Duration = Duration::from_secs(1);
/// How long a shutdown waits for hand-overs in flight before handing the rest back.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// SMTP replies that refuse our credentials rather than the mail: a setting to fix, so they
/// are retried like temporary failures instead of failing the mail for good.
const AUTH_CODES: [u16; 4] = [530, 534, 535, 538];

/// What a failed hand-over means for the mail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Refused for good (an SMTP 5xx reply, or a mail that cannot be built): not retried.
    Permanent(String),
    /// Anything else (4xx replies, connection refused, time-out, TLS): retried.
    Temporary(String),
}

/// Sorts an SMTP error into permanent or temporary, with a readable description.
pub fn classify(e: &lettre::transport::smtp::Error) -> Failure {
    let text: String = e.to_string().chars().take(1000).collect();
    match e.status().map(u16::from) {
        Some(code) if e.is_permanent() && !AUTH_CODES.contains(&code) => Failure::Permanent(text),
        _ => Failure::Temporary(text),
    }
}

/// Hands claimed mails to the SMTP server and records the outcome.
pub struct Sender {
    db: Db,
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    retry_schedule: Vec<Duration>,
    timeout: Duration,
    concurrency: usize,
    owner: Uuid,
}

impl Sender {
    /// The sender of this configuration; `None` when no SMTP server is configured.
    pub fn new(setup: &Setup) -> anyhow::Result<Option<Sender>> {
        let c = &setup.config;
        let (Some(url), Some(from)) = (&c.smtp_url, &c.from) else {
            return Ok(None);
        };
        crate::init_tls();
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| anyhow::anyhow!("mail.smtp_url {}: {e}", redact_url(url)))?
            .timeout(Some(c.timeout))
            .pool_config(PoolConfig::new().max_size(c.concurrency as u32))
            .build();
        Ok(Some(Sender {
            db: setup.db.clone(),
            transport,
            from: from.clone(),
            retry_schedule: c.retry_schedule.clone(),
            timeout: c.timeout,
            concurrency: c.concurrency,
            owner: Uuid::now_v7(),
        }))
    }

    /// Claims up to `limit` mails due at `now`.
    async fn claim(&self, now: Ts, limit: usize) -> Vec<Mail> {
        let lease = chrono::Duration::from_std(self.timeout + LEASE_MARGIN).unwrap_or_default();
        store::claim(&self.db, self.owner, now, now.plus(lease), limit as i64)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = ?e, "claiming mail failed");
                Vec::new()
            })
    }

    /// Hands one claimed mail over and records what happened.
    pub async fn process(&self, mail: Mail, clock: Clock) {
        let failure = match compose::build(&mail, &self.from) {
            Err(e) => Failure::Permanent(e),
            Ok(msg) => match tokio::time::timeout(self.timeout, self.transport.send(msg)).await {
                Ok(Ok(_)) => {
                    self.record_sent(&mail).await;
                    return;
                }
                Ok(Err(e)) => classify(&e),
                Err(_) => {
                    Failure::Temporary(format!("no answer within {} s", self.timeout.as_secs()))
                }
            },
        };
        self.record_failure(&mail, failure, clock).await;
    }

    /// Marks an accepted mail sent at once. Between the server's acceptance and this mark
    /// a crash would make the mail due again after its lease, and it would be sent twice
    /// (with the same Message-ID, so receivers can dedupe): the mark is therefore the very
    /// next step, runs in a task of its own (a shutdown aborting the hand-over cannot cut
    /// it off), and is retried briefly if the database fails.
    async fn record_sent(&self, mail: &Mail) {
        let (db, id) = (self.db.clone(), mail.id);
        let marking = tokio::spawn(async move {
            for pause_ms in [0, 100, 500, 2000] {
                tokio::time::sleep(Duration::from_millis(pause_ms)).await;
                match store::mark_sent(&db, id, Ts::now()).await {
                    Ok(_) => return true,
                    Err(e) => tracing::warn!(error = ?e, mail = %id, "marking a mail sent failed"),
                }
            }
            false
        });
        if marking.await.unwrap_or(false) {
            tracing::debug!(mail = %mail.id, kind = %mail.kind, "mail sent");
        } else {
            tracing::error!(mail = %mail.id, "a sent mail could not be marked sent; it will be sent again");
        }
    }

    /// Queues the mail again after the next delay of the schedule (with a random factor in
    /// 0.9..1.1, so mails refused together do not return together), or fails it.
    async fn record_failure(&self, mail: &Mail, failure: Failure, clock: Clock) {
        let (error, retry_at) = match failure {
            Failure::Permanent(e) => (e, None),
            Failure::Temporary(e) => {
                let next = usize::try_from(mail.attempts)
                    .ok()
                    .and_then(|i| self.retry_schedule.get(i))
                    .map(|delay| {
                        let wait = delay.mul_f64(rand::rng().random_range(0.9..=1.1));
                        clock
                            .now()
                            .plus(chrono::Duration::from_std(wait).unwrap_or_default())
                    });
                (e, next)
            }
        };
        match store::record_failure(&self.db, self.owner, mail.id, &error, retry_at).await {
            Ok(true) if retry_at.is_none() => {
                tracing::warn!(mail = %mail.id, kind = %mail.kind, error = %error, "mail failed for good")
            }
            Ok(true) => {
                tracing::info!(mail = %mail.id, error = %error, retry_at = ?retry_at, "mail hand-over failed; retrying later")
            }
            Ok(false) => tracing::debug!(mail = %mail.id, "mail lease lost before recording"),
            Err(e) => {
                tracing::warn!(error = ?e, mail = %mail.id, "recording a mail failure failed")
            }
        }
    }
}

/// Hands over every mail due at `clock` until none is left; returns the hand-overs tried.
/// For tests and tools: deterministic, no background task involved. Does nothing when no
/// SMTP server is configured.
pub async fn drain_with(setup: impl Into<Setup>, clock: Clock) -> usize {
    let sender = match Sender::new(&setup.into()) {
        Ok(Some(s)) => Arc::new(s),
        Ok(None) => return 0,
        Err(e) => {
            tracing::warn!(error = ?e, "mail transport could not be built");
            return 0;
        }
    };
    let mut tried = 0;
    loop {
        let claimed = sender.claim(clock.now(), sender.concurrency).await;
        if claimed.is_empty() {
            return tried;
        }
        tried += claimed.len();
        let mut set = JoinSet::new();
        for mail in claimed {
            let s = sender.clone();
            set.spawn(async move { s.process(mail, clock).await });
        }
        while set.join_next().await.is_some() {}
    }
}

/// [`drain_with`] on the real clock.
pub async fn drain(setup: impl Into<Setup>) -> usize {
    drain_with(setup, Clock::Real).await
}

/// The mail worker: hands due mails over, at most `mail.concurrency` at once, until `stop`.
pub async fn run(setup: impl Into<Setup>, mut stop: watch::Receiver<bool>) {
    let setup = setup.into();
    let sender = match Sender::new(&setup) {
        Ok(Some(s)) => Arc::new(s),
        Ok(None) => return,
        Err(e) => {
            tracing::error!(error = ?e, "mail worker could not start");
            return;
        }
    };
    let url = setup.config.smtp_url.as_deref().unwrap_or_default();
    tracing::info!(
        smtp = %redact_url(url),
        concurrency = sender.concurrency,
        "mail worker started"
    );
    if url.starts_with("smtp://") && redact_url(url) != url && !url.contains("tls=required") {
        tracing::warn!(
            "mail.smtp_url has a password but does not require TLS: it may travel unencrypted \
             (use smtps:// or ?tls=required)"
        );
    }
    // Leases left by a crashed process are not dropped here, not even on SQLite: they run
    // out by themselves (time-out plus margin), and a lease broken early could let a mail
    // being handed over by another claimer of this database go out twice.
    let db = setup.db.clone();
    let listener = db
        .pg()
        .cloned()
        .map(|pool| tokio::spawn(listen(pool, stop.clone())));
    let freed = Arc::new(tokio::sync::Notify::new());
    let in_flight: Arc<Mutex<HashSet<Uuid>>> = Arc::default();
    let mut tasks = JoinSet::new();
    loop {
        let woken = MAIL_WAKE.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        if *stop.borrow() {
            break;
        }
        while tasks.try_join_next().is_some() {}
        let free = sender.concurrency.saturating_sub(tasks.len());
        let mut claimed_n = 0;
        if free > 0 {
            let claimed = sender.claim(Ts::now(), free).await;
            claimed_n = claimed.len();
            let mut map = in_flight.lock().unwrap_or_else(|e| e.into_inner());
            for mail in claimed {
                map.insert(mail.id);
                let (s, f, m) = (sender.clone(), freed.clone(), in_flight.clone());
                tasks.spawn(async move {
                    let id = mail.id;
                    s.process(mail, Clock::Real).await;
                    m.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
                    f.notify_one();
                });
            }
        }
        let wait = if free > 0 && claimed_n == free {
            // A full batch: there may be more due right away, once a slot frees.
            Duration::ZERO
        } else if !tasks.is_empty() {
            POLL
        } else {
            match store::next_due(&db).await {
                Ok(Some(at)) if at > Ts::now() => {
                    Duration::from_micros((at.micros() - Ts::now().micros()).max(0) as u64)
                        .min(POLL)
                }
                _ => POLL,
            }
        };
        if wait.is_zero() && tasks.len() < sender.concurrency {
            continue;
        }
        tokio::select! {
            _ = &mut woken => {}
            _ = freed.notified() => {}
            _ = tokio::time::sleep(wait) => {}
            _ = stop.changed() => {}
        }
    }
    // Shutdown: let hand-overs in flight finish (each is bounded by the time-out), then
    // hand the rest back. A mail whose acceptance was already received is still marked
    // sent: that mark runs in a task of its own.
    let grace = tokio::time::sleep(SHUTDOWN_GRACE);
    tokio::pin!(grace);
    loop {
        tokio::select! {
            next = tasks.join_next() => if next.is_none() { break },
            _ = &mut grace => break,
        }
    }
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    let unfinished: Vec<Uuid> = in_flight
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .copied()
        .collect();
    if !unfinished.is_empty() {
        tracing::info!(
            count = unfinished.len(),
            "handing unfinished mail back to the queue"
        );
        if let Err(e) = store::release(&db, sender.owner, &unfinished).await {
            tracing::warn!(error = ?e, "releasing mail leases failed");
        }
    }
    if let Some(l) = listener {
        let _ = l.await;
    }
}

/// Forwards PostgreSQL notifications of newly queued mail to the worker.
async fn listen(pool: sqlx::PgPool, mut stop: watch::Receiver<bool>) {
    loop {
        if *stop.borrow() {
            return;
        }
        let mut listener = match sqlx::postgres::PgListener::connect_with(&pool).await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = ?e, "mail listener could not connect; polling");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(5)) => continue,
                    _ = stop.changed() => return,
                }
            }
        };
        if let Err(e) = listener.listen(MAIL_CHANNEL).await {
            tracing::warn!(error = ?e, "mail LISTEN failed; polling");
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(5)) => continue,
                _ = stop.changed() => return,
            }
        }
        loop {
            tokio::select! {
                n = listener.recv() => match n {
                    Ok(_) => MAIL_WAKE.notify_waiters(),
                    Err(e) => {
                        tracing::warn!(error = ?e, "mail listener lost its connection");
                        MAIL_WAKE.notify_waiters();
                        break;
                    }
                },
                _ = stop.changed() => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn refused_connections_are_temporary() {
        crate::init_tls();
        // A port nothing listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let transport =
            AsyncSmtpTransport::<Tokio1Executor>::from_url(&format!("smtp://127.0.0.1:{port}"))
                .unwrap()
                .build();
        let msg = lettre::Message::builder()
            .from("a@example.com".parse().unwrap())
            .to("b@example.com".parse().unwrap())
            .subject("x")
            .body(String::from("x"))
            .unwrap();
        let err = transport.send(msg).await.unwrap_err();
        assert!(matches!(classify(&err), Failure::Temporary(_)), "{err}");
    }
}
