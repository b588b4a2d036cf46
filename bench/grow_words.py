#!/usr/bin/env python3
"""Writes the word lists of bench/seed.py's jobs for bench/grow.lua (standard library only).

    grow_words.py > words.txt

One list per line: its name, a tab, its words separated by `|` (title levels, fields and
roles, cities, job types, description words, company names), so that the jobs posted
through the API are like the seeded ones and bench/search_mix.py's searches find them.
"""

import random
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import seed  # noqa: E402

vocab, companies = seed.word_lists(random.Random(42))
lists = {
    "levels": seed.LEVELS,
    "fields": seed.FIELDS,
    "roles": seed.ROLES,
    "cities": seed.CITIES,
    "types": seed.TYPES,
    "vocab": vocab,
    "companies": companies,
}
for name, words in lists.items():
    print(name + "\t" + "|".join(words))
