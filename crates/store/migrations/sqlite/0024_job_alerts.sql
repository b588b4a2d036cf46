-- Job alerts: "email me new jobs like these". An alert holds the board's filters as a
-- query string and its frequency; its confirm, manage and unsubscribe links carry its id
-- signed with an installation secret. `cursor` is the last entry of job_live_log it has
-- been matched against, so a job is never mailed twice to one alert.
CREATE TABLE job_alerts (
    id            BLOB    PRIMARY KEY,
    org_id        INTEGER NOT NULL REFERENCES organizations(id),
    email         TEXT    NOT NULL,
    email_lower   TEXT    NOT NULL,
    frequency     TEXT    NOT NULL,
    query         TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    cursor        INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    confirmed_at  INTEGER,
    last_run_at   INTEGER,
    last_sent_at  INTEGER
);
CREATE INDEX job_alerts_due ON job_alerts(status, frequency, org_id, id);
CREATE INDEX job_alerts_email ON job_alerts(org_id, email_lower);

-- Jobs in the order they went live (first time only): what alerts match against.
CREATE TABLE job_live_log (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    org_id  INTEGER NOT NULL,
    job_id  BLOB    NOT NULL UNIQUE,
    live_at INTEGER NOT NULL
);
CREATE INDEX job_live_log_org ON job_live_log(org_id, seq);

-- How far each kind of alert pass has got: instant passes the last log entry they
-- handled, daily and weekly ones the last period they finished (so a pass is skipped
-- cheaply when nothing is due).
CREATE TABLE alert_runs (
    frequency  TEXT    PRIMARY KEY,
    done_until INTEGER,
    seq        INTEGER NOT NULL DEFAULT 0
);
