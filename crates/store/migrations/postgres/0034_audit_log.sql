-- The audit log: what an organization's staff did in the dashboard (signed in or out,
-- approved, changed or deleted a record, created or revoked a key, changed a setting),
-- who, when and from which address. Ids are UUIDv7, so their order is the order in time.
CREATE TABLE audit_log (
    id            UUID        PRIMARY KEY,
    org_id        BIGINT      NOT NULL REFERENCES organizations(id),
    at            TIMESTAMPTZ NOT NULL,
    actor_user_id UUID,
    actor_email   TEXT        NOT NULL,
    action        TEXT        NOT NULL,
    target        TEXT,
    detail        TEXT,
    ip            TEXT
);
CREATE INDEX audit_log_org ON audit_log(org_id, id);
CREATE INDEX audit_log_at ON audit_log(at);
