-- Collection rules: public submissions, their moderation, and the list order (sort_by
-- NULL keeps the order collections had before: position, then newest first).
ALTER TABLE cms_collections ADD COLUMN allow_public_submit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cms_collections ADD COLUMN moderation TEXT NOT NULL DEFAULT 'manual';
ALTER TABLE cms_collections ADD COLUMN sort_by TEXT;
ALTER TABLE cms_collections ADD COLUMN sort_dir TEXT NOT NULL DEFAULT 'asc';
