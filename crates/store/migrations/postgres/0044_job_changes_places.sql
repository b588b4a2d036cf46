-- The search indexes filter by country and salary (docs/jobs.md): a change of a job's
-- country, remote countries or salary is logged for them like the other filtered fields.
CREATE OR REPLACE FUNCTION job_changes_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO job_changes (org_id, job_id, created_at, text)
        SELECT o.org_id, o.id, o.created_at,
            (o.title, o.company_name, o.description_text) IS DISTINCT FROM
            (n.title, n.company_name, n.description_text)
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.title, o.company_name, o.description_text, o.status, o.is_sticky, o.is_remote,
               o.job_type, o.category_id, o.location, o.expires_at, o.org_id, o.created_at,
               o.country, o.remote_countries, o.salary_min, o.salary_max)
              IS DISTINCT FROM
              (n.title, n.company_name, n.description_text, n.status, n.is_sticky, n.is_remote,
               n.job_type, n.category_id, n.location, n.expires_at, n.org_id, n.created_at,
               n.country, n.remote_countries, n.salary_min, n.salary_max)
        UNION ALL
        SELECT n.org_id, n.id, n.created_at, true FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.org_id, o.created_at) IS DISTINCT FROM (n.org_id, n.created_at);
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO job_changes (org_id, job_id, created_at)
        SELECT org_id, id, created_at FROM new_rows;
    ELSE
        INSERT INTO job_changes (org_id, job_id, created_at)
        SELECT org_id, id, created_at FROM old_rows;
    END IF;
    RETURN NULL;
END $$;
