"""Posts jobs through the API at a steady rate until stopped (SIGTERM), then writes how
many it posted, and how many were refused, to the file named by its third argument.

Usage: poster.py BASE_URL KEY OUT_FILE [JOBS_PER_SECOND]   (loopback addresses only)
"""

import json
import signal
import sys
import time
import urllib.request

base, key, out = sys.argv[1], sys.argv[2], sys.argv[3]
rate = float(sys.argv[4]) if len(sys.argv) > 4 else 10.0
assert base.startswith("http://127.0.0.1:"), "loopback only"
posted = refused = 0
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
start = time.monotonic()
while not stop:
    body = json.dumps({
        "title": f"Posted while measured {posted + refused}",
        "company_name": "Acme",
        "location": "Berlin",
        "job_type": "full-time",
        "status": "active",
        "description": "<p>Build and run the systems our customers rely on, with a small "
                       "team that owns what it ships, in a city with a river.</p>",
    }).encode()
    req = urllib.request.Request(f"{base}/api/jobs", data=body, method="POST", headers={
        "x-api-key": key, "content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            posted += r.status == 201
    except Exception:
        refused += 1
    # The next post is due at a steady pace, whatever this one took.
    due = start + (posted + refused) / rate
    time.sleep(max(0.0, due - time.monotonic()))
with open(out, "w") as f:
    f.write(f"{posted} {refused}\n")
