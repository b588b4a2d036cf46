-- Mail to employers (a job's contact_email): when the job goes live, a reminder before it
-- expires, and on each application; each switchable per organization. A job remembers
-- the expires_at its reminder was sent for, so a moved expiry gets a new reminder.
ALTER TABLE organizations ADD COLUMN mail_job_live BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE organizations ADD COLUMN mail_expiry_days BIGINT NOT NULL DEFAULT 3;
ALTER TABLE organizations ADD COLUMN mail_applications BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE jobs ADD COLUMN expiry_reminder_for TIMESTAMPTZ;
CREATE INDEX jobs_expiry_reminders ON jobs (org_id, expires_at)
    WHERE status = 'active' AND contact_email IS NOT NULL AND expires_at IS NOT NULL;
