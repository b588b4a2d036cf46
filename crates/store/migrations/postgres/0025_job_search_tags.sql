-- The tagged full-text index of migration 0025 is SQLite's; PostgreSQL answers searches
-- from its GIN index (migration 0002). Nothing changes here.
SELECT 1;
