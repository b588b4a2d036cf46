-- A pack of posts (a plan with `jobsIncluded` and a processor price) is bought through the
-- same checkout as a post (docs/payments.md): its order names the plan instead of a price
-- and a job, and its payment has no job.
CREATE TABLE payments_new (
    id                          BLOB    PRIMARY KEY,
    org_id                      INTEGER NOT NULL,
    user_id                     BLOB,
    job_id                      BLOB,
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
INSERT INTO payments_new SELECT id, org_id, user_id, job_id, plan_id, amount, currency, status,
    payment_provider, processor_session_id, processor_payment_intent_id, metadata, created_at,
    updated_at FROM payments;
DROP TABLE payments;
ALTER TABLE payments_new RENAME TO payments;
CREATE INDEX payments_user ON payments(org_id, user_id);
CREATE INDEX payments_org ON payments(org_id, created_at, id);

-- An order is of a job at a price (`post`, `feature`) or of a plan (`pack`).
CREATE TABLE orders_new (
    id           BLOB    PRIMARY KEY,
    org_id       INTEGER NOT NULL REFERENCES organizations(id),
    job_id       BLOB,
    price_id     BLOB    REFERENCES prices(id),
    plan_id      BLOB    REFERENCES plans(id),
    -- The access record a fulfilled pack created (a refund cancels it).
    access_id    BLOB,
    kind         TEXT    NOT NULL,
    member_id    BLOB,
    email        TEXT,
    status       TEXT    NOT NULL,
    amount       INTEGER NOT NULL,
    currency     TEXT    NOT NULL,
    session_id   TEXT,
    session_url  TEXT,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    fulfilled_at INTEGER,
    CHECK ((job_id IS NOT NULL AND price_id IS NOT NULL AND plan_id IS NULL)
        OR (kind = 'pack' AND plan_id IS NOT NULL
            AND job_id IS NULL AND price_id IS NULL))
);
INSERT INTO orders_new (id, org_id, job_id, price_id, kind, member_id, email, status, amount,
    currency, session_id, session_url, created_at, updated_at, fulfilled_at)
    SELECT id, org_id, job_id, price_id, kind, member_id, email, status, amount, currency,
    session_id, session_url, created_at, updated_at, fulfilled_at FROM orders;
DROP TABLE orders;
ALTER TABLE orders_new RENAME TO orders;
CREATE UNIQUE INDEX orders_session ON orders(org_id, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX orders_open ON orders(status, created_at);
CREATE INDEX orders_job ON orders(org_id, job_id);
