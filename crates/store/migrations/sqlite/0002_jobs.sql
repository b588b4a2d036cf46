-- Jobs. `seq` is the rowid (stable across VACUUM) that the full-text index refers to;
-- `id` is the public identifier.
CREATE TABLE jobs (
    seq                 INTEGER PRIMARY KEY,
    id                  BLOB    NOT NULL UNIQUE,
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
-- The list order, covering the liveness test and the filters, so that paging and counting
-- read the index only.
CREATE INDEX jobs_list ON jobs(org_id, status, is_sticky DESC, created_at DESC, id DESC,
    expires_at, job_type, is_remote, category_id, location);
-- Due expiries (the scheduler), and per organization (list totals).
CREATE INDEX jobs_expiry ON jobs(expires_at) WHERE expires_at IS NOT NULL AND status = 'active';
CREATE INDEX jobs_overdue ON jobs(org_id, expires_at) WHERE expires_at IS NOT NULL AND status = 'active';
-- Search results are looked up by rowid: this narrow index answers the list conditions and
-- the order without reading the (wide) rows.
CREATE INDEX jobs_search_keys ON jobs(seq, org_id, status, expires_at, is_sticky, created_at, id);

-- Full-text search over title, company name and description text (word prefixes).
CREATE VIRTUAL TABLE jobs_fts USING fts5(
    title, company_name, description_text,
    content = 'jobs', content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
);
CREATE TRIGGER jobs_fts_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO jobs_fts (rowid, title, company_name, description_text)
    VALUES (new.seq, new.title, new.company_name, new.description_text);
END;
CREATE TRIGGER jobs_fts_delete AFTER DELETE ON jobs BEGIN
    INSERT INTO jobs_fts (jobs_fts, rowid, title, company_name, description_text)
    VALUES ('delete', old.seq, old.title, old.company_name, old.description_text);
END;
CREATE TRIGGER jobs_fts_update AFTER UPDATE OF title, company_name, description_text ON jobs BEGIN
    INSERT INTO jobs_fts (jobs_fts, rowid, title, company_name, description_text)
    VALUES ('delete', old.seq, old.title, old.company_name, old.description_text);
    INSERT INTO jobs_fts (rowid, title, company_name, description_text)
    VALUES (new.seq, new.title, new.company_name, new.description_text);
END;

-- The same index over the sticky jobs only (few), so that a search finds its sticky
-- matches without walking every match of the main index.
CREATE VIRTUAL TABLE jobs_fts_sticky USING fts5(
    title, company_name, description_text,
    content = 'jobs', content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
);
CREATE TRIGGER jobs_fts_sticky_insert AFTER INSERT ON jobs WHEN new.is_sticky BEGIN
    INSERT INTO jobs_fts_sticky (rowid, title, company_name, description_text)
    VALUES (new.seq, new.title, new.company_name, new.description_text);
END;
CREATE TRIGGER jobs_fts_sticky_delete AFTER DELETE ON jobs WHEN old.is_sticky BEGIN
    INSERT INTO jobs_fts_sticky (jobs_fts_sticky, rowid, title, company_name, description_text)
    VALUES ('delete', old.seq, old.title, old.company_name, old.description_text);
END;
CREATE TRIGGER jobs_fts_sticky_update AFTER UPDATE OF title, company_name, description_text, is_sticky ON jobs
WHEN old.is_sticky OR new.is_sticky BEGIN
    INSERT INTO jobs_fts_sticky (jobs_fts_sticky, rowid, title, company_name, description_text)
    SELECT 'delete', old.seq, old.title, old.company_name, old.description_text WHERE old.is_sticky;
    INSERT INTO jobs_fts_sticky (rowid, title, company_name, description_text)
    SELECT new.seq, new.title, new.company_name, new.description_text WHERE new.is_sticky;
END;

-- Jobs per organization and status, kept by triggers in the writing transaction, so the
-- default list's total is read, not counted.
CREATE TABLE job_counts (
    org_id INTEGER NOT NULL,
    status TEXT    NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (org_id, status)
);
CREATE TRIGGER job_counts_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO job_counts (org_id, status, n) VALUES (new.org_id, new.status, 1)
    ON CONFLICT (org_id, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER job_counts_delete AFTER DELETE ON jobs BEGIN
    UPDATE job_counts SET n = n - 1 WHERE org_id = old.org_id AND status = old.status;
END;
CREATE TRIGGER job_counts_update AFTER UPDATE OF status, org_id ON jobs
WHEN old.status IS NOT new.status OR old.org_id IS NOT new.org_id BEGIN
    UPDATE job_counts SET n = n - 1 WHERE org_id = old.org_id AND status = old.status;
    INSERT INTO job_counts (org_id, status, n) VALUES (new.org_id, new.status, 1)
    ON CONFLICT (org_id, status) DO UPDATE SET n = n + 1;
END;
