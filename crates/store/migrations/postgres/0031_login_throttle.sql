-- Failed sign-in attempts of one client on one email address, by SHA-256 of
-- "pair:<email identity>\n<client address>" (neither stored in clear). After a few
-- failures the pair waits `delay_us`, doubled at each further failure; other clients of
-- the address are not slowed. Times are Unix microseconds on both backends, so that one
-- statement computes the next wait on either.
CREATE TABLE dashboard_login_pairs (
    key_hash        BYTEA  PRIMARY KEY,
    failures        BIGINT NOT NULL,
    delay_us        BIGINT NOT NULL,
    locked_until_us BIGINT NOT NULL,
    last_failure_us BIGINT NOT NULL
);
CREATE INDEX dashboard_login_pairs_last ON dashboard_login_pairs(last_failure_us);
