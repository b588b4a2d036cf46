-- Writers of one organization no longer wait for each other on its counter rows. The job
-- counts and the job list version were one row per organization (and status), updated by
-- triggers in the writing transaction and so locked until its commit: concurrent job
-- creations of an organization committed one after another, each waiting for the previous
-- one's commit. Now each row is split into shards, and a transaction updates the shard of
-- its own server process (`pg_backend_pid() % 64`): a connection runs one transaction at a
-- time, so concurrent writers rarely share a shard. Readers sum the shards. The version
-- stays a change counter: every committing write adds one to some shard, so the sum grows
-- with every commit a reader can see.

ALTER TABLE job_list_versions ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_list_versions DROP CONSTRAINT job_list_versions_pkey;
ALTER TABLE job_list_versions ADD PRIMARY KEY (org_id, shard);

CREATE OR REPLACE FUNCTION job_list_versions_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_list_versions (org_id, shard, version)
    SELECT DISTINCT org_id, pg_backend_pid() % 64, 1 FROM changed ORDER BY org_id
    ON CONFLICT (org_id, shard) DO UPDATE SET version = job_list_versions.version + 1;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION job_list_versions_bump_org() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_list_versions (org_id, shard, version)
    SELECT DISTINCT id, pg_backend_pid() % 64, 1 FROM changed ORDER BY id
    ON CONFLICT (org_id, shard) DO UPDATE SET version = job_list_versions.version + 1;
    RETURN NULL;
END $$;

ALTER TABLE job_counts ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_counts DROP CONSTRAINT job_counts_pkey;
ALTER TABLE job_counts ADD PRIMARY KEY (org_id, status, shard);

-- A shard's count may go below zero (a job counted in one shard, removed through another);
-- the sum over the shards is the count.
CREATE OR REPLACE FUNCTION job_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO job_counts (org_id, status, shard, n) VALUES (OLD.org_id, OLD.status, pg_backend_pid() % 64, -1)
        ON CONFLICT (org_id, status, shard) DO UPDATE SET n = job_counts.n - 1;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO job_counts (org_id, status, shard, n) VALUES (NEW.org_id, NEW.status, pg_backend_pid() % 64, 1)
        ON CONFLICT (org_id, status, shard) DO UPDATE SET n = job_counts.n + 1;
    END IF;
    RETURN NULL;
END $$;
