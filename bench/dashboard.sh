#!/usr/bin/env bash
# Benchmark of the dashboard's heaviest pages at 1,000,000 jobs, signed in: the jobs list
# (tabs, a deep page, a search) and analytics over 12 months (365 days of ingested views),
# beside the API calls that read the same data, in the same run. The settings of
# bench/jobs.sh apply (BENCH_KEEP, BENCH_BACKENDS, BENCH_JOBS, ...).
set -euo pipefail
BENCH_SET=dashboard exec "$(dirname "$0")/jobs.sh" "$@"
