-- Changes to what job lists are made of, in commit order: each node keeps an in-memory
-- search index per organization and brings it up to date by reading the changes after
-- the last one it applied. A row names the job and its `created_at` (its place in list
-- order, which never changes; the row may be gone when the change is read) and whether its
-- words may have changed (`text`). Only changes to listed columns are logged. Rows older than a day are deleted by the scheduler; an
-- index that has not caught up for that long is built again instead.
CREATE TABLE job_changes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    org_id     INTEGER NOT NULL,
    job_id     BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    text       INTEGER NOT NULL DEFAULT 1,
    at         INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000000 AS INTEGER))
);
CREATE INDEX job_changes_org ON job_changes(org_id, id);
CREATE INDEX job_changes_at ON job_changes(at);

CREATE TRIGGER job_changes_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO job_changes (org_id, job_id, created_at) VALUES (new.org_id, new.id, new.created_at);
END;
CREATE TRIGGER job_changes_update AFTER UPDATE ON jobs
WHEN old.title IS NOT new.title OR old.company_name IS NOT new.company_name
    OR old.description_text IS NOT new.description_text OR old.status IS NOT new.status
    OR old.is_sticky IS NOT new.is_sticky OR old.is_remote IS NOT new.is_remote
    OR old.job_type IS NOT new.job_type OR old.category_id IS NOT new.category_id
    OR old.location IS NOT new.location OR old.expires_at IS NOT new.expires_at
    OR old.org_id IS NOT new.org_id OR old.created_at IS NOT new.created_at
BEGIN
    INSERT INTO job_changes (org_id, job_id, created_at, text) VALUES (old.org_id, old.id, old.created_at,
        old.title IS NOT new.title OR old.company_name IS NOT new.company_name
        OR old.description_text IS NOT new.description_text);
    INSERT INTO job_changes (org_id, job_id, created_at)
    SELECT new.org_id, new.id, new.created_at
    WHERE old.org_id IS NOT new.org_id OR old.created_at IS NOT new.created_at OR old.id IS NOT new.id;
END;
CREATE TRIGGER job_changes_delete AFTER DELETE ON jobs BEGIN
    INSERT INTO job_changes (org_id, job_id, created_at) VALUES (old.org_id, old.id, old.created_at);
END;
