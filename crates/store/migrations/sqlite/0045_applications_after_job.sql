-- How long an organization keeps the applications of a job that has ended (expired, or
-- no longer stored), in days after it ended (0: as long as the other rules allow).
ALTER TABLE organizations ADD COLUMN keep_applications_after_job_days INTEGER NOT NULL DEFAULT 0;
