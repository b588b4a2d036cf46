//! Outgoing mail: a transactional outbox (`mail_outbox`) and a worker that hands each mail
//! to an SMTP server once.
//!
//! ```text
//! caller's transaction --enqueue--> mail_outbox --worker (lease)--> SMTP server
//! ```
//!
//! A feature that mails someone calls `jobboard_domain::mail::enqueue` inside the transaction of the change that
//! causes the mail, so the mail exists exactly when the change is committed, and survives
//! any crash after that. The worker (`serve`, unless `--no-worker`) claims due mails with a
//! lease, sends them with lettre over SMTP (`mail.smtp_url`), and marks each sent right
//! after the server accepted it. A temporary refusal (4xx, connection refused, time-out) is
//! retried on `mail.retry_schedule`; a permanent one (5xx) fails the mail at once.
//!
//! Without `mail.smtp_url` nothing is sent; [`enabled`] tells features so, and they refuse
//! the work that would need mail. Mail queued meanwhile waits for a configured server.
//!
//! Delivery guarantee: a mail is handed over until one hand-over is accepted, and never
//! again after its acceptance is recorded. Only a crash (or a database outage) between the
//! server's acceptance and that record, a few milliseconds, can send it twice; it then has
//! the same Message-ID both times, so receivers can dedupe.

pub mod compose;
pub mod config;
pub mod worker;

pub use config::{MailConfig, MailLayer};
pub use worker::{drain, drain_with, run};

use jobboard_domain::{
    OrgId,
    mail::{EnqueueError, Message, enqueue},
};
use jobboard_store::Db;

/// What the mail worker needs: the database and the mail settings.
#[derive(Debug, Clone)]
pub struct Setup {
    pub db: Db,
    pub config: MailConfig,
}

/// A use of the outbox worker reads its setup through [`HasSetup`].
pub use crate::outbox::HasSetup;

impl HasSetup<Setup> for Setup {
    fn setup(&self) -> Setup {
        self.clone()
    }
}

/// True when this service sends mail (an SMTP server is configured). Features that exist
/// only to send mail answer `409` when it is false.
pub fn enabled(setup: impl HasSetup<Setup>) -> bool {
    setup.setup().config.enabled()
}

/// Queues one mail in a transaction of its own (for tools, tests and features whose only
/// change is the mail itself). Returns the mail's id.
pub async fn enqueue_now(
    db: &Db,
    org_id: OrgId,
    msg: &Message,
) -> Result<uuid::Uuid, EnqueueError> {
    let mut tx = db.begin().await?;
    let id = enqueue(&mut tx, org_id, msg).await?;
    tx.commit().await?;
    Ok(id)
}
