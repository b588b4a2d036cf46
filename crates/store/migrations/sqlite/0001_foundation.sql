-- Organizations, API keys and the event outbox.
CREATE TABLE organizations (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id           BLOB    PRIMARY KEY,
    org_id       INTEGER NOT NULL REFERENCES organizations(id),
    name         TEXT    NOT NULL,
    prefix       TEXT    NOT NULL,
    key_hash     BLOB    NOT NULL UNIQUE,
    scopes       TEXT    NOT NULL,
    read_limit   INTEGER NOT NULL,
    write_limit  INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE INDEX api_keys_org ON api_keys(org_id);
CREATE INDEX api_keys_prefix ON api_keys(prefix);

-- The transactional outbox: every resource write that causes an event inserts it here in
-- the same transaction. The webhook worker fans each event out into deliveries.
CREATE TABLE events (
    id            BLOB    PRIMARY KEY,
    org_id        INTEGER NOT NULL REFERENCES organizations(id),
    event_type    TEXT    NOT NULL,
    data          TEXT    NOT NULL,
    occurred_at   INTEGER NOT NULL,
    dispatched_at INTEGER
);
CREATE INDEX events_pending ON events(occurred_at) WHERE dispatched_at IS NULL;
CREATE INDEX events_org ON events(org_id, occurred_at);

CREATE TABLE categories (
    id         BLOB    PRIMARY KEY,
    org_id     INTEGER NOT NULL REFERENCES organizations(id),
    name       TEXT    NOT NULL,
    slug       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (org_id, slug)
);
