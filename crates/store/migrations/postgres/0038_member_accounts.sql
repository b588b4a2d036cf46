-- The members' own door on the board (docs/members.md). Per organization: whether
-- unknown addresses may sign up (`open`) or only existing members sign in (`closed`),
-- whether new members wait for staff (`manual`) or are approved at once (`auto`), and
-- whether members' new and edited jobs wait for moderation (`pending`) or go live
-- (`active`).
ALTER TABLE organizations ADD COLUMN member_signup TEXT NOT NULL DEFAULT 'closed';
ALTER TABLE organizations ADD COLUMN member_approval TEXT NOT NULL DEFAULT 'auto';
ALTER TABLE organizations ADD COLUMN member_posts TEXT NOT NULL DEFAULT 'pending';

-- The member who owns a job (posted it from their account, or named by the API). No
-- foreign key: deleting the member clears it in the deleting transaction, the job stays.
ALTER TABLE jobs ADD COLUMN owner_user_id UUID;
CREATE INDEX jobs_owner ON jobs(org_id, owner_user_id, created_at, id) WHERE owner_user_id IS NOT NULL;

-- One-time sign-in links: only the SHA-256 of the token is kept. `role` is set when the
-- link signs up an address no member has (the role chosen on the form).
CREATE TABLE member_sign_in_links (
    token_hash  BYTEA       PRIMARY KEY,
    org_id      BIGINT      NOT NULL REFERENCES organizations(id),
    email       TEXT        NOT NULL,
    email_lower TEXT        NOT NULL,
    role        TEXT,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    used_at     TIMESTAMPTZ
);
CREATE INDEX member_sign_in_links_expiry ON member_sign_in_links(expires_at);
CREATE INDEX member_sign_in_links_email ON member_sign_in_links(org_id, email_lower);

-- Members' sessions, known by the SHA-256 of the id only the browser's cookie holds.
CREATE TABLE member_sessions (
    id_hash      BYTEA       PRIMARY KEY,
    org_id       BIGINT      NOT NULL,
    member_id    UUID        NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    last_seen_at TIMESTAMPTZ NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL,
    FOREIGN KEY (org_id, member_id) REFERENCES members(org_id, id) ON DELETE CASCADE
);
CREATE INDEX member_sessions_member ON member_sessions(org_id, member_id);
CREATE INDEX member_sessions_expiry ON member_sessions(expires_at);

-- Jobs a job seeker saved.
CREATE TABLE saved_jobs (
    org_id     BIGINT      NOT NULL,
    member_id  UUID        NOT NULL,
    job_id     UUID        NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (org_id, member_id, job_id),
    FOREIGN KEY (org_id, member_id) REFERENCES members(org_id, id) ON DELETE CASCADE
);
CREATE INDEX saved_jobs_job ON saved_jobs(job_id);

-- Applications by the address they were made with (a member's export and erasure),
-- folded as email identities are: ASCII letters only.
CREATE INDEX applications_email ON applications(org_id, translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), created_at, id);
