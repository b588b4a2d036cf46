-- How long an organization keeps applications, in days (0: for as long as it exists).
ALTER TABLE organizations ADD COLUMN keep_applications_days BIGINT NOT NULL DEFAULT 0;
