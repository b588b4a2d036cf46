-- Jobs.
CREATE TABLE jobs (
    id                  BLOB    PRIMARY KEY,
    org_id              INTEGER NOT NULL REFERENCES organizations(id),
    title               TEXT    NOT NULL,
    description         TEXT    NOT NULL,
    description_text    TEXT    NOT NULL,
    company_name        TEXT    NOT NULL,
    slug                TEXT    NOT NULL,
    job_type            TEXT,
    location            TEXT,
    location_restricted INTEGER NOT NULL DEFAULT 0,
    is_remote           INTEGER NOT NULL DEFAULT 0,
    is_highlighted      INTEGER NOT NULL DEFAULT 0,
    is_sticky           INTEGER NOT NULL DEFAULT 0,
    how_to_apply        TEXT,
    how_to_apply_method TEXT,
    category_id         BLOB    REFERENCES categories(id),
    company_website     TEXT,
    company_logo_url    TEXT,
    salary_min          REAL,
    salary_max          REAL,
    salary_currency     TEXT,
    salary_period       TEXT,
    contact_email       TEXT,
    expires_at          INTEGER,
    status              TEXT    NOT NULL,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    UNIQUE (org_id, slug)
);
CREATE INDEX jobs_list ON jobs(org_id, status, is_sticky DESC, created_at DESC, id DESC);
CREATE INDEX jobs_expiry ON jobs(expires_at) WHERE expires_at IS NOT NULL AND status = 'active';
