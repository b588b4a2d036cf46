-- One-time password reset links mailed to staff users: known by the SHA-256 of their
-- token (the token itself is only in the mail), usable once until `expires_at`.
CREATE TABLE dashboard_reset_tokens (
    token_hash BYTEA       PRIMARY KEY,
    user_id    UUID        NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at    TIMESTAMPTZ
);
CREATE INDEX dashboard_reset_tokens_user ON dashboard_reset_tokens(user_id);
CREATE INDEX dashboard_reset_tokens_expiry ON dashboard_reset_tokens(expires_at);
