-- A change counter per organization for everything a job list is rendered from (its jobs
-- and categories), bumped by triggers in the writing transaction. A node serves a cached
-- job list only while this number is the one the list was rendered at.
CREATE TABLE job_list_versions (
    org_id  INTEGER PRIMARY KEY,
    version INTEGER NOT NULL
);
CREATE TRIGGER job_list_versions_job_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO job_list_versions (org_id, version) VALUES (new.org_id, 1)
    ON CONFLICT (org_id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER job_list_versions_job_update AFTER UPDATE ON jobs BEGIN
    INSERT INTO job_list_versions (org_id, version) VALUES (new.org_id, 1)
    ON CONFLICT (org_id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER job_list_versions_job_delete AFTER DELETE ON jobs BEGIN
    INSERT INTO job_list_versions (org_id, version) VALUES (old.org_id, 1)
    ON CONFLICT (org_id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER job_list_versions_category_insert AFTER INSERT ON categories BEGIN
    INSERT INTO job_list_versions (org_id, version) VALUES (new.org_id, 1)
    ON CONFLICT (org_id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER job_list_versions_category_update AFTER UPDATE ON categories BEGIN
    INSERT INTO job_list_versions (org_id, version) VALUES (new.org_id, 1)
    ON CONFLICT (org_id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER job_list_versions_category_delete AFTER DELETE ON categories BEGIN
    INSERT INTO job_list_versions (org_id, version) VALUES (old.org_id, 1)
    ON CONFLICT (org_id) DO UPDATE SET version = version + 1;
END;
