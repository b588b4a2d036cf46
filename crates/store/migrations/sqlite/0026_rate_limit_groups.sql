-- On SQLite rate limits live in the memory of the one node: nothing changes here.
SELECT 1;
