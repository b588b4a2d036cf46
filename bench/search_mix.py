#!/usr/bin/env python3
"""Writes a mix of distinct job searches, one request path per line (standard library only).

    search_mix.py N > paths.txt

The searches are what visitors of a board built by bench/seed.py would type: one word or
two (title words, company and description words, whole or as a prefix of three letters or
more), most with filters (job types, locations as whole or partial city names, remote or
not), some with filters only. Every line is distinct; the mix is deterministic (fixed seed).
bench/search_mix.lua sends each line once per pass, with `Cache-Control: no-cache`.
"""

import random
import sys
import urllib.parse

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import seed  # noqa: E402  (the same word lists as the seeded data)


def vocabulary():
    """The description words and company names of seed.py's data."""
    rng = random.Random(42)
    vocab = sorted({seed.word(rng) for _ in range(3000)})[:2000]
    companies = sorted({seed.word(rng) for _ in range(400)})
    return vocab, companies


def mix(n):
    rng = random.Random(7)
    vocab, companies = vocabulary()
    title_words = [w.lower() for w in seed.LEVELS + seed.FIELDS + seed.ROLES]
    cities = [c.lower() for c in seed.CITIES]

    def a_word():
        r = rng.random()
        w = rng.choice(title_words if r < 0.45 else vocab if r < 0.9 else companies)
        if len(w) > 4 and rng.random() < 0.3:
            w = w[: rng.randint(3, len(w) - 1)]
        return w

    seen = set()
    while len(seen) < n:
        q = []
        r = rng.random()
        if r < 0.9:
            words = [a_word() for _ in range(1 if rng.random() < 0.6 else 2)]
            q.append(("search", " ".join(words)))
        if rng.random() < 0.45 or r >= 0.9:
            q.append(("job_types", ",".join(rng.sample(seed.TYPES, rng.randint(1, 2)))))
        if rng.random() < 0.3:
            picked = rng.sample(cities, rng.randint(1, 2))
            picked = [c if rng.random() < 0.7 else c[: rng.randint(3, len(c))] for c in picked]
            q.append(("locations", ",".join(picked)))
        if rng.random() < 0.25:
            q.append(("is_remote", rng.choice(["true", "false"])))
        if not q:
            continue
        path = "/api/jobs?" + urllib.parse.urlencode(q)
        if path not in seen:
            seen.add(path)
            yield path


if __name__ == "__main__":
    for p in mix(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000):
        print(p)
