-- Webhook subscriptions, their deliveries (one per event and subscription) and the log of
-- every delivery attempt.
CREATE TABLE webhook_subscriptions (
    id            BLOB    PRIMARY KEY,
    org_id        INTEGER NOT NULL REFERENCES organizations(id),
    event         TEXT    NOT NULL,
    target_type   TEXT    NOT NULL,
    target_url    TEXT    NOT NULL,
    secret        TEXT,
    is_enabled    INTEGER NOT NULL DEFAULT 1,
    -- Start of the current failure streak; NULL after a success.
    failing_since INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    UNIQUE (org_id, event, target_type, target_url)
);
CREATE INDEX webhook_subscriptions_org ON webhook_subscriptions(org_id, is_enabled);

CREATE TABLE webhook_deliveries (
    id              BLOB    PRIMARY KEY,
    subscription_id BLOB    NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
    org_id          INTEGER NOT NULL,
    event_id        BLOB,
    event_type      TEXT    NOT NULL,
    -- The exact JSON body sent to webhook targets (stable across retries).
    payload         TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    retry_step      INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    lease_owner     BLOB,
    lease_until     INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_sub ON webhook_deliveries(subscription_id, created_at);
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries(subscription_id, lease_until) WHERE lease_until IS NOT NULL;

CREATE TABLE webhook_attempts (
    id               BLOB    PRIMARY KEY,
    delivery_id      BLOB    NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempt          INTEGER NOT NULL,
    status_code      INTEGER,
    error            TEXT,
    duration_ms      INTEGER NOT NULL,
    response_excerpt TEXT,
    attempted_at     INTEGER NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, attempt);
