-- Secret rotation: after PATCH /webhooks/{id} replaces a secret, the previous one keeps
-- signing deliveries (beside the new one) until previous_secret_until.
ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret TEXT;
ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret_until INTEGER;
