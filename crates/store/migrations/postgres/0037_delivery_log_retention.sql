-- Finished deliveries by age: what the delivery log's retention deletes first.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries(updated_at) WHERE status <> 'pending';
