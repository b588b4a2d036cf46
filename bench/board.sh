#!/usr/bin/env bash
# Benchmark of the public board at 1,000,000 jobs: `/` page 1, a search, a job page and
# sitemap.xml, cached and uncached, beside GET /api/jobs in the same run, and the memory a
# full sitemap read costs the server. The settings of bench/jobs.sh apply (BENCH_KEEP,
# BENCH_BACKENDS, BENCH_JOBS, ...).
set -euo pipefail
BENCH_SET=board exec "$(dirname "$0")/jobs.sh" "$@"
