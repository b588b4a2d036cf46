//! Delivering what the outboxes hold: one worker loop ([`outbox`]) and its two uses,
//! signed webhook deliveries ([`webhooks`]) and mail handed to an SMTP server ([`mail`]).
//! What is delivered is written by the domain, in the transaction of the change that
//! caused it (`jobboard_domain::webhooks`, `jobboard_domain::mail`).

pub mod mail;
pub mod outbox;
pub mod webhooks;
