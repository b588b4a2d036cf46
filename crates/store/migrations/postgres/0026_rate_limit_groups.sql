-- Rate limit buckets record how many requests their last statement admitted, so that one
-- statement can take several requests that arrived together (and authenticate their key in
-- the same statement: one round trip).
ALTER TABLE rate_limits ADD COLUMN taken INTEGER NOT NULL DEFAULT 0;
