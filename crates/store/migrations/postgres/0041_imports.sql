-- Jobs in (docs/distribution.md): the sources an organization imports from, and which
-- job each of a source's own ids became, with the digest of what was last imported.
CREATE TABLE import_sources (
    id            UUID        PRIMARY KEY,
    org_id        BIGINT      NOT NULL REFERENCES organizations(id),
    kind          TEXT        NOT NULL,
    url           TEXT        NOT NULL,
    every_minutes BIGINT      NOT NULL CHECK (every_minutes > 0),
    job_status    TEXT        NOT NULL,
    category_id   UUID,
    etag          TEXT,
    last_modified TEXT,
    next_run_at   TIMESTAMPTZ NOT NULL,
    last_run_at   TIMESTAMPTZ,
    last_result   JSONB,
    created_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX import_sources_org ON import_sources(org_id, created_at);
CREATE INDEX import_sources_due ON import_sources(next_run_at);

CREATE TABLE import_items (
    source_id   UUID NOT NULL REFERENCES import_sources(id) ON DELETE CASCADE,
    external_id TEXT NOT NULL,
    job_id      UUID NOT NULL,
    digest      TEXT NOT NULL,
    PRIMARY KEY (source_id, external_id)
);
CREATE INDEX import_items_job ON import_items(job_id);
