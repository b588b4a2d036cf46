-- Changes to what job lists are made of: each node keeps an in-memory search index per
-- organization and brings it up to date by reading the changes it has not applied. A row
-- names the job and its `created_at` (its place in list order, which never changes; the
-- row may be gone when the change is read), and the writing transaction's id: a reader
-- takes the changes of transactions from the oldest one still running at its last read
-- on (`pg_snapshot_xmin`), so a change committed late, by a transaction that began early,
-- is never missed. `text` says whether the job's words may have changed. Only changes to listed columns are logged. Rows older than a day are
-- deleted by the scheduler; an index that has not caught up for that long is built again.
CREATE TABLE job_changes (
    id         BIGSERIAL   PRIMARY KEY,
    org_id     BIGINT      NOT NULL,
    job_id     UUID        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    text       BOOLEAN     NOT NULL DEFAULT true,
    xid        XID8        NOT NULL DEFAULT pg_current_xact_id(),
    at         TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX job_changes_org ON job_changes(org_id, xid);
CREATE INDEX job_changes_at ON job_changes(at);

CREATE FUNCTION job_changes_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO job_changes (org_id, job_id, created_at, text)
        SELECT o.org_id, o.id, o.created_at,
            (o.title, o.company_name, o.description_text) IS DISTINCT FROM
            (n.title, n.company_name, n.description_text)
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.title, o.company_name, o.description_text, o.status, o.is_sticky, o.is_remote,
               o.job_type, o.category_id, o.location, o.expires_at, o.org_id, o.created_at)
              IS DISTINCT FROM
              (n.title, n.company_name, n.description_text, n.status, n.is_sticky, n.is_remote,
               n.job_type, n.category_id, n.location, n.expires_at, n.org_id, n.created_at)
        UNION ALL
        SELECT n.org_id, n.id, n.created_at, true FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.org_id, o.created_at) IS DISTINCT FROM (n.org_id, n.created_at);
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO job_changes (org_id, job_id, created_at)
        SELECT org_id, id, created_at FROM new_rows;
    ELSE
        INSERT INTO job_changes (org_id, job_id, created_at)
        SELECT org_id, id, created_at FROM old_rows;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER job_changes_insert AFTER INSERT ON jobs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION job_changes_log();
CREATE TRIGGER job_changes_update AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION job_changes_log();
CREATE TRIGGER job_changes_delete AFTER DELETE ON jobs
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION job_changes_log();
