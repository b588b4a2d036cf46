#!/usr/bin/env python3
"""Writes a Greenhouse job board response (`GET /v1/boards/{board}/jobs?content=true`, the
shape tests/fixtures/imports/greenhouse.json has) of N jobs to PATH, deterministic; with
CHANGED (a percentage), that share of the jobs has a new title and description.

    greenhouse_board.py N PATH [CHANGED]
"""

import html
import json
import random
import sys

n, path = int(sys.argv[1]), sys.argv[2]
changed = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
rng = random.Random(28)
WORDS = ("bake bread pastry oven dough shift team customers kitchen clean order stock "
         "early morning weekend recipe quality flour butter sugar yeast night lead").split()
CITIES = ["Berlin", "Paris", "Lyon", "Vienna", "Lisbon", "Remote - Europe", "Madrid", "Porto"]
jobs = []
step = int(100 / changed) if changed else 0
for i in range(n):
    new = bool(step) and i % step == 0
    words = " ".join(rng.choice(WORDS) for _ in range(150))
    body = f"<p>{words}</p><ul><li>{words[:80]}</li><li>{words[80:160]}</li></ul>"
    if new:
        body += "<p>Updated.</p>"
    jobs.append({
        "absolute_url": f"https://boards.greenhouse.io/crumbs/jobs/{4000000 + i}",
        "data_compliance": [],
        "internal_job_id": 3000000 + i,
        "location": {"name": CITIES[i % len(CITIES)]},
        "metadata": None,
        "id": 4000000 + i,
        "updated_at": "2026-11-20T10:55:28-05:00",
        "requisition_id": f"REQ-{i}",
        "title": f"Baker {i}" + (" (updated)" if new else ""),
        "company_name": "Crumbs",
        "first_published": "2026-10-01T09:00:00-04:00",
        "content": html.escape(body),
        "departments": [],
        "offices": [],
    })
with open(path, "w") as f:
    json.dump({"jobs": jobs, "meta": {"total": n}}, f)
