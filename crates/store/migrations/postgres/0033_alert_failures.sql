-- Why the latest mail of an alert could not be queued, and when: a pass records it for
-- that alert and goes on with the others. Cleared when a later mail is queued.
ALTER TABLE job_alerts ADD COLUMN last_error TEXT, ADD COLUMN last_error_at TIMESTAMPTZ;
