-- Two-factor sign-in of staff users (TOTP, RFC 6238).
-- An organization may require it of every staff user.
ALTER TABLE organizations ADD COLUMN require_2fa INTEGER NOT NULL DEFAULT 0;

-- A user's authenticator: the secret while it is being set up (`pending_secret`) and once
-- confirmed (`secret`, two-factor sign-in is on), as base32 text; and the last time step
-- whose code was accepted (a step's code works once).
CREATE TABLE dashboard_two_factor (
    user_id        BLOB    PRIMARY KEY REFERENCES dashboard_users(id) ON DELETE CASCADE,
    secret         TEXT,
    pending_secret TEXT,
    last_step      INTEGER NOT NULL DEFAULT 0,
    enabled_at     INTEGER
);

-- One-time recovery codes, known by their SHA-256; deleted when used.
CREATE TABLE dashboard_recovery_codes (
    user_id   BLOB NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
    code_hash BLOB NOT NULL,
    PRIMARY KEY (user_id, code_hash)
);

-- Sign-ins whose password was right and whose second step (a code, or setting two-factor
-- up when the organization requires it) is still to come: known by the SHA-256 of their
-- id, bound to the sign-in pages' cookie, short-lived.
CREATE TABLE dashboard_pending_logins (
    id_hash      BLOB    PRIMARY KEY,
    user_id      BLOB    NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
    visitor_hash BLOB    NOT NULL,
    setup_secret TEXT,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX dashboard_pending_logins_expiry ON dashboard_pending_logins(expires_at);
