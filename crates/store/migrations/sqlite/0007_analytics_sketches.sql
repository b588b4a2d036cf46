-- Distinct visitors of each daily row, kept at ingestion, and a HyperLogLog sketch of them
-- (see src/hll.rs), so that distinct visitors over a long period merge one sketch per day
-- instead of reading every (day, visitor) row.
ALTER TABLE analytics_daily ADD COLUMN visitors INTEGER NOT NULL DEFAULT 0;
-- NULL while not built: rows written before this version get theirs from the server after
-- the migrations (see maintenance_tasks below); reads count their visitor rows until then.
ALTER TABLE analytics_daily ADD COLUMN sketch BLOB;

UPDATE analytics_daily SET visitors = c.n
FROM (SELECT org_id, job_id, day, COUNT(*) AS n FROM analytics_visitors GROUP BY org_id, job_id, day) AS c
WHERE analytics_daily.org_id = c.org_id AND analytics_daily.job_id = c.job_id AND analytics_daily.day = c.day;

-- Work left to the server after migrations, resumed at every start until done: here,
-- building the sketches of the days recorded before this version.
CREATE TABLE IF NOT EXISTS maintenance_tasks (name TEXT PRIMARY KEY);
INSERT INTO maintenance_tasks (name) VALUES ('analytics_sketches') ON CONFLICT DO NOTHING;
