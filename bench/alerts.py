#!/usr/bin/env python3
"""Job alert benchmark: one instant pass over 100,000 confirmed alerts against 1,000 new
jobs, its duration and the server's peak memory, on SQLite (default) or PostgreSQL
(--database postgres://...).

Phase 1 starts the release binary without the scheduler (mail configured to a closed port
of 127.0.0.1 and no mail worker, so mail is queued and never sent), creates 1,000 active
jobs through POST /api/jobs (each noted in the live-jobs log as it goes live) and stops.
The alerts are then written straight into the database: 100,000 confirmed instant alerts
over 200 distinct sets of filters (words of the job titles, cities, job types, remote),
none of the new jobs mailed yet. Phase 2 starts the server with the scheduler and times
the pass from start until every alert's cursor has moved, then reports the mails queued
and the server's resident memory (idle before the pass, and its peak).

Only 127.0.0.1 is contacted. Standard library only (psql for PostgreSQL).

    cargo build --release && python3 bench/alerts.py [--database URL] [--alerts N] [--jobs N]
"""

import argparse
import http.client
import json
import os
import random
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("BENCH_BIN") or os.path.join(
    os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "jobboard")
WORDS = ["rust", "python", "data", "product", "cloud", "security", "sales", "support", "nurse", "chef"]
CITIES = ["Berlin", "Paris", "London", "Madrid", "Lisbon", "Vienna", "Oslo", "Porto"]
TYPES = ["full-time", "part-time", "contract"]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def run(args, **kw):
    return subprocess.run([BIN, "--database", DB] + args, check=True, capture_output=True, text=True, **kw)


def start(scheduler):
    port = free_port()
    env = dict(os.environ, RUST_LOG="warn", JOBBOARD_SCHEDULER="true" if scheduler else "false",
               JOBBOARD_SMTP_URL="smtp://127.0.0.1:9", JOBBOARD_MAIL_FROM="Bench <bench@example.test>")
    p = subprocess.Popen([BIN, "--database", DB, "serve", "--listen", f"127.0.0.1:{port}", "--no-worker"],
                         env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(WORK, "server.log"), "a"))
    for _ in range(300):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/readyz")
            if c.getresponse().status == 200:
                return p, port
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not start")


def kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def sql(query):
    if DB.startswith("postgres"):
        out = subprocess.run(["psql", DB, "-tAc", query], check=True, capture_output=True, text=True)
        return out.stdout.strip()
    c = sqlite3.connect(DB.removeprefix("sqlite://"))
    r = c.execute(query).fetchone()
    c.close()
    return str(r[0])


def main():
    global DB, WORK
    ap = argparse.ArgumentParser()
    ap.add_argument("--database")
    ap.add_argument("--alerts", type=int, default=100_000)
    ap.add_argument("--jobs", type=int, default=1_000)
    a = ap.parse_args()
    WORK = tempfile.mkdtemp(prefix="jobboard-alerts-")
    DB = a.database or f"sqlite://{WORK}/bench.db"
    run(["migrate"])
    org = run(["orgs", "create", "--name", "bench"]).stdout.strip().splitlines()[-1]
    key = run(["keys", "create", "--org", org, "--read-limit", "100000", "--write-limit", "100000"]).stdout.strip().splitlines()[-1]
    rng = random.Random(7)

    server, port = start(scheduler=False)
    t0 = time.perf_counter()
    for i in range(a.jobs):
        body = {"title": f"{rng.choice(['Senior', 'Junior', 'Lead'])} {rng.choice(WORDS).title()} {rng.choice(['Engineer', 'Manager', 'Analyst'])}",
                "company_name": f"Company {i % 97}", "description": "<p>Work.</p>", "status": "active",
                "location": rng.choice(CITIES), "job_type": rng.choice(TYPES), "is_remote": rng.random() < 0.3}
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.request("POST", "/api/jobs", json.dumps(body), {"content-type": "application/json", "x-api-key": key})
        r = c.getresponse()
        r.read()
        assert r.status == 201, r.status
    print(f"created {a.jobs} jobs in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    server.terminate()
    server.wait()

    queries = []
    for i in range(200):
        q = []
        if i % 2 == 0:
            q.append(f"search={rng.choice(WORDS)}")
        if i % 3 == 0:
            q.append(f"locations={rng.choice(CITIES)}")
        if i % 5 == 0:
            q.append(f"job_types={rng.choice(TYPES)}")
        if i % 7 == 0:
            q.append("is_remote=true")
        queries.append("&".join(q))
    past_us = int((time.time() - 3600) * 1e6)
    t0 = time.perf_counter()
    if DB.startswith("postgres"):
        lines = []
        for i in range(a.alerts):
            email = f"reader{i}@example.com"
            lines.append("\t".join([str(uuid.uuid4()), org, email, email, "instant", queries[i % 200] or "",
                                    "active", "0", "2026-01-01 00:00:00+00", "2026-01-01 00:00:00+00", "2026-01-01 00:00:00+00"]))
        data = "\n".join(lines) + "\n"
        subprocess.run(["psql", DB, "-qc", "\\copy job_alerts (id, org_id, email, email_lower, frequency, query, status, cursor, created_at, confirmed_at, last_run_at) FROM STDIN"],
                       input=data, check=True, text=True)
    else:
        c = sqlite3.connect(DB.removeprefix("sqlite://"))
        c.executemany(
            "INSERT INTO job_alerts (id, org_id, email, email_lower, frequency, query, status, cursor, created_at, confirmed_at, last_run_at) VALUES (?, ?, ?, ?, 'instant', ?, 'active', 0, ?, ?, ?)",
            ((uuid.uuid4().bytes, int(org), f"reader{i}@example.com", f"reader{i}@example.com", queries[i % 200], past_us, past_us, past_us)
             for i in range(a.alerts)))
        c.commit()
        c.close()
    print(f"wrote {a.alerts} alerts in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    # Jobs count for alerts once they are 5 s old (see docs/alerts.md): let them settle, so
    # that the pass measured is the one that matches them all.
    time.sleep(6)
    server, port = start(scheduler=True)
    t0 = time.perf_counter()
    idle = kb(server.pid, "VmRSS")
    while True:
        left = int(sql("SELECT COUNT(*) FROM job_alerts WHERE cursor = 0") or 0)
        if left == 0:
            break
        if time.perf_counter() - t0 > 3600:
            raise SystemExit("the pass did not finish within an hour")
        time.sleep(0.2)
    elapsed = time.perf_counter() - t0
    peak = kb(server.pid, "VmHWM")
    mails = sql("SELECT COUNT(*) FROM mail_outbox")
    server.terminate()
    server.wait()
    backend = "PostgreSQL" if DB.startswith("postgres") else "SQLite"
    print(f"| {backend} | {a.alerts} alerts, {a.jobs} new jobs, 200 filter sets | pass done in {elapsed:.1f} s "
          f"(from server start) | {mails} mails queued | server memory: {idle / 1024:.0f} MB at start, peak {peak / 1024:.0f} MB |")


if __name__ == "__main__":
    main()
