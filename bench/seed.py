#!/usr/bin/env python3
"""Seeds N jobs into each organization of a migrated jobboard database (standard library only).

    seed.py sqlite PATH ORGS N
    seed.py postgres URL ORGS N      (streams CSV into `psql \\copy`)

ORGS is one organization's id, or a range FIRST-LAST of ids (each gets N jobs of its own,
with the same word lists; one organization gets the same jobs whatever the range).

The data is deterministic (fixed random seed): titles like "Senior Rust Engineer" from word
lists, about 400 companies, 30 locations, 6 job types, a quarter remote, 96% active (0.2%
sticky, 10% with a future expiry), the rest pending, draft or expired; descriptions of 40 to
80 words; creation times spread over the last year, ids UUID v7 in creation order.
"""

import csv
import io
import os
import random
import subprocess
import sys
import time

LEVELS = ["Senior", "Junior", "Lead", "Principal", "Staff", "Head", "Assistant", "Associate"]
FIELDS = ["Rust", "Python", "Data", "Product", "Frontend", "Backend", "Cloud", "Security",
          "Marketing", "Sales", "Finance", "Support", "Mobile", "Platform", "Quality", "Operations"]
ROLES = ["Engineer", "Developer", "Designer", "Manager", "Analyst", "Nurse", "Teacher",
         "Accountant", "Chef", "Driver", "Consultant", "Architect", "Scientist", "Technician",
         "Writer", "Recruiter", "Electrician", "Pharmacist", "Mechanic", "Barista"]
CITIES = ["Berlin", "Paris", "London", "Madrid", "Rome", "Lisbon", "Vienna", "Prague", "Warsaw",
          "Amsterdam", "Brussels", "Dublin", "Oslo", "Stockholm", "Helsinki", "Copenhagen",
          "Zurich", "Munich", "Hamburg", "Lyon", "Milan", "Barcelona", "Porto", "Krakow",
          "Budapest", "Athens", "New York", "Toronto", "Austin", "Seattle"]
TYPES = ["full-time", "part-time", "contract", "internship", "temporary", "casual"]
SYL = ["ka", "lo", "mi", "ra", "ten", "vo", "zu", "pel", "dra", "sin", "tor", "mab", "qui",
       "fen", "gor", "lis", "nar", "osk", "pru", "wel"]


def word(rng):
    return "".join(rng.choice(SYL) for _ in range(rng.randint(2, 3)))


def word_lists(rng):
    """The description words (2,000) and the company names (about 400) of the jobs."""
    vocab = sorted({word(rng) for _ in range(3000)})[:2000]
    companies = sorted({f"{word(rng).capitalize()} {rng.choice(['Labs', 'GmbH', 'Inc', 'Ltd', 'Group'])}"
                        for _ in range(400)})
    return vocab, companies


def rows(n, org, salt=None):
    """N jobs of organization ORG; SALT (when given) makes them differ from other sets'."""
    rng = random.Random(42)
    vocab, companies = word_lists(rng)
    if salt is not None:
        rng = random.Random(salt)
    now_us = int(time.time() * 1_000_000)
    year_us = 365 * 86400 * 1_000_000
    step = year_us // n
    for i in range(n):
        created = now_us - year_us + i * step
        ms = created // 1000
        rand = rng.getrandbits(74)
        v = (ms << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62) | (rand & ((1 << 62) - 1))
        uid = v.to_bytes(16, "big")
        title = f"{rng.choice(LEVELS)} {rng.choice(FIELDS)} {rng.choice(ROLES)}"
        company = rng.choice(companies)
        words = [rng.choice(vocab) for _ in range(rng.randint(40, 80))]
        text = " ".join(words)
        r = rng.random()
        status = "active" if r < 0.96 else ("pending" if r < 0.975 else ("draft" if r < 0.99 else "expired"))
        expires = now_us + year_us if rng.random() < 0.10 else None
        yield {
            "id": uid,
            "org_id": org,
            "title": title,
            "description": f"<p>{text}</p>",
            "description_text": text,
            "company_name": company,
            "slug": f"job-{i}",
            "job_type": rng.choice(TYPES),
            "location": rng.choice(CITIES),
            "is_remote": rng.random() < 0.25,
            "is_sticky": rng.random() < 0.002,
            "contact_email": f"jobs{i % 97}@example.com",
            "expires_at": expires,
            "status": status,
            "created_at": created,
        }


COLS = ["id", "org_id", "title", "description", "description_text", "company_name", "slug",
        "job_type", "location", "is_remote", "is_sticky", "contact_email", "expires_at",
        "status", "created_at", "updated_at"]


