-- Board domains claimed from the dashboard wait here until proven: the board serves the
-- claim's token at /.well-known/jobboard-domain/<token> on any host, and the claim
-- becomes the organization's domain only once a request to the claimed host returns it.
-- One claim per organization; several organizations may claim one domain (the first to
-- prove it wins, and the others' claims of it are withdrawn then).
CREATE TABLE domain_claims (
    org_id     BIGINT      PRIMARY KEY REFERENCES organizations(id),
    domain     TEXT        NOT NULL,
    token      TEXT        NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX domain_claims_domain ON domain_claims(domain);

-- A domain that is an address or a loopback name routes nothing but to organization 1:
-- any such domain of another organization (set before claims needed proof) is removed.
UPDATE organizations SET domain = NULL
WHERE id <> 1 AND domain IS NOT NULL
  AND (domain = 'localhost' OR domain LIKE '%.localhost' OR domain ~ '^[0-9.]+$');
