-- A change counter per organization for everything a job list is rendered from (its jobs
-- and categories), bumped by statement triggers in the writing transaction (once per
-- organization and statement, so an expiry pass of many jobs bumps once). A node serves a
-- cached job list only while this number is the one the list was rendered at.
CREATE TABLE job_list_versions (
    org_id  BIGINT PRIMARY KEY,
    version BIGINT NOT NULL
);
CREATE FUNCTION job_list_versions_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_list_versions (org_id, version)
    SELECT DISTINCT org_id, 1 FROM changed ORDER BY org_id
    ON CONFLICT (org_id) DO UPDATE SET version = job_list_versions.version + 1;
    RETURN NULL;
END $$;
CREATE TRIGGER job_list_versions_job_insert AFTER INSERT ON jobs
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION job_list_versions_bump();
CREATE TRIGGER job_list_versions_job_update AFTER UPDATE ON jobs
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION job_list_versions_bump();
CREATE TRIGGER job_list_versions_job_delete AFTER DELETE ON jobs
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION job_list_versions_bump();
CREATE TRIGGER job_list_versions_category_insert AFTER INSERT ON categories
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION job_list_versions_bump();
CREATE TRIGGER job_list_versions_category_update AFTER UPDATE ON categories
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION job_list_versions_bump();
CREATE TRIGGER job_list_versions_category_delete AFTER DELETE ON categories
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION job_list_versions_bump();
