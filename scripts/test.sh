#!/usr/bin/env bash
# Runs the whole test suite: unit tests and every integration test on SQLite and on
# PostgreSQL. Starts a throwaway PostgreSQL on 127.0.0.1 (installing Debian's package when
# missing) unless JOBBOARD_TEST_POSTGRES_URL already points at one.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${JOBBOARD_TEST_POSTGRES_URL:-}" ]; then
  eval "$(scripts/pg-start.sh --export)"
  trap 'scripts/pg-stop.sh >/dev/null 2>&1 || true' EXIT
fi
export JOBBOARD_TEST_POSTGRES_URL
# The reference libraries some tests verify against (a test prints SKIPPED without them).
scripts/test-tools.sh || echo "warning: test tools not installed; their tests print SKIPPED" >&2
cargo test --workspace "$@"
