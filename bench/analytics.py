#!/usr/bin/env python3
"""Analytics benchmark: ingest rate and read latency over a year of data for 10,000 jobs.

Starts the release binary on a fresh database (SQLite by default, PostgreSQL with
--database postgres://...), creates the jobs through POST /api/jobs, ingests one job view per
job per day for --days days through POST /api/analytics/events (1,000 events per request,
--clients concurrent clients) and times it, then times GET /api/analytics?period=12mo and
GET /api/analytics/jobs?jobIds=<100 ids>&period=12mo sequentially.

With --key KEY and the --database of an earlier run, it only times the reads over the data
already there (for the first 100 jobs listed), e.g. to compare two builds on the same data.

Only 127.0.0.1 is contacted. Standard library only.

    cargo build --release && python3 bench/analytics.py [--database URL] [--jobs N] [--days N]
    python3 bench/analytics.py --database URL --key KEY [--reads N]     # reads only
"""

import argparse
import concurrent.futures
import datetime
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Client:
    def __init__(self, port, key):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"x-api-key": key, "content-type": "application/json"}

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        self.conn.request(method, path, body=data, headers=self.headers)
        res = self.conn.getresponse()
        payload = res.read()
        if res.status >= 300:
            raise RuntimeError(f"{method} {path}: {res.status} {payload[:300]!r}")
        return json.loads(payload) if payload else None


def percentile(values, p):
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(p / 100 * (len(values) - 1))))
    return values[k]


def read(port, key, job_ids, reads):
    c = Client(port, key)
    ids = ",".join(job_ids[:100])
    for name, path in [("GET /api/analytics?period=12mo", "/api/analytics?period=12mo"),
                       ("GET /api/analytics?period=30d", "/api/analytics?period=30d"),
                       ("GET /api/analytics/jobs (100 ids, 12mo)", f"/api/analytics/jobs?jobIds={ids}&period=12mo"),
                       ("GET /api/analytics/jobs (100 ids, 30d)", f"/api/analytics/jobs?jobIds={ids}&period=30d")]:
        times = []
        for _ in range(reads):
            t = time.perf_counter()
            body = c.call("GET", path)
            times.append(time.perf_counter() - t)
        visitors = body["data"]["visitors"]
        if isinstance(visitors, dict):
            visitors = sum(visitors.values())
        print(f"{name}: p50 {statistics.median(times) * 1e3:.1f} ms, p99 {percentile(times, 99) * 1e3:.1f} ms "
              f"({reads} sequential requests; visitors {visitors}, exact {body['meta'].get('visitors_exact', True)})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--database", default="")
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--reads", type=int, default=200)
    ap.add_argument("--key", default="", help="reads only, over the data of --database")
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "jobboard"))
    args = ap.parse_args()

    db = args.database or f"sqlite://{tempfile.mkdtemp(prefix='jobboard-bench-')}/bench.db"
    env = dict(os.environ, RUST_LOG="warn")
    run = lambda *a: subprocess.run([args.bin, "--database", db, *a], check=True, capture_output=True, text=True, env=env).stdout.strip().splitlines()[-1]
    if args.key:
        key = args.key
    else:
        org = run("orgs", "create", "--name", "bench")
        key = run("keys", "create", "--org", org, "--read-limit", "100000", "--write-limit", "100000")
    port = free_port()
    server = subprocess.Popen([args.bin, "--database", db, "serve", "--listen", f"127.0.0.1:{port}", "--no-worker"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        local = threading.local()

        def client():
            if not hasattr(local, "c"):
                local.c = Client(port, key)
            return local.c

        def create_job(i):
            return client().call("POST", "/api/jobs", {
                "title": f"Engineer {i}", "description": "<p>Build things.</p>", "company_name": f"Company {i % 500}",
                "status": "active"})["data"]["id"]

        if args.key:
            job_ids = [j["id"] for j in client().call("GET", "/api/jobs?per_page=100&status=all")["data"]]
            read(port, key, job_ids, args.reads)
            return
        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
            job_ids = list(pool.map(create_job, range(args.jobs)))
        print(f"created {len(job_ids)} jobs in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

        today = datetime.datetime.now(datetime.timezone.utc).date()
        batches = []
        for d in range(args.days):
            day = today - datetime.timedelta(days=d)
            at = f"{day.isoformat()}T12:00:00Z"
            for start in range(0, len(job_ids), 1000):
                chunk = job_ids[start:start + 1000]
                batches.append([{"type": "job_view", "job_id": j, "visitor_id": f"v{(i + d) % 5000}", "occurred_at": at}
                                for i, j in enumerate(chunk, start)])

        def send(batch):
            t = time.perf_counter()
            client().call("POST", "/api/analytics/events", {"events": batch})
            return time.perf_counter() - t

        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
            lat = list(pool.map(send, batches))
        elapsed = time.perf_counter() - t0
        events = sum(len(b) for b in batches)
        print(f"ingest: {events} events in {len(batches)} requests, {elapsed:.1f} s: {events / elapsed:,.0f} events/s; "
              f"request p50 {statistics.median(lat) * 1e3:.1f} ms, p99 {percentile(lat, 99) * 1e3:.1f} ms")

        read(port, key, job_ids, args.reads)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
