-- Instant indexing (docs/distribution.md): an organization's search engine accounts, the
-- notices its job changes leave for them (written in the change's transaction, delivered by
-- the indexing worker, one pending notice per URL and engine), and the ledger of its daily
-- quota at the Google Indexing API.
ALTER TABLE organizations ADD COLUMN indexing BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE organizations ADD COLUMN indexnow_key TEXT;
ALTER TABLE organizations ADD COLUMN google_indexing_key TEXT;
ALTER TABLE organizations ADD COLUMN google_indexing_quota BIGINT NOT NULL DEFAULT 200;
CREATE TABLE index_notices (
    id              UUID        PRIMARY KEY,
    org_id          BIGINT      NOT NULL REFERENCES organizations(id),
    engine          TEXT        NOT NULL,
    job_id          UUID        NOT NULL,
    path            TEXT        NOT NULL,
    action          TEXT        NOT NULL,
    featured        BOOLEAN     NOT NULL,
    job_created_at  TIMESTAMPTZ NOT NULL,
    status          TEXT        NOT NULL,
    attempts        BIGINT      NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ,
    last_error      TEXT,
    lease_owner     UUID,
    lease_id        UUID,
    lease_until     TIMESTAMPTZ,
    -- Changed again after it was claimed: stays pending when its delivery ends.
    dirty           BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at      TIMESTAMPTZ NOT NULL,
    sent_at         TIMESTAMPTZ
);
CREATE UNIQUE INDEX index_notices_pending ON index_notices(org_id, engine, path) WHERE status = 'pending';
CREATE INDEX index_notices_due ON index_notices(engine, next_attempt_at) WHERE status = 'pending';
CREATE INDEX index_notices_org ON index_notices(org_id, created_at);
CREATE TABLE index_quota (
    org_id BIGINT NOT NULL REFERENCES organizations(id),
    day    TEXT   NOT NULL,
    used   BIGINT NOT NULL,
    PRIMARY KEY (org_id, day)
);
