-- The public board of each organization: the host name it answers on, its look, and
-- whether visitors may post jobs. A change to any of these is a change of the pages, so it
-- bumps the organization's list version like a job write does.
ALTER TABLE organizations ADD COLUMN domain TEXT;
ALTER TABLE organizations ADD COLUMN tagline TEXT;
ALTER TABLE organizations ADD COLUMN logo_url TEXT;
ALTER TABLE organizations ADD COLUMN accent_color TEXT;
ALTER TABLE organizations ADD COLUMN public_posting INTEGER NOT NULL DEFAULT 1;
CREATE UNIQUE INDEX organizations_domain ON organizations(domain) WHERE domain IS NOT NULL;
CREATE TRIGGER job_list_versions_org_update AFTER UPDATE ON organizations BEGIN
    INSERT INTO job_list_versions (org_id, version) VALUES (new.id, 1)
    ON CONFLICT (org_id) DO UPDATE SET version = version + 1;
END;

-- Secrets of this installation (shared by every node): the key that signs the board's
-- and the dashboard's anti-forgery tokens. Made on first use.
CREATE TABLE instance_secrets (
    name       TEXT    PRIMARY KEY,
    value      BLOB    NOT NULL,
    created_at INTEGER NOT NULL
);