def all_rows(orgs, n):
    """N jobs of each organization of ORGS (the same ones as `rows` for one organization)."""
    for org in orgs:
        yield from rows(n, org, None if len(orgs) == 1 else org)


def seed_sqlite(path, orgs, n):
    import sqlite3
    db = sqlite3.connect(path)
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -200000")
    sql = f"INSERT INTO jobs ({', '.join(COLS)}) VALUES ({', '.join('?' * len(COLS))})"
    # The change log's trigger stamps rows with unixepoch('subsec'), which the SQLite
    # Python links may predate; a bulk load logs no changes (indexes are built from the
    # table), so the trigger is set aside and put back as it was.
    trigger = db.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'job_changes_insert'").fetchone()
    if trigger:
        db.execute("DROP TRIGGER job_changes_insert")
    batch = []
    with db:
        for r in all_rows(orgs, n):
            batch.append((r["id"], r["org_id"], r["title"], r["description"], r["description_text"],
                          r["company_name"], r["slug"], r["job_type"], r["location"],
                          int(r["is_remote"]), int(r["is_sticky"]), r["contact_email"],
                          r["expires_at"], r["status"], r["created_at"], r["created_at"]))
            if len(batch) == 10_000:
                db.executemany(sql, batch)
                batch.clear()
        if batch:
            db.executemany(sql, batch)
    if trigger:
        db.execute(trigger[0])
        db.commit()
    # The full-text index of the schema (jobs_find from migration 0025, jobs_fts before).
    fts = db.execute("SELECT name FROM sqlite_master WHERE name IN ('jobs_find', 'jobs_fts')").fetchone()[0]
    db.execute(f"INSERT INTO {fts}({fts}) VALUES ('optimize')")
    db.execute("ANALYZE")
    db.close()


def ts(us):
    if us is None:
        return ""
    t = time.gmtime(us // 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{us % 1_000_000:06d}Z"


def seed_postgres(url, orgs, n):
    def psql(*args, **kw):
        return subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-q", *args], check=True, **kw)

    # Bulk load without the per-row counter trigger and the search index; both are rebuilt
    # after (the same definitions as the migration).
    psql("-c", "ALTER TABLE jobs DISABLE TRIGGER job_counts_insert_delete",
         "-c", "DROP INDEX IF EXISTS jobs_search")
    copy = subprocess.Popen(
        ["psql", url, "-v", "ON_ERROR_STOP=1", "-q", "-c",
         f"\\copy jobs ({', '.join(COLS)}) FROM STDIN WITH (FORMAT csv)"],
        stdin=subprocess.PIPE)
    out = io.TextIOWrapper(copy.stdin, encoding="utf-8")
    w = csv.writer(out)
    for r in all_rows(orgs, n):
        u = r["id"].hex()
        w.writerow([f"{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:]}", r["org_id"], r["title"],
                    r["description"], r["description_text"], r["company_name"], r["slug"],
                    r["job_type"], r["location"], "t" if r["is_remote"] else "f",
                    "t" if r["is_sticky"] else "f", r["contact_email"], ts(r["expires_at"]),
                    r["status"], ts(r["created_at"]), ts(r["created_at"])])
    out.close()
    if copy.wait() != 0:
        sys.exit("copy failed")
    psql("-c", "ALTER TABLE jobs ENABLE TRIGGER job_counts_insert_delete",
         "-c", "DELETE FROM job_counts",
         "-c", "INSERT INTO job_counts (org_id, status, n) SELECT org_id, status, COUNT(*) FROM jobs GROUP BY 1, 2")
    psql("-c", "SET maintenance_work_mem = '512MB'",
         "-c", "CREATE INDEX jobs_search ON jobs USING GIN (search)")
    psql("-c", "VACUUM ANALYZE jobs")
    psql("-c", "VACUUM ANALYZE job_counts")


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("sqlite", "postgres"):
        sys.exit(__doc__)
    backend, target, n = sys.argv[1], sys.argv[2], int(sys.argv[4])
    first, _, last = sys.argv[3].partition("-")
    orgs = list(range(int(first), int(last or first) + 1))
    start = time.time()
    if backend == "sqlite":
        seed_sqlite(target, orgs, n)
    else:
        seed_postgres(target, orgs, n)
    print(f"seeded {n} jobs into each of {len(orgs)} organizations ({backend}) in {time.time() - start:.0f} s",
          file=sys.stderr)


if __name__ == "__main__":
    os.environ.setdefault("PGOPTIONS", "-c client_min_messages=warning")
    main()
