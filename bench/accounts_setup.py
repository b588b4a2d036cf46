#!/usr/bin/env python3
"""Prepares a benchmark server for the members' pages (BENCH_SET=accounts of
bench/jobs.sh): an employer synced through the API who owns 1,000 of the seeded jobs
(set through PATCH /api/jobs/{id}), 1,000 applications made with the employer's address,
a job view of each of its jobs, and the employer signed in the way members sign in: the
sign-in form, then the link of the mail it queued (the server runs with an SMTP address
and no worker, so the mail waits in the outbox, where this script reads it). Prints the
query plans of the statements the account pages run (to stderr) and, last, the `Cookie:`
header of the member's session.

Only 127.0.0.1 is contacted. Standard library only.

    python3 bench/accounts_setup.py BIN DATABASE_URL PORT KEY
"""

import concurrent.futures
import datetime
import http.client
import json
import re
import sqlite3
import subprocess
import sys

BIN, DB, PORT, KEY = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
EMAIL = "bench-employer@example.com"
OWNED = 1000


def call(method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=120)
    h = dict(headers or {})
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        h.setdefault("content-type", "application/json")
    c.request(method, path, body=data, headers=h)
    r = c.getresponse()
    out = (r.status, r.getheaders(), r.read())
    c.close()
    return out


def api(method, path, body=None):
    status, _, raw = call(method, path, body, {"x-api-key": KEY})
    assert status < 300, (method, path, status, raw[:300])
    return json.loads(raw) if raw else None


def sql(query):
    """Rows of `query` on the benchmark database."""
    if DB.startswith("sqlite://"):
        c = sqlite3.connect(DB[len("sqlite://"):])
        rows = c.execute(query).fetchall()
        c.close()
        return rows
    out = subprocess.run(["psql", DB, "-XAtF", "\t", "-c", query], check=True, capture_output=True, text=True)
    return [tuple(l.split("\t")) for l in out.stdout.splitlines() if l]


def setup():
    member = api("POST", "/api/members/sync", {"email": EMAIL, "role": "employer"})["data"]["member"]["id"]
    ids = []
    for page in range(1, OWNED // 100 + 1):
        ids += [j["id"] for j in api("GET", f"/api/jobs?per_page=100&page={page}")["data"]]

    def own(job):
        api("PATCH", f"/api/jobs/{job}", {"owner_user_id": member})

    def apply(i):
        api("POST", f"/api/jobs/{ids[i % len(ids)]}/applications",
            {"name": f"Applicant {i}", "email": EMAIL, "cover_letter": "I would like to apply."})

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(own, ids))
        list(pool.map(apply, range(OWNED)))
    at = (datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
          - datetime.timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
    api("POST", "/api/analytics/events", {"events": [
        {"type": "job_view", "job_id": j, "visitor_id": f"v{i}", "occurred_at": at} for i, j in enumerate(ids)]})
    return member, ids


def sign_in():
    status, headers, body = call("GET", "/account/sign-in", headers={"accept": "text/html"})
    assert status == 200, status
    token = re.search(rb'name="_token" value="([^"]+)"', body).group(1).decode()
    form = f"_token={token}&email={EMAIL}&reference_code=".encode()
    status, _, body = call("POST", "/account/sign-in", form, {
        "content-type": "application/x-www-form-urlencoded",
        "origin": f"http://127.0.0.1:{PORT}",
        "accept": "text/html",
    })
    assert status == 200, (status, body[:300])
    # One line per row (psql prints a value's line breaks as they are).
    newline = "char(10)" if DB.startswith("sqlite://") else "chr(10)"
    text = sql(f"SELECT replace(text_body, {newline}, ' ') FROM mail_outbox WHERE kind = 'member_sign_in' "
               f"AND to_address = '{EMAIL}' ORDER BY created_at DESC LIMIT 1")[0][0]
    link = re.search(r"(/account/sign-in/[A-Za-z0-9_-]+)", text).group(1)
    status, headers, _ = call("GET", link, headers={"accept": "text/html"})
    assert status == 303, status
    for k, v in headers:
        if k.lower() == "set-cookie" and v.startswith("jobboard_member="):
            return v.split(";", 1)[0]
    raise SystemExit("no member cookie")


def plans(member):
    """The query plans of the account pages' statements, for this member."""
    sqlite = DB.startswith("sqlite://")
    org = sql(f"SELECT org_id FROM members WHERE email_lower = '{EMAIL}'")[0][0]
    mid = f"X'{member.replace('-', '')}'" if sqlite else f"'{member}'::uuid"
    job = sql(f"SELECT {'hex(id)' if sqlite else 'id'} FROM jobs WHERE owner_user_id = {mid} LIMIT 1")[0][0]
    jid = f"X'{job}'" if sqlite else f"'{job}'::uuid"
    fold = "lower(email)" if sqlite else \
        "translate(email, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
    statements = {
        "the member's jobs, a page": f"SELECT id, title, status FROM jobs WHERE org_id = {org} AND owner_user_id = {mid} ORDER BY created_at DESC, id DESC LIMIT 50 OFFSET 950",
        "the member's jobs, how many": f"SELECT COUNT(*) FROM jobs WHERE org_id = {org} AND owner_user_id = {mid}",
        "a page's views and apply clicks": f"SELECT job_id, SUM(job_views), SUM(apply_clicks) FROM analytics_daily WHERE org_id = {org} AND job_id IN ({jid}) GROUP BY job_id",
        "a page's applications": f"SELECT job_id, COUNT(*) FROM applications WHERE org_id = {org} AND job_id IN ({jid}) GROUP BY job_id",
        "applications made with the address": f"SELECT id FROM applications WHERE org_id = {org} AND {fold} = '{EMAIL}' ORDER BY created_at DESC, id DESC",
        "alerts of the address": f"SELECT id FROM job_alerts WHERE org_id = {org} AND email_lower = '{EMAIL}'",
        "the session": f"SELECT m.id FROM member_sessions s JOIN members m ON m.org_id = s.org_id AND m.id = s.member_id WHERE s.id_hash = X'00' AND s.org_id = {org}".replace("X'00'", "X'00'" if sqlite else "'\\x00'::bytea"),
    }
    if sqlite:
        # The plans of the SQLite this script links (the server bundles its own, newer
        # one; crates/jobboard/tests/api/accounts/plans.rs checks the server's).
        print(f"(SQLite {sqlite3.sqlite_version}, as Python links it)", file=sys.stderr)
    for name, q in statements.items():
        print(f"\n{name}:", file=sys.stderr)
        explain = "EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "
        for row in sql(explain + q):
            print("    " + " ".join(str(c) for c in row), file=sys.stderr)


member, _ = setup()
cookie = sign_in()
plans(member)
print(f"Cookie: {cookie}")
