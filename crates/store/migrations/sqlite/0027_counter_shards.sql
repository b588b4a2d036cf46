-- PostgreSQL splits its counter rows into shards for concurrent writers; SQLite has one
-- writer at a time: nothing changes here.
SELECT 1;
