-- Webhook subscriptions, their deliveries (one per event and subscription) and the log of
-- every delivery attempt.
CREATE TABLE webhook_subscriptions (
    id            UUID        PRIMARY KEY,
    org_id        BIGINT      NOT NULL REFERENCES organizations(id),
    event         TEXT        NOT NULL,
    target_type   TEXT        NOT NULL,
    target_url    TEXT        NOT NULL,
    secret        TEXT,
    is_enabled    BOOLEAN     NOT NULL DEFAULT TRUE,
    -- Start of the current failure streak; NULL after a success.
    failing_since TIMESTAMPTZ,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    UNIQUE (org_id, event, target_type, target_url)
);
CREATE INDEX webhook_subscriptions_org ON webhook_subscriptions(org_id, is_enabled);

CREATE TABLE webhook_deliveries (
    id              UUID        PRIMARY KEY,
    subscription_id UUID        NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
    org_id          BIGINT      NOT NULL,
    event_id        UUID,
    event_type      TEXT        NOT NULL,
    -- The exact JSON body sent to webhook targets (stable across retries), hence TEXT.
    payload         TEXT        NOT NULL,
    status          TEXT        NOT NULL,
    attempts        BIGINT      NOT NULL DEFAULT 0,
    retry_step      BIGINT      NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ,
    lease_owner     UUID,
    lease_until     TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_sub ON webhook_deliveries(subscription_id, created_at);
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries(subscription_id, lease_until) WHERE lease_until IS NOT NULL;

CREATE TABLE webhook_attempts (
    id               UUID        PRIMARY KEY,
    delivery_id      UUID        NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempt          BIGINT      NOT NULL,
    status_code      BIGINT,
    error            TEXT,
    duration_ms      BIGINT      NOT NULL,
    response_excerpt TEXT,
    attempted_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, attempt);
