#!/usr/bin/env bash
# Two builds of the server side by side: how fast each posts and reads, and how much
# memory it ends with, in alternating rounds of one run (a round of one, then of the other,
# BUILDS_ROUNDS times), each on a fresh database (SQLite, or PostgreSQL with
# BUILDS_BACKEND=postgres).
#
#   BUILD_A=path/to/jobboard BUILD_B=path/to/other/jobboard bench/builds.sh
#   BUILDS_ROUNDS=5 BUILDS_SECONDS=30 ...     # more rounds, longer phases (3 and 20)
#   BUILDS_BACKEND=postgres ...               # JOBBOARD_BENCH_POSTGRES_URL (or
#                                             # JOBBOARD_TEST_POSTGRES_URL): a role that
#                                             # may create databases
#
# A round: `jobboard serve` (release build, every role) on 127.0.0.1; POST /api/jobs as
# fast as 4 connections are answered (bench/grow.lua) for BUILDS_SECONDS; then the read
# mix of bench/soak.sh (bench/soak_reads.lua: API lists and searches, the board's home
# page and searches, the feed, the sitemap) as fast as 8 connections are answered for
# BUILDS_SECONDS; then the server's resident memory and its peak. Prints each round and
# the medians of each build, with B's ratio to A.
#
# Needs: wrk, curl, python3. Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. bench/lib.sh
export BENCH_DIR="$ROOT/bench"

A="${BUILD_A:?BUILD_A, the path of the first build}"
B="${BUILD_B:?BUILD_B, the path of the second build}"
ROUNDS="${BUILDS_ROUNDS:-3}"
SECONDS_EACH="${BUILDS_SECONDS:-20}"
BACKEND="${BUILDS_BACKEND:-sqlite}"
PG_URL="${JOBBOARD_BENCH_POSTGRES_URL:-${JOBBOARD_TEST_POSTGRES_URL:-}}"

bench_workdir builds
python3 bench/grow_words.py >"$WORK/words.txt"
export GROW_WORDS="$WORK/words.txt"

# One round of build $2 (named $1): "posts/s reads/s rss_mb hwm_mb".
round() {
  local name="$1" bin="$2" n="$3" port base
  bench_database "$BACKEND" "builds_${name,,}$n"
  read -r _ key < <(bench_org_and_key "$bin" "$db" "$raise")
  port=$(free_port)
  base="http://127.0.0.1:$port"
  RUST_LOG=warn "$bin" --database "$db" serve --listen "127.0.0.1:$port" >"$WORK/$name-$n.log" 2>&1 &
  server=$!
  # (A round runs in a subshell of its own: it stops its server whatever happens.)
  trap 'kill "$server" 2>/dev/null || true' EXIT
  wait_up "$base/healthz"
  wrk -t2 -c4 -d"${SECONDS_EACH}s" -H "x-api-key: $key" -s bench/grow.lua "$base" >"$WORK/posts.txt"
  SOAK_DELAY_MS=0 wrk -t1 -c8 -d"${SECONDS_EACH}s" -H "x-api-key: $key" -s bench/soak_reads.lua "$base" \
    >"$WORK/reads.txt"
  local posts reads
  read -r _ posts _ < <(wrk_result "$WORK/posts.txt")
  read -r _ reads _ < <(wrk_result "$WORK/reads.txt")
  echo "$posts $reads $(rss_mb "$server") $(hwm_mb "$server")"
  kill "$server"
  wait "$server" 2>/dev/null || true
  if [ "$BACKEND" = postgres ]; then
    psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $DROP_DB WITH (FORCE)" >/dev/null || true
  fi
}

: >"$WORK/A.txt"
: >"$WORK/B.txt"
echo "$BACKEND: round build posts/s reads/s rss_mb peak_mb"
for n in $(seq 1 "$ROUNDS"); do
  for build in A B; do
    bin=$A
    [ "$build" = B ] && bin=$B
    line=$(round "$build" "$bin" "$n")
    echo "$line" >>"$WORK/$build.txt"
    echo "$n $build $line"
  done
done
col() { awk -v c="$2" '{print $c}' "$WORK/$1.txt" | median; }
echo "medians: build posts/s reads/s rss_mb peak_mb"
for build in A B; do
  echo "$build $(col "$build" 1) $(col "$build" 2) $(col "$build" 3) $(col "$build" 4)"
done
python3 - "$(col A 1)" "$(col B 1)" "$(col A 2)" "$(col B 2)" "$(col A 4)" "$(col B 4)" <<'EOF'
import sys
a_p, b_p, a_r, b_r, a_m, b_m = map(float, sys.argv[1:])
print(f"B/A: posts {b_p / a_p:.2f}, reads {b_r / a_r:.2f}, peak memory {b_m / a_m:.2f}")
EOF
