#!/usr/bin/env python3
"""Prepares a benchmark server for the dashboard's pages (BENCH_SET=dashboard of
bench/jobs.sh): adds a staff user to the key's organization with the command line, signs
it in through the sign-in form, and ingests a year of analytics (job views and page views
of 1,000 jobs every day) through POST /api/analytics/events, so that the 12-month analytics
page draws 365 days. Prints the `Cookie:` header of the signed-in session.

Only 127.0.0.1 is contacted. Standard library only.

    python3 bench/dashboard_setup.py BIN DATABASE_URL PORT KEY
"""

import concurrent.futures
import datetime
import http.client
import json
import re
import subprocess
import sys

BIN, DB, PORT, KEY = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
PASSWORD = "benchmark password of the dashboard"
EMAIL = "bench-staff@example.com"


def call(method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
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


def org_of_key():
    listed = subprocess.run([BIN, "--database", DB, "orgs", "list"], check=True, capture_output=True, text=True)
    rows = [l.split("\t") for l in listed.stdout.splitlines() if l.strip()]
    bench = [r for r in rows if len(r) > 2 and r[2] == "bench"]
    return (bench or rows)[-1][0]


def add_user(org):
    users = subprocess.run([BIN, "--database", DB, "users", "list", "--org", org], capture_output=True, text=True)
    if EMAIL in users.stdout:
        return
    subprocess.run([BIN, "--database", DB, "users", "create", "--org", org, "--email", EMAIL],
                   input=PASSWORD + "\n", check=True, capture_output=True, text=True)


def cookies_of(headers, jar):
    for k, v in headers:
        if k.lower() == "set-cookie":
            name, value = v.split(";", 1)[0].split("=", 1)
            jar[name] = value


def sign_in():
    jar = {}
    status, headers, body = call("GET", "/dashboard/login", headers={"accept": "text/html"})
    assert status == 200, status
    cookies_of(headers, jar)
    csrf = re.search(rb'name="csrf" value="([^"]+)"', body).group(1).decode()
    form = f"email={EMAIL}&password={PASSWORD.replace(' ', '+')}&csrf={csrf}".encode()
    status, headers, _ = call("POST", "/dashboard/login", form, {
        "content-type": "application/x-www-form-urlencoded",
        "origin": f"http://127.0.0.1:{PORT}",
        "cookie": "; ".join(f"{k}={v}" for k, v in jar.items()),
    })
    assert status == 303, status
    cookies_of(headers, jar)
    return "; ".join(f"{k}={v}" for k, v in jar.items())


def seed_analytics():
    ids = []
    for page in range(1, 11):
        _, _, body = call("GET", f"/api/jobs?per_page=100&page={page}", headers={"x-api-key": KEY})
        ids += [j["id"] for j in json.loads(body)["data"]]
    # One moment of each of the last 365 days (never in the future).
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) - datetime.timedelta(minutes=1)
    batches = []
    for d in range(365):
        at = (now - datetime.timedelta(days=d)).isoformat().replace("+00:00", "Z")
        batches.append([{"type": "job_view", "job_id": j, "visitor_id": f"v{(i + d) % 5000}", "occurred_at": at}
                        for i, j in enumerate(ids)])
        batches.append([{"type": "page_view", "visitor_id": f"v{i}", "occurred_at": at} for i in range(200)])

    def send(batch):
        status, _, body = call("POST", "/api/analytics/events", {"events": batch}, {"x-api-key": KEY})
        assert status == 200, (status, body[:200])

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(send, batches))


add_user(org_of_key())
cookie = sign_in()
seed_analytics()
print(f"Cookie: {cookie}")
