-- A pack of posts (a plan with `jobsIncluded` and a processor price) is bought through the
-- same checkout as a post (docs/payments.md): its order names the plan instead of a price
-- and a job, and its payment has no job.
ALTER TABLE payments ALTER COLUMN job_id DROP NOT NULL;

ALTER TABLE orders ALTER COLUMN job_id DROP NOT NULL;
ALTER TABLE orders ALTER COLUMN price_id DROP NOT NULL;
ALTER TABLE orders ADD COLUMN plan_id UUID REFERENCES plans(id);
-- The access record a fulfilled pack created (a refund cancels it).
ALTER TABLE orders ADD COLUMN access_id UUID;
ALTER TABLE orders ADD CONSTRAINT orders_item CHECK (
    (job_id IS NOT NULL AND price_id IS NOT NULL AND plan_id IS NULL)
    OR (kind = 'pack' AND plan_id IS NOT NULL
        AND job_id IS NULL AND price_id IS NULL));
