#!/usr/bin/env python3
"""Turns the search mix's API paths into Datasette's equivalents (standard library only).

    datasette_mix.py DATABASE_NAME NOW_MICROS < api-paths.txt > datasette-paths.txt

Each line of bench/search_mix.py (`/api/jobs?search=...&job_types=...&locations=...&
is_remote=...`) becomes the same list of one organization's jobs as Datasette 0.65
serves it from the same SQLite file: `_search` over the jobs' full-text table (each word
a prefix, as the API matches them), the organization (`{org}`, put in by
bench/boards.lua), active jobs not past their expiry at NOW_MICROS, the job types, the
locations (any of them, as a case-insensitive substring), remoteness, newest first,
20 a page, with the total Datasette counts. The one difference in what is asked: the
API lists sticky jobs first, Datasette sorts by one column.
"""

import sys
import urllib.parse


def translate(path, now):
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
    out = [
        ("org_id", "{org}"),
        ("status", "active"),
        ("_where", f"(expires_at IS NULL OR expires_at > {now})"),
    ]
    if "search" in query:
        words = ["".join(c for c in w if c.isalnum()) for w in query["search"][0].split()]
        out.append(("_search", " ".join(f"{w}*" for w in words if w)))
        out.append(("_searchmode", "raw"))
    if "job_types" in query:
        out.append(("job_type__in", query["job_types"][0]))
    if "locations" in query:
        likes = [
            "lower(location) LIKE '%" + loc.lower().replace("'", "''") + "%'"
            for loc in query["locations"][0].split(",")
        ]
        out.append(("_where", "(" + " OR ".join(likes) + ")"))
    if "is_remote" in query:
        out.append(("is_remote", "1" if query["is_remote"][0] == "true" else "0"))
    out += [("_sort_desc", "created_at"), ("_size", "20"), ("_col", "title")]
    # `{org}` stays as it is, for bench/boards.lua to fill in.
    return "/" + DATABASE + "/jobs.json?" + urllib.parse.urlencode(out, safe="{}")


if __name__ == "__main__":
    DATABASE, now = sys.argv[1], int(sys.argv[2])
    for line in sys.stdin:
        line = line.strip()
        if line:
            print(translate(line, now))
