-- CMS collections and items. `version` is bumped by every write to a collection (its
-- items included) in the same transaction, so every node can tell with one indexed read
-- whether a cached read of that collection is still current.
CREATE TABLE cms_collections (
    id         UUID        PRIMARY KEY,
    org_id     BIGINT      NOT NULL REFERENCES organizations(id),
    slug       TEXT        NOT NULL,
    name       TEXT        NOT NULL,
    visibility TEXT        NOT NULL,
    schema     JSONB       NOT NULL,
    version    BIGINT      NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (org_id, slug)
);
CREATE TABLE cms_items (
    id            UUID        PRIMARY KEY,
    org_id        BIGINT      NOT NULL REFERENCES organizations(id),
    collection_id UUID        NOT NULL REFERENCES cms_collections(id),
    data          JSONB       NOT NULL,
    status        TEXT        NOT NULL,
    starts_at     TIMESTAMPTZ,
    expires_at    TIMESTAMPTZ,
    position      BIGINT      NOT NULL DEFAULT 0,
    owner_user_id UUID,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);
-- The list index also carries the columns the public list filters on, so counting it
-- can read the index only.
CREATE INDEX cms_items_list ON cms_items(collection_id, status, position, created_at DESC, id DESC)
    INCLUDE (org_id, starts_at, expires_at);
CREATE INDEX cms_items_starts ON cms_items(collection_id, starts_at) WHERE starts_at IS NOT NULL;
CREATE INDEX cms_items_expires ON cms_items(collection_id, expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX cms_items_expiry ON cms_items(expires_at) WHERE expires_at IS NOT NULL AND status = 'published';
