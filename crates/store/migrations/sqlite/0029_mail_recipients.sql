-- The identity of each mail's recipient (its address with ASCII letters in lower case),
-- so the mails anyone can ask for (alert confirmations, ...) are capped per recipient
-- and day across forms, organizations and nodes.
ALTER TABLE mail_outbox ADD COLUMN to_identity TEXT;
CREATE INDEX mail_outbox_recipient ON mail_outbox(to_identity, created_at);
