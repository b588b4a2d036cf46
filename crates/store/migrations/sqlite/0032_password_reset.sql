-- One-time password reset links mailed to staff users: known by the SHA-256 of their
-- token (the token itself is only in the mail), usable once until `expires_at`.
CREATE TABLE dashboard_reset_tokens (
    token_hash BLOB    PRIMARY KEY,
    user_id    BLOB    NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX dashboard_reset_tokens_user ON dashboard_reset_tokens(user_id);
CREATE INDEX dashboard_reset_tokens_expiry ON dashboard_reset_tokens(expires_at);
