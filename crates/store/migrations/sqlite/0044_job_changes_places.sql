-- The search indexes filter by country and salary (docs/jobs.md): a change of a job's
-- country, remote countries or salary is logged for them like the other filtered fields.
DROP TRIGGER job_changes_update;
CREATE TRIGGER job_changes_update AFTER UPDATE ON jobs
WHEN old.title IS NOT new.title OR old.company_name IS NOT new.company_name
    OR old.description_text IS NOT new.description_text OR old.status IS NOT new.status
    OR old.is_sticky IS NOT new.is_sticky OR old.is_remote IS NOT new.is_remote
    OR old.job_type IS NOT new.job_type OR old.category_id IS NOT new.category_id
    OR old.location IS NOT new.location OR old.expires_at IS NOT new.expires_at
    OR old.org_id IS NOT new.org_id OR old.created_at IS NOT new.created_at
    OR old.country IS NOT new.country OR old.remote_countries IS NOT new.remote_countries
    OR old.salary_min IS NOT new.salary_min OR old.salary_max IS NOT new.salary_max
BEGIN
    INSERT INTO job_changes (org_id, job_id, created_at, text) VALUES (old.org_id, old.id, old.created_at,
        old.title IS NOT new.title OR old.company_name IS NOT new.company_name
        OR old.description_text IS NOT new.description_text);
    INSERT INTO job_changes (org_id, job_id, created_at)
    SELECT new.org_id, new.id, new.created_at
    WHERE old.org_id IS NOT new.org_id OR old.created_at IS NOT new.created_at OR old.id IS NOT new.id;
END;
