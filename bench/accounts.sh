#!/usr/bin/env bash
# Benchmark of the members' pages at 1,000,000 jobs: an employer who owns 1,000 jobs and
# made 1,000 applications, signed in through the mailed link: the account, its jobs list
# with their counts (first and last page) and its export, beside the API list, in the same
# run, with the query plans of their statements. The settings of bench/jobs.sh apply
# (BENCH_KEEP, BENCH_BACKENDS, BENCH_JOBS, ...).
set -euo pipefail
BENCH_SET=accounts exec "$(dirname "$0")/jobs.sh" "$@"
