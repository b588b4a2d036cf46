//! The mail worker: claims due mails with a lease, hands each to the SMTP server, and
//! records the outcome right after the server's answer.
//!
//! ```text
//! mail_outbox --claim (lease)--> SMTP hand-over --> sent | queued for a retry | failed
//! ```
//!
//! The worker is the one outbox worker ([`crate::outbox`]) with mails as its items.
//! [`drain_with`] runs the same steps to completion for tests and tools.

use std::{sync::Arc, time::Duration};

use lettre::{
    AsyncSmtpTransport, AsyncTransport, Tokio1Executor, message::Mailbox,
    transport::smtp::PoolConfig,
};
use rand::Rng;
use tokio::sync::watch;
use uuid::Uuid;

use super::compose;
use super::{HasSetup, Setup};
use crate::outbox::{self, Limits, Outbox};
use jobboard_core::Clock;
use jobboard_domain::mail::store::{self, MAIL_CHANNEL, MAIL_WAKE, Mail};
use jobboard_store::{Db, Ts, redact_url};

/// How long past the hand-over time-out a claimed mail stays leased: room for recording
/// the outcome before another node may take the mail.
const LEASE_MARGIN: Duration = Duration::from_secs(10);
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
    async fn claim_due(&self, now: Ts, limit: usize) -> Vec<Mail> {
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
                match store::mark_sent(&db, id, db.now()).await {
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

impl Setup {
    fn limits(&self) -> Limits {
        Limits {
            concurrency: self.config.concurrency,
            per_group: self.config.concurrency,
            drain_batch: self.config.concurrency,
            grace: SHUTDOWN_GRACE,
        }
    }
}

/// The mail outbox. Leases left by a crashed process are not dropped at start, not even on
/// SQLite: they run out by themselves (time-out plus margin), and a lease broken early
/// could let a mail being handed over by another claimer of this database go out twice.
impl Outbox for Sender {
    type Item = Mail;

    const NAME: &'static str = "mail";

    fn wake(&self) -> &'static tokio::sync::Notify {
        &MAIL_WAKE
    }

    fn channel(&self) -> &'static str {
        MAIL_CHANNEL
    }

    fn id(item: &Mail) -> Uuid {
        item.id
    }

    async fn claim(&self, now: Ts, limit: usize, _per_group: usize) -> Vec<Mail> {
        self.claim_due(now, limit).await
    }

    async fn deliver(&self, mail: Mail, clock: Clock) {
        self.process(mail, clock).await
    }

    async fn release(&self, ids: &[Uuid]) {
        if let Err(e) = store::release(&self.db, self.owner, ids).await {
            tracing::warn!(error = ?e, "releasing mail leases failed");
        }
    }

    async fn next_due(&self) -> Option<Ts> {
        store::next_due(&self.db).await.ok().flatten()
    }
}

/// Hands over every mail due at `clock` until none is left; returns the hand-overs tried.
/// For tests and tools: deterministic, no background task involved. Does nothing when no
/// SMTP server is configured.
pub async fn drain_with(setup: impl HasSetup<Setup>, clock: Clock) -> usize {
    let setup = setup.setup();
    match Sender::new(&setup) {
        Ok(Some(s)) => outbox::drain(Arc::new(s), setup.limits(), clock).await,
        Ok(None) => 0,
        Err(e) => {
            tracing::warn!(error = ?e, "mail transport could not be built");
            0
        }
    }
}

/// [`drain_with`] at the time of the setup's database (the service's clock).
pub async fn drain(setup: impl HasSetup<Setup>) -> usize {
    let setup = setup.setup();
    let clock = setup.db.clock().clone();
    drain_with(setup, clock).await
}

/// The mail worker: hands due mails over, at most `mail.concurrency` at once, until `stop`.
pub async fn run(setup: impl HasSetup<Setup>, stop: watch::Receiver<bool>) {
    let setup = setup.setup();
    let sender = match Sender::new(&setup) {
        Ok(Some(s)) => s,
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
    outbox::run(Arc::new(sender), setup.limits(), &setup.db, stop).await
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
