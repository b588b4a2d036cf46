-- Structured location and pay transparency (docs/distribution.md): a job's country,
-- region, city, postal code and the countries a remote job may be done from (codes joined
-- by commas); a board may require a salary range, and countries for remote jobs, and says
-- how long a job without an expiry is announced as valid.
ALTER TABLE jobs ADD COLUMN country TEXT;
ALTER TABLE jobs ADD COLUMN region TEXT;
ALTER TABLE jobs ADD COLUMN city TEXT;
ALTER TABLE jobs ADD COLUMN postal_code TEXT;
ALTER TABLE jobs ADD COLUMN remote_countries TEXT;
ALTER TABLE organizations ADD COLUMN require_salary INTEGER NOT NULL DEFAULT 0;
ALTER TABLE organizations ADD COLUMN require_remote_countries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE organizations ADD COLUMN listing_days INTEGER NOT NULL DEFAULT 30;
