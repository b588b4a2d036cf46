-- The public board of each organization: the host name it answers on, its look, and
-- whether visitors may post jobs. A change to any of these is a change of the pages, so it
-- bumps the organization's list version like a job write does.
ALTER TABLE organizations ADD COLUMN domain TEXT;
ALTER TABLE organizations ADD COLUMN tagline TEXT;
ALTER TABLE organizations ADD COLUMN logo_url TEXT;
ALTER TABLE organizations ADD COLUMN accent_color TEXT;
ALTER TABLE organizations ADD COLUMN public_posting BOOLEAN NOT NULL DEFAULT TRUE;
CREATE UNIQUE INDEX organizations_domain ON organizations(domain) WHERE domain IS NOT NULL;
CREATE FUNCTION job_list_versions_bump_org() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_list_versions (org_id, version)
    SELECT DISTINCT id, 1 FROM changed ORDER BY id
    ON CONFLICT (org_id) DO UPDATE SET version = job_list_versions.version + 1;
    RETURN NULL;
END $$;
CREATE TRIGGER job_list_versions_org_update AFTER UPDATE ON organizations
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION job_list_versions_bump_org();

-- Secrets of this installation (shared by every node): the key that signs the board's
-- and the dashboard's anti-forgery tokens. Made on first use.
CREATE TABLE instance_secrets (
    name       TEXT        PRIMARY KEY,
    value      BYTEA       NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
