#!/usr/bin/env python3
"""The cost of the full-text index alone for a mix of searches, outside the server (SQLite).

    search_cost.py DB ORG_ID MIX_FILE [N]

Replays the first N (400) searches of MIX_FILE (bench/search_mix.py) against DB's
`jobs_find` index as the server runs them (migration 0025, crates/domain/src/jobs/find.rs): for
the sticky and the other part of the list, a count and a page of 21, and prints the
distribution of the time per search and the slowest searches. Standard library only; the
database is opened read-only.
"""

import re
import sqlite3
import statistics
import sys
import time
import urllib.parse

TEXT = "{title company_name description_text}"


def phrase(s):
    return '"' + s.replace('"', '""') + '"'


def any_tag(tags):
    return "tags : (" + " OR ".join(phrase(t) for t in tags) + ")"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    db, org, mix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 400
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    c.execute("PRAGMA cache_size = -1000")
    locations = c.execute("SELECT location, id FROM job_locations WHERE org_id = ?", (org,)).fetchall()
    results = []
    for line in open(mix).read().split()[:n]:
        q = dict(urllib.parse.parse_qsl(line.split("?", 1)[1]))
        conds = []
        if "search" in q:
            words = [w for w in re.split(r"\W+", q["search"].lower()) if w]
            conds.append(TEXT + " : (" + " ".join(phrase(w) + "*" for w in words) + ")")
        if "job_types" in q:
            conds.append(any_tag("0t" + t.replace("-", "") for t in q["job_types"].split(",")))
        if "is_remote" in q:
            conds.append(any_tag(["0r1" if q["is_remote"] == "true" else "0r0"]))
        if "locations" in q:
            ids = [i for loc, i in locations
                   if any(p in loc.lower() for p in q["locations"].split(","))]
            if not ids:
                continue
            conds.append(any_tag(f"0l{i}" for i in ids))
        start = time.perf_counter()
        total = 0
        for sticky in (1, 0):
            expr = " AND ".join([any_tag([f"0o{org}sactivek{sticky}"])] + conds)
            total += c.execute("SELECT count(*) FROM jobs_find WHERE jobs_find MATCH ?", (expr,)).fetchone()[0]
            c.execute("SELECT rowid FROM jobs_find WHERE jobs_find MATCH ? ORDER BY rowid DESC LIMIT 21",
                      (expr,)).fetchall()
        results.append(((time.perf_counter() - start) * 1000, total, line))
    results.sort()
    ms = [r[0] for r in results]
    matches = sorted(r[1] for r in results)
    print(f"{len(ms)} searches: median {statistics.median(ms):.1f} ms, p90 {ms[int(len(ms) * .9)]:.1f} ms, "
          f"p99 {ms[int(len(ms) * .99)]:.1f} ms, mean {statistics.mean(ms):.1f} ms; "
          f"matches: median {statistics.median(matches):.0f}, p90 {matches[int(len(matches) * .9)]}")
    print("slowest:")
    for t, total, line in results[-5:]:
        print(f"  {t:.1f} ms, {total} matches: {line}")


if __name__ == "__main__":
    main()
