-- The mail outbox: one row per mail, written in the transaction of what caused it, sent by
-- the mail worker. `status` is queued (waiting for a hand-over, due at next_attempt_at),
-- sent (accepted by the SMTP server) or failed (refused for good, or retries exhausted).
-- A worker claims a queued mail with a lease (lease_owner, lease_until); an expired lease
-- makes it claimable again.
CREATE TABLE mail_outbox (
    id              BLOB    PRIMARY KEY,
    org_id          INTEGER NOT NULL REFERENCES organizations(id),
    -- What the mail is (e.g. job_alert), for operators and later features.
    kind            TEXT    NOT NULL,
    to_address      TEXT    NOT NULL,
    subject         TEXT    NOT NULL,
    text_body       TEXT    NOT NULL,
    html_body       TEXT,
    -- Extra headers (e.g. List-Unsubscribe) as a JSON object of name to value.
    headers         TEXT    NOT NULL,
    -- Generated at enqueue time and sent with every attempt, so receivers can dedupe.
    message_id      TEXT    NOT NULL UNIQUE,
    status          TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    last_error      TEXT,
    lease_owner     BLOB,
    lease_until     INTEGER,
    created_at      INTEGER NOT NULL,
    sent_at         INTEGER
);
CREATE INDEX mail_outbox_due ON mail_outbox(next_attempt_at, id) WHERE status = 'queued';
CREATE INDEX mail_outbox_failed ON mail_outbox(created_at) WHERE status = 'failed';
CREATE INDEX mail_outbox_org ON mail_outbox(org_id, created_at);
