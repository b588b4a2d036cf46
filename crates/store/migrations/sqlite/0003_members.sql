-- Plans, members, their access (subscription) records and payments.
CREATE TABLE plans (
    id                    BLOB    PRIMARY KEY,
    org_id                INTEGER NOT NULL REFERENCES organizations(id),
    name                  TEXT    NOT NULL,
    processor_price_id    TEXT,
    alt_processor_plan_id TEXT,
    price                 TEXT    NOT NULL,
    currency              TEXT    NOT NULL,
    billing_interval      TEXT    NOT NULL,
    jobs_included         INTEGER NOT NULL,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL,
    UNIQUE (org_id, name),
    UNIQUE (org_id, processor_price_id),
    UNIQUE (org_id, alt_processor_plan_id)
);

-- A member's id is unique within its organization: the same external user id may be
-- synced into several organizations. `email_lower` is the email folded to lower case by
-- the server (the same folding on both backends); one member per address and organization.
CREATE TABLE members (
    id              BLOB    NOT NULL,
    org_id          INTEGER NOT NULL REFERENCES organizations(id),
    email           TEXT    NOT NULL,
    email_lower     TEXT    NOT NULL,
    name            TEXT    NOT NULL,
    role            TEXT    NOT NULL,
    approval_status TEXT    NOT NULL,
    profile_picture TEXT,
    description     TEXT,
    custom_fields   TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX members_email ON members(org_id, email_lower);

CREATE TABLE member_access (
    id                        BLOB    PRIMARY KEY,
    org_id                    INTEGER NOT NULL,
    user_id                   BLOB    NOT NULL,
    plan_id                   BLOB    NOT NULL REFERENCES plans(id),
    status                    TEXT    NOT NULL,
    processor_subscription_id TEXT,
    current_period_start      INTEGER,
    current_period_end        INTEGER,
    cancel_at                 INTEGER,
    canceled_at               INTEGER,
    jobs_remaining            INTEGER NOT NULL,
    metadata                  TEXT    NOT NULL,
    created_at                INTEGER NOT NULL,
    updated_at                INTEGER NOT NULL,
    FOREIGN KEY (org_id, user_id) REFERENCES members(org_id, id),
    UNIQUE (org_id, processor_subscription_id)
);
CREATE INDEX member_access_user ON member_access(org_id, user_id, plan_id);

-- Payments keep no foreign key to jobs: a payment is a financial record that outlives
-- the job it paid for.
CREATE TABLE payments (
    id                          BLOB    PRIMARY KEY,
    org_id                      INTEGER NOT NULL,
    user_id                     BLOB    NOT NULL,
    job_id                      BLOB    NOT NULL,
    plan_id                     BLOB    REFERENCES plans(id),
    amount                      TEXT    NOT NULL,
    currency                    TEXT    NOT NULL,
    status                      TEXT    NOT NULL,
    payment_provider            TEXT    NOT NULL,
    processor_session_id        TEXT,
    processor_payment_intent_id TEXT,
    metadata                    TEXT    NOT NULL,
    created_at                  INTEGER NOT NULL,
    updated_at                  INTEGER NOT NULL,
    FOREIGN KEY (org_id, user_id) REFERENCES members(org_id, id),
    UNIQUE (org_id, processor_session_id),
    UNIQUE (org_id, processor_payment_intent_id)
);
CREATE INDEX payments_user ON payments(org_id, user_id);
