-- Applications to jobs, and analytics roll-ups.
-- Applications keep their job id even if the job is deleted later: nothing submitted is lost.
CREATE TABLE applications (
    id           UUID        PRIMARY KEY,
    org_id       BIGINT      NOT NULL REFERENCES organizations(id),
    job_id       UUID        NOT NULL,
    job_title    TEXT        NOT NULL,
    name         TEXT        NOT NULL,
    email        TEXT        NOT NULL,
    resume_url   TEXT,
    cover_letter TEXT,
    answers      JSONB,
    status       TEXT        NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX applications_org ON applications(org_id, created_at DESC, id DESC);
CREATE INDEX applications_job ON applications(org_id, job_id, created_at DESC, id DESC);

-- Counters per organization, UTC day and job (the nil UUID for events without a job).
CREATE TABLE analytics_daily (
    org_id       BIGINT NOT NULL REFERENCES organizations(id),
    day          TEXT   NOT NULL,
    job_id       UUID   NOT NULL,
    page_views   BIGINT NOT NULL DEFAULT 0,
    job_views    BIGINT NOT NULL DEFAULT 0,
    apply_clicks BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, job_id, day)
);
CREATE INDEX analytics_daily_day ON analytics_daily(org_id, day);

-- Distinct visitors per organization, day and job (nil UUID: the whole site). A visitor is
-- a 16-byte hash, never an address.
CREATE TABLE analytics_visitors (
    org_id   BIGINT NOT NULL REFERENCES organizations(id),
    job_id   UUID   NOT NULL,
    day      TEXT   NOT NULL,
    visitor  BYTEA  NOT NULL,
    PRIMARY KEY (org_id, job_id, day, visitor)
);

-- One random salt per UTC day for hashing address and user agent; old salts are deleted,
-- so yesterday's hashes cannot be linked to addresses.
CREATE TABLE analytics_salts (
    day  TEXT  PRIMARY KEY,
    salt BYTEA NOT NULL
);

-- Counting jobs posted and members joined in a window reads these ranges only.
CREATE INDEX analytics_jobs_created ON jobs(org_id, created_at);
CREATE INDEX analytics_members_created ON members(org_id, created_at);
