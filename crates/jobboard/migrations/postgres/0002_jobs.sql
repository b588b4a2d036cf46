-- Jobs.
CREATE TABLE jobs (
    id                  UUID             PRIMARY KEY,
    org_id              BIGINT           NOT NULL REFERENCES organizations(id),
    title               TEXT             NOT NULL,
    description         TEXT             NOT NULL,
    description_text    TEXT             NOT NULL,
    company_name        TEXT             NOT NULL,
    slug                TEXT             NOT NULL,
    job_type            TEXT,
    location            TEXT,
    location_restricted BOOLEAN          NOT NULL DEFAULT FALSE,
    is_remote           BOOLEAN          NOT NULL DEFAULT FALSE,
    is_highlighted      BOOLEAN          NOT NULL DEFAULT FALSE,
    is_sticky           BOOLEAN          NOT NULL DEFAULT FALSE,
    how_to_apply        TEXT,
    how_to_apply_method TEXT,
    category_id         UUID             REFERENCES categories(id),
    company_website     TEXT,
    company_logo_url    TEXT,
    salary_min          DOUBLE PRECISION,
    salary_max          DOUBLE PRECISION,
    salary_currency     TEXT,
    salary_period       TEXT,
    contact_email       TEXT,
    expires_at          TIMESTAMPTZ,
    status              TEXT             NOT NULL,
    created_at          TIMESTAMPTZ      NOT NULL,
    updated_at          TIMESTAMPTZ      NOT NULL,
    UNIQUE (org_id, slug)
);
CREATE INDEX jobs_list ON jobs(org_id, status, is_sticky DESC, created_at DESC, id DESC);
CREATE INDEX jobs_expiry ON jobs(expires_at) WHERE expires_at IS NOT NULL AND status = 'active';
