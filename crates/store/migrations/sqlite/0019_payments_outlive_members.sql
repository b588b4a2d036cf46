-- A deleted member's payments stay, with no member (`delete_member` of POST
-- /members/access). SQLite cannot drop NOT NULL in place: the table is rebuilt with the
-- same columns, keys and index; a null user_id leaves the foreign key unchecked.
CREATE TABLE payments_new (
    id                          BLOB    PRIMARY KEY,
    org_id                      INTEGER NOT NULL,
    user_id                     BLOB,
    job_id                      BLOB    NOT NULL,
    plan_id                     BLOB    REFERENCES plans(id),
    amount                      TEXT    NOT NULL,
    currency                    TEXT    NOT NULL,
    status                      TEXT    NOT NULL,
    payment_provider            TEXT    NOT NULL,
    processor_session_id        TEXT,
    processor_payment_intent_id TEXT,
    metadata                    TEXT    NOT NULL,
    created_at                  INTEGER NOT NULL,
    updated_at                  INTEGER NOT NULL,
    FOREIGN KEY (org_id, user_id) REFERENCES members(org_id, id),
    UNIQUE (org_id, processor_session_id),
    UNIQUE (org_id, processor_payment_intent_id)
);
INSERT INTO payments_new SELECT id, org_id, user_id, job_id, plan_id, amount, currency, status,
    payment_provider, processor_session_id, processor_payment_intent_id, metadata, created_at,
    updated_at FROM payments;
DROP TABLE payments;
ALTER TABLE payments_new RENAME TO payments;
CREATE INDEX payments_user ON payments(org_id, user_id);
