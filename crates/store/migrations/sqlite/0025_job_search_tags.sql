-- One full-text index answers a whole list: the words of a job (title, company name,
-- description text) and, in a fourth column, tags for the conditions of a list, so that a
-- search with filters is an intersection of posting lists, counted exactly in the index and
-- paged in its rowid order (newest first) without reading a row. Tags start with a digit
-- and are only ever matched in the `tags` column:
--
--   0o<org>s<status>k<sticky>   the list a job belongs to (one posting list per list)
--   0t<job type>                 job type, letters only ("fulltime")
--   0r<0|1>                      remote
--   0c<category id, hex>         category
--   0l<location number>          location, numbered per organization in job_locations
--
-- Each distinct location of an organization, numbered: a location filter (substrings)
-- is resolved here to the numbers of the locations it matches.
CREATE TABLE job_locations (
    id       INTEGER PRIMARY KEY,
    org_id   INTEGER NOT NULL,
    location TEXT    NOT NULL,
    UNIQUE (org_id, location)
);
INSERT INTO job_locations (org_id, location)
SELECT DISTINCT org_id, location FROM jobs WHERE location IS NOT NULL ORDER BY org_id, location;

CREATE VIRTUAL TABLE jobs_find USING fts5(
    title, company_name, description_text, tags,
    content = '', tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
);

-- What the index holds of each job: the one definition of its tags. The index keeps no
-- copy of the text, so a job is taken out of it with these same values (read before the
-- row changes or goes) and put back after.
CREATE VIEW jobs_find_rows AS
SELECT j.seq, j.title, j.company_name, j.description_text,
    '0o' || j.org_id || 's' || j.status || 'k' || j.is_sticky
    || ' 0r' || j.is_remote
    || CASE WHEN j.job_type IS NULL THEN '' ELSE ' 0t' || replace(replace(j.job_type, '-', ''), '_', '') END
    || CASE WHEN j.category_id IS NULL THEN '' ELSE ' 0c' || hex(j.category_id) END
    || CASE WHEN j.location IS NULL THEN '' ELSE ' 0l' || (SELECT l.id FROM job_locations l
        WHERE l.org_id = j.org_id AND l.location = j.location) END AS tags
FROM jobs j;

INSERT INTO jobs_find (rowid, title, company_name, description_text, tags)
SELECT seq, title, company_name, description_text, tags FROM jobs_find_rows;

CREATE TRIGGER jobs_find_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO job_locations (org_id, location)
    SELECT new.org_id, new.location WHERE new.location IS NOT NULL
    ON CONFLICT (org_id, location) DO NOTHING;
    INSERT INTO jobs_find (rowid, title, company_name, description_text, tags)
    SELECT seq, title, company_name, description_text, tags FROM jobs_find_rows WHERE seq = new.seq;
END;
CREATE TRIGGER jobs_find_delete BEFORE DELETE ON jobs BEGIN
    INSERT INTO jobs_find (jobs_find, rowid, title, company_name, description_text, tags)
    SELECT 'delete', seq, title, company_name, description_text, tags FROM jobs_find_rows WHERE seq = old.seq;
END;
CREATE TRIGGER jobs_find_update_out BEFORE UPDATE OF title, company_name, description_text,
    org_id, status, is_sticky, is_remote, job_type, category_id, location ON jobs BEGIN
    INSERT INTO jobs_find (jobs_find, rowid, title, company_name, description_text, tags)
    SELECT 'delete', seq, title, company_name, description_text, tags FROM jobs_find_rows WHERE seq = old.seq;
END;
CREATE TRIGGER jobs_find_update_in AFTER UPDATE OF title, company_name, description_text,
    org_id, status, is_sticky, is_remote, job_type, category_id, location ON jobs BEGIN
    INSERT INTO job_locations (org_id, location)
    SELECT new.org_id, new.location WHERE new.location IS NOT NULL
    ON CONFLICT (org_id, location) DO NOTHING;
    INSERT INTO jobs_find (rowid, title, company_name, description_text, tags)
    SELECT seq, title, company_name, description_text, tags FROM jobs_find_rows WHERE seq = new.seq;
END;

-- The indexes it replaces.
DROP TRIGGER jobs_fts_insert;
DROP TRIGGER jobs_fts_delete;
DROP TRIGGER jobs_fts_update;
DROP TABLE jobs_fts;
DROP TRIGGER jobs_fts_sticky_insert;
DROP TRIGGER jobs_fts_sticky_delete;
DROP TRIGGER jobs_fts_sticky_update;
DROP TABLE jobs_fts_sticky;
DROP INDEX jobs_search_keys;
