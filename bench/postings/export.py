#!/usr/bin/env python3
"""Writes bench/seed.py's jobs and bench/search_mix.py's searches for the postings bench.

    export.py N JOBS.tsv QUERIES.txt [QUERY_COUNT]

JOBS.tsv has one job per line, in creation order (the order seed.py inserts them): status,
job type, location, remote (0/1), title, company name, description text, tab-separated.
QUERIES.txt has one request path per line, as search_mix.py writes them (2,000 by default).
"""

import sys

sys.path.insert(0, __file__.rsplit("/", 2)[0])
import search_mix  # noqa: E402
import seed  # noqa: E402


def main():
    n, jobs, queries = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    with open(jobs, "w") as out:
        for r in seed.rows(n, 1):
            out.write("\t".join([r["status"], r["job_type"], r["location"],
                                 "1" if r["is_remote"] else "0", r["title"],
                                 r["company_name"], r["description_text"]]) + "\n")
    with open(queries, "w") as out:
        for p in search_mix.mix(count):
            out.write(p + "\n")


if __name__ == "__main__":
    main()
