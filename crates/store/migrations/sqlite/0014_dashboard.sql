-- The dashboard: staff users (one organization each, signed in with an email and an
-- argon2id password), their sessions (stored here so that every node sees them and a
-- session can be ended at once), the one-time links that create the first user, and the
-- counters that limit failed sign-ins per account and per client address.
CREATE TABLE dashboard_users (
    id             BLOB    PRIMARY KEY,
    org_id         INTEGER NOT NULL REFERENCES organizations(id),
    email          TEXT    NOT NULL,
    -- links::email_identity(email): two addresses name one person exactly when equal.
    email_identity TEXT    NOT NULL UNIQUE,
    -- PHC string ($argon2id$v=19$m=...,t=...,p=...$salt$hash).
    password_hash  TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    last_login_at  INTEGER
);
CREATE INDEX dashboard_users_org ON dashboard_users(org_id, created_at);

-- A session is known by the SHA-256 of its id; the id itself lives only in the cookie.
CREATE TABLE dashboard_sessions (
    id_hash      BLOB    PRIMARY KEY,
    user_id      BLOB    NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
    org_id       INTEGER NOT NULL REFERENCES organizations(id),
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    -- The absolute end, however active the session is.
    expires_at   INTEGER NOT NULL
);
CREATE INDEX dashboard_sessions_user ON dashboard_sessions(user_id);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions(expires_at);

-- One-time links that let the first person of an organization create a staff user.
CREATE TABLE dashboard_setup_tokens (
    token_hash BLOB    PRIMARY KEY,
    org_id     INTEGER NOT NULL REFERENCES organizations(id),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);

-- Sign-in attempts in the current window, by SHA-256 of "account:<email identity>" or
-- "address:<client address>" (so neither addresses nor tried emails are stored in clear).
CREATE TABLE dashboard_login_attempts (
    key_hash     BLOB    PRIMARY KEY,
    window_start INTEGER NOT NULL,
    attempts     INTEGER NOT NULL
);
CREATE INDEX dashboard_login_attempts_window ON dashboard_login_attempts(window_start);
