#!/usr/bin/env bash
# Webhook delivery benchmark: deliveries per second to a local receiver answering 200,
# write-to-arrival latency (p50, p99), and the rate of nine targets while a tenth answers
# only after 10 s; on SQLite and, when JOBBOARD_TEST_POSTGRES_URL is set, on PostgreSQL.
# Prints a Markdown table; BENCHMARKS.md holds the figures and this command.
#
#   bench/webhooks.sh [events]        (default 300 events per burst, 10 deliveries each)
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS="${1:-300}"
cargo build --quiet --release --example webhook_bench
BIN="${CARGO_TARGET_DIR:-target}/release/examples/webhook_bench"
echo "| backend | scenario | deliveries | deliveries/s | p50 ms | p99 ms |"
echo "|---|---|---|---|---|---|"
RUST_LOG=error "$BIN" sqlite "$EVENTS"
if [ -n "${JOBBOARD_TEST_POSTGRES_URL:-}" ]; then
  RUST_LOG=error "$BIN" postgres "$EVENTS"
fi
