#!/usr/bin/env bash
# The memory a server keeps across rebuilds of a search index for wear: what the soak
# (bench/soak.sh) showed rising in steps, in minutes instead of an hour.
#
#   bench/rebuilds.sh                      # SQLite, 20 rebuilds
#   REBUILDS=40 bench/rebuilds.sh
#   REBUILDS_BACKEND=postgres bench/rebuilds.sh   # (JOBBOARD_BENCH_POSTGRES_URL or
#                                                 # JOBBOARD_TEST_POSTGRES_URL)
#
# One `jobboard serve` (release build, every role) on 127.0.0.1, a board grown through
# the API as the soak's is (15 s of bench/grow.lua: about 13,000 jobs), then
# bench/rebuilds.py: rounds of posting 3,000 jobs and deleting the round before's, each
# ending with a rebuild for wear; one line per round with the server's resident memory,
# then the median time a rebuild took (from the server's log).
#
# Needs: cargo, wrk, curl, python3 (standard library); psql for PostgreSQL. Traffic stays
# on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. bench/lib.sh
export BENCH_DIR="$ROOT/bench"

ROUNDS="${REBUILDS:-20}"
BACKEND="${REBUILDS_BACKEND:-sqlite}"
PG_URL="${JOBBOARD_BENCH_POSTGRES_URL:-${JOBBOARD_TEST_POSTGRES_URL:-}}"
export JOBBOARD_METRICS_TOKEN="bench-metrics-token-0123456789"

bench_bin
bench_workdir rebuilds
python3 bench/grow_words.py >"$WORK/words.txt"
export GROW_WORDS="$WORK/words.txt"

bench_database "$BACKEND" rebuilds
read -r _org key < <(bench_org_and_key "$BIN" "$db" "$raise")
port=$(free_port)
base="http://127.0.0.1:$port"
RUST_LOG=warn,jobboard_domain::jobs::indexes=info "$BIN" --database "$db" serve --listen "127.0.0.1:$port" >"$WORK/server.log" 2>&1 &
server=$!
PIDS+=("$server")
wait_up "$base/healthz"

wrk -t2 -c4 -d15s -H "x-api-key: $key" -s bench/grow.lua "$base" >/dev/null
python3 bench/rebuilds.py "$base" "$key" "$server" "$ROUNDS"
# How long the rebuilds for wear took (the server's log of each build).
sed 's/\x1b\[[0-9;]*m//g' "$WORK/server.log" | grep 'search index built' | grep -E 'cause="?worn' |
  grep -o 'ms=[0-9]*' | cut -d= -f2 | median | awk '{print "median rebuild for wear: " $1 " ms"}'
