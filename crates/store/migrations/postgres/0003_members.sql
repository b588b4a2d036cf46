-- Plans, members, their access (subscription) records and payments.
CREATE TABLE plans (
    id                    UUID        PRIMARY KEY,
    org_id                BIGINT      NOT NULL REFERENCES organizations(id),
    name                  TEXT        NOT NULL,
    processor_price_id    TEXT,
    alt_processor_plan_id TEXT,
    price                 NUMERIC     NOT NULL CHECK (price >= 0),
    currency              TEXT        NOT NULL,
    billing_interval      TEXT        NOT NULL,
    jobs_included         BIGINT      NOT NULL,
    created_at            TIMESTAMPTZ NOT NULL,
    updated_at            TIMESTAMPTZ NOT NULL,
    UNIQUE (org_id, name),
    UNIQUE (org_id, processor_price_id),
    UNIQUE (org_id, alt_processor_plan_id)
);

-- A member's id is unique within its organization: the same external user id may be
-- synced into several organizations. `email_lower` is the email folded to lower case by
-- the server (the same folding on both backends); one member per address and organization.
CREATE TABLE members (
    id              UUID        NOT NULL,
    org_id          BIGINT      NOT NULL REFERENCES organizations(id),
    email           TEXT        NOT NULL,
    email_lower     TEXT        NOT NULL,
    name            TEXT        NOT NULL,
    role            TEXT        NOT NULL,
    approval_status TEXT        NOT NULL,
    profile_picture TEXT,
    description     TEXT,
    custom_fields   JSONB,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX members_email ON members(org_id, email_lower);

CREATE TABLE member_access (
    id                        UUID        PRIMARY KEY,
    org_id                    BIGINT      NOT NULL,
    user_id                   UUID        NOT NULL,
    plan_id                   UUID        NOT NULL REFERENCES plans(id),
    status                    TEXT        NOT NULL,
    processor_subscription_id TEXT,
    current_period_start      TIMESTAMPTZ,
    current_period_end        TIMESTAMPTZ,
    cancel_at                 TIMESTAMPTZ,
    canceled_at               TIMESTAMPTZ,
    jobs_remaining            BIGINT      NOT NULL,
    metadata                  JSONB       NOT NULL,
    created_at                TIMESTAMPTZ NOT NULL,
    updated_at                TIMESTAMPTZ NOT NULL,
    FOREIGN KEY (org_id, user_id) REFERENCES members(org_id, id),
    UNIQUE (org_id, processor_subscription_id)
);
CREATE INDEX member_access_user ON member_access(org_id, user_id, plan_id);

-- Payments keep no foreign key to jobs: a payment is a financial record that outlives
-- the job it paid for.
CREATE TABLE payments (
    id                          UUID        PRIMARY KEY,
    org_id                      BIGINT      NOT NULL,
    user_id                     UUID        NOT NULL,
    job_id                      UUID        NOT NULL,
    plan_id                     UUID        REFERENCES plans(id),
    amount                      NUMERIC     NOT NULL CHECK (amount >= 0),
    currency                    TEXT        NOT NULL,
    status                      TEXT        NOT NULL,
    payment_provider            TEXT        NOT NULL,
    processor_session_id        TEXT,
    processor_payment_intent_id TEXT,
    metadata                    JSONB       NOT NULL,
    created_at                  TIMESTAMPTZ NOT NULL,
    updated_at                  TIMESTAMPTZ NOT NULL,
    FOREIGN KEY (org_id, user_id) REFERENCES members(org_id, id),
    UNIQUE (org_id, processor_session_id),
    UNIQUE (org_id, processor_payment_intent_id)
);
CREATE INDEX payments_user ON payments(org_id, user_id);
