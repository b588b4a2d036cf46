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
    -- Full-text search over title, company name and description text (word prefixes).
    search              TSVECTOR         GENERATED ALWAYS AS (
        to_tsvector('simple', title || ' ' || company_name || ' ' || description_text)
    ) STORED,
    UNIQUE (org_id, slug)
);
-- The list order, covering the liveness test and the filters, so that paging and counting
-- can read the index only.
CREATE INDEX jobs_list ON jobs(org_id, status, is_sticky DESC, created_at DESC, id DESC)
    INCLUDE (expires_at, job_type, is_remote, category_id, location);
-- Due expiries (the scheduler), and per organization (list totals).
CREATE INDEX jobs_expiry ON jobs(expires_at) WHERE expires_at IS NOT NULL AND status = 'active';
CREATE INDEX jobs_overdue ON jobs(org_id, expires_at) WHERE expires_at IS NOT NULL AND status = 'active';
CREATE INDEX jobs_search ON jobs USING GIN (search);

-- Jobs per organization and status, kept by triggers in the writing transaction, so the
-- default list's total is read, not counted.
CREATE TABLE job_counts (
    org_id BIGINT NOT NULL,
    status TEXT   NOT NULL,
    n      BIGINT NOT NULL,
    PRIMARY KEY (org_id, status)
);
CREATE FUNCTION job_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE job_counts SET n = n - 1 WHERE org_id = OLD.org_id AND status = OLD.status;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO job_counts (org_id, status, n) VALUES (NEW.org_id, NEW.status, 1)
        ON CONFLICT (org_id, status) DO UPDATE SET n = job_counts.n + 1;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER job_counts_insert_delete AFTER INSERT OR DELETE ON jobs
    FOR EACH ROW EXECUTE FUNCTION job_counts_track();
CREATE TRIGGER job_counts_update AFTER UPDATE OF status, org_id ON jobs
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.org_id IS DISTINCT FROM NEW.org_id)
    EXECUTE FUNCTION job_counts_track();
