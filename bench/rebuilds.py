#!/usr/bin/env python3
"""Wears a board's search index down again and again and samples the server after each
rebuild (bench/rebuilds.sh runs it; standard library only).

    rebuilds.py BASE KEY PID REBUILDS

Each round posts CHURN jobs (REBUILDS_CHURN, 3,000) through the API with 4 connections
and deletes the round before's (round 0 only posts, and builds the index): the board keeps its size and its index forgets more jobs
than it keeps without a rebuild (1,000 + a tenth of its jobs). Then it searches until
/metrics counts one more rebuild for wear (60 s at most) and prints one line: the round,
the server's resident memory and its peak (MB), the index's bytes, the rebuilds so far.
Job bodies are like bench/posting.lua's (GROW_WORDS: bench/grow_words.py's lists).
"""

import http.client
import json
import os
import random
import sys
import threading
import time
import urllib.parse

BASE, KEY, PID, ROUNDS = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
CHURN = int(os.environ.get("REBUILDS_CHURN", "3000"))
TOKEN = os.environ["JOBBOARD_METRICS_TOKEN"]
HOST = urllib.parse.urlparse(BASE)

lists = {}
with open(os.environ["GROW_WORDS"]) as f:
    for line in f:
        name, words = line.rstrip("\n").split("\t")
        lists[name] = words.split("|")


def job_body(rng):
    pick = lambda name: rng.choice(lists[name])  # noqa: E731
    words = " ".join(pick("vocab") for _ in range(rng.randint(40, 80)))
    return json.dumps({
        "title": f"{pick('levels')} {pick('fields')} {pick('roles')}",
        "company_name": pick("companies"),
        "location": pick("cities"),
        "job_type": pick("types"),
        "is_remote": rng.random() < 0.25,
        "status": "active",
        "description": f"<p>{words}</p>",
    })


def connection():
    return http.client.HTTPConnection(HOST.hostname, HOST.port, timeout=30)


def call(conn, method, path, body=None, headers=None):
    h = {"x-api-key": KEY, "Content-Type": "application/json", **(headers or {})}
    conn.request(method, path, body=body, headers=h)
    r = conn.getresponse()
    data = r.read()
    if r.status >= 300:
        raise SystemExit(f"{method} {path}: {r.status} {data[:200]!r}")
    return data


def in_parallel(work, items):
    """Runs work(conn, rng, item) over items on 4 connections; returns the results in order."""
    out = [None] * len(items)

    def run(k):
        conn, rng = connection(), random.Random(k + len(items))
        for i in range(k, len(items), 4):
            out[i] = work(conn, rng, items[i])
        conn.close()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def post(conn, rng, _):
    return json.loads(call(conn, "POST", "/api/jobs", job_body(rng)))["data"]["id"]


def delete(conn, _rng, job_id):
    call(conn, "DELETE", f"/api/jobs/{job_id}")


def metric(name):
    conn = connection()
    conn.request("GET", "/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    text = conn.getresponse().read().decode()
    conn.close()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def status(field):
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
    return 0


WORN = 'jobboard_search_index_builds_total{cause="worn"}'
search = connection()
print("round rss_mb peak_mb index_bytes rebuilds_worn seconds", flush=True)
previous = []
for n in range(ROUNDS + 1):
    started = time.monotonic()
    builds = metric(WORN)
    posted = in_parallel(post, list(range(CHURN)))
    in_parallel(delete, previous)
    previous = posted
    if n > 0:
        deadline = time.monotonic() + 60
        while metric(WORN) <= builds:
            if time.monotonic() > deadline:
                raise SystemExit(f"round {n}: no rebuild for wear within 60 s")
            call(search, "GET", "/api/jobs?search=engineer", headers={"Cache-Control": "no-cache"})
            time.sleep(0.05)
    else:
        call(search, "GET", "/api/jobs?search=engineer", headers={"Cache-Control": "no-cache"})
    print(n, status("VmRSS"), status("VmHWM"), int(metric("jobboard_search_index_bytes")),
          int(metric(WORN)), round(time.monotonic() - started, 1), flush=True)
