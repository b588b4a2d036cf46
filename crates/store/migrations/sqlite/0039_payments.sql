-- Paid postings (docs/payments.md). What a paid post becomes, and whether a refund
-- takes its job off the board.
ALTER TABLE organizations ADD COLUMN paid_posts TEXT NOT NULL DEFAULT 'pending';
ALTER TABLE organizations ADD COLUMN refund_unpublishes INTEGER NOT NULL DEFAULT 1;

-- A featured job is listed first (sticky) until then; the scheduler ends it.
ALTER TABLE jobs ADD COLUMN featured_until INTEGER;
CREATE INDEX jobs_featured ON jobs(featured_until) WHERE featured_until IS NOT NULL;

-- The organization's account at the card processor: read only to talk to it, never
-- listed, printed or logged.
CREATE TABLE payment_accounts (
    org_id         INTEGER PRIMARY KEY REFERENCES organizations(id),
    api_url        TEXT    NOT NULL,
    secret_key     TEXT    NOT NULL,
    webhook_secret TEXT    NOT NULL,
    updated_at     INTEGER NOT NULL
);

-- What a post (or a featured upgrade) costs: an amount in minor units of a currency, how
-- many days the job is listed, and how many it is featured.
CREATE TABLE prices (
    id            BLOB    PRIMARY KEY,
    org_id        INTEGER NOT NULL REFERENCES organizations(id),
    name          TEXT    NOT NULL,
    amount        INTEGER NOT NULL CHECK (amount > 0),
    currency      TEXT    NOT NULL,
    days          INTEGER NOT NULL CHECK (days > 0),
    featured_days INTEGER CHECK (featured_days > 0),
    archived_at   INTEGER,
    created_at    INTEGER NOT NULL
);
CREATE INDEX prices_org ON prices(org_id, created_at);

-- An order: a job (a draft until paid) bought at a price through one checkout session.
-- draft -> awaiting_payment -> paid -> fulfilled, or expired, or refunded.
CREATE TABLE orders (
    id           BLOB    PRIMARY KEY,
    org_id       INTEGER NOT NULL REFERENCES organizations(id),
    job_id       BLOB    NOT NULL,
    price_id     BLOB    NOT NULL REFERENCES prices(id),
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
    fulfilled_at INTEGER
);
CREATE UNIQUE INDEX orders_session ON orders(org_id, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX orders_open ON orders(status, created_at);
CREATE INDEX orders_job ON orders(org_id, job_id);

-- The organization's payments newest first (GET /api/payments).
CREATE INDEX payments_org ON payments(org_id, created_at, id);
