#!/usr/bin/env bash
# A board grown through its API while it is searched, measured as it grows and after.
#
#   bench/grow.sh                                   # SQLite, 1,000,000 jobs
#   BENCH_JOBS=100000 bench/grow.sh                 # fewer, for a quick look
#   BENCH_BACKENDS="sqlite postgres" bench/grow.sh  # and PostgreSQL
#                                                   # (JOBBOARD_BENCH_POSTGRES_URL or
#                                                   # JOBBOARD_TEST_POSTGRES_URL: a role
#                                                   # that may create databases)
#   BENCH_WRITERS=50 BENCH_SEARCHERS=10 bench/grow.sh
#
# For each backend: a fresh database and `jobboard serve` (release build) on 127.0.0.1,
# an organization and its key, and a first search (which indexes the empty board). Then
# BENCH_WRITERS connections post jobs like bench/seed.py's through the API
# (bench/grow.lua, realistic 40-80 word descriptions) while BENCH_SEARCHERS connections
# send the search mix (bench/search_mix.py, uncached), until the board holds BENCH_JOBS
# jobs. Every BENCH_SAMPLE seconds the board's size, the server's resident memory and the
# search index's bytes, builds and wear (from /metrics) are written to
# grow-BACKEND.csv in BENCH_OUT (default: the current directory). Then, on the grown
# board, with no restart: the search mix alone (BENCH_RUNS runs of BENCH_DURATION with
# BENCH_CONNECTIONS connections, medians), and /metrics once more. Prints a Markdown
# table per backend.
#
# Needs: cargo, wrk, curl, python3 (standard library). Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. bench/lib.sh
export BENCH_DIR="$ROOT/bench"

JOBS="${BENCH_JOBS:-1000000}"
WRITERS="${BENCH_WRITERS:-50}"
SEARCHERS="${BENCH_SEARCHERS:-10}"
SAMPLE="${BENCH_SAMPLE:-10}"
RUNS="${BENCH_RUNS:-3}"
DURATION="${BENCH_DURATION:-5s}"
CONNS="${BENCH_CONNECTIONS:-50}"
BACKENDS="${BENCH_BACKENDS:-sqlite}"
OUT="${BENCH_OUT:-$(pwd)}"
PG_URL="${JOBBOARD_BENCH_POSTGRES_URL:-${JOBBOARD_TEST_POSTGRES_URL:-}}"
export WRK_THREADS=2
export JOBBOARD_METRICS_TOKEN="bench-metrics-token-0123456789"

bench_bin
bench_workdir grow

python3 bench/grow_words.py >"$WORK/words.txt"
python3 bench/search_mix.py 50000 >"$WORK/mix.txt"
export GROW_WORDS="$WORK/words.txt" SEARCH_MIX="$WORK/mix.txt"

# The board's job count (the API's exact total, uncached).
total() {
  curl -fsS -H "x-api-key: $2" -H 'Cache-Control: no-cache' "$1/api/jobs?status=all&per_page=1" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["meta"]["pagination"]["total_items"])'
}

run_backend() {
  local backend="$1" db raise port server base org key
  bench_database "$backend" grow || { echo "skipping $backend" >&2; return; }
  read -r org key < <(bench_org_and_key "$BIN" "$db" "$raise")
  port=$(free_port)
  base="http://127.0.0.1:$port"
  RUST_LOG=info "$BIN" --database "$db" serve --listen "127.0.0.1:$port" --no-worker >"$WORK/server-$backend.log" 2>&1 &
  server=$!
  PIDS+=("$server")
  wait_up "$base/healthz"
  total "$base" "$key" >/dev/null
  curl -fsS -o /dev/null -H "x-api-key: $key" "$base/api/jobs?search=engineer"

  local csv="$OUT/grow-$backend.csv" start now n
  echo "seconds,jobs,rss_mb,index_mb,builds_first,builds_again,builds_worn,misplaced,forgotten,displacement" >"$csv"
  start=$(date +%s.%N)
  wrk -t2 -c"$SEARCHERS" -d4h -H "x-api-key: $key" -H 'Cache-Control: no-cache' \
    -s "$BENCH_DIR/search_mix.lua" --timeout 10s "$base" >"$WORK/search-$backend.txt" 2>&1 &
  local searchers=$!
  wrk -t2 -c"$WRITERS" -d4h -H "x-api-key: $key" -s "$BENCH_DIR/grow.lua" --timeout 10s "$base" \
    >"$WORK/post-$backend.txt" 2>&1 &
  local writers=$!
  local next=0
  while :; do
    n=$(total "$base" "$key")
    now=$(date +%s.%N)
    if awk -v s="$start" -v t="$now" -v next_="$next" 'BEGIN {exit !(t - s >= next_)}'; then
      read -r _ b f a w m g d < <(index_state "$base")
      printf '%.0f,%s,%s,%.1f,%s,%s,%s,%s,%s,%s\n' "$(echo "$now - $start" | bc)" "$n" \
        "$(rss_mb "$server")" "$(echo "$b / 1048576" | bc -l)" "$f" "$a" "$w" "$m" "$g" "$d" >>"$csv"
      next=$((next + SAMPLE))
    fi
    [ "$n" -ge "$JOBS" ] && break
    sleep 1
  done
  kill -INT "$writers" "$searchers"
  wait "$writers" "$searchers" || true
  local grown seconds
  grown=$(total "$base" "$key")
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  local peak_growing
  peak_growing=$(hwm_mb "$server")

  # The grown board, searched alone.
  local runs="$WORK/runs-$backend.txt" run=0
  : >"$runs"
  SEARCH_MIX_START=40000 wrk -t2 -c"$CONNS" -d2s -H "x-api-key: $key" -H 'Cache-Control: no-cache' \
    -s "$BENCH_DIR/search_mix.lua" "$base" >/dev/null
  for _ in $(seq 1 "$RUNS"); do
    SEARCH_MIX_START=$((run * 10000)) wrk -t2 -c"$CONNS" -d"$DURATION" -H "x-api-key: $key" \
      -H 'Cache-Control: no-cache' -s "$BENCH_DIR/search_mix.lua" --timeout 10s "$base" |
      grep '^RESULT' >>"$runs"
    run=$((run + 1))
  done
  read -r _ b f a w m g d < <(index_state "$base")

  local post search
  post=$(grep '^RESULT' "$WORK/post-$backend.txt")
  search=$(grep '^RESULT' "$WORK/search-$backend.txt")
  echo
  echo "### $backend: $grown jobs posted through the API by $WRITERS connections in $(printf '%.0f' "$seconds") s, searched by $SEARCHERS meanwhile"
  echo
  echo "| measure | value |"
  echo "|---|---:|"
  awk -v n="$grown" -v s="$seconds" 'BEGIN {printf "| jobs posted a second (whole growth) | %.0f |\n", n / s}'
  echo "$post" | awk '{printf "| POST /api/jobs p50 / p99 ms while searched | %.1f / %.1f |\n| posts refused or failed | %d |\n", $3, $4, $6 + $7}'
  echo "$search" | awk '{printf "| search mix while growing: req/s, p50 / p99 ms | %.0f, %.1f / %.1f |\n| searches failed | %d |\n", $2, $3, $4, $6 + $7}'
  awk '{print $2}' "$runs" | median | awk '{printf "| search mix on the grown board (%s connections): req/s | %.0f |\n", "'"$CONNS"'", $1}'
  paste <(awk '{print $3}' "$runs" | median) <(awk '{print $4}' "$runs" | median) |
    awk '{printf "| search mix on the grown board: p50 / p99 ms | %.1f / %.1f |\n", $1, $2}'
  echo "| peak resident memory while growing / at the end (MB) | $peak_growing / $(hwm_mb "$server") |"
  echo "| resident memory at the end (MB) | $(rss_mb "$server") |"
  awk -v b="$b" 'BEGIN {printf "| search index (MiB) | %.0f |\n", b / 1048576}'
  echo "| index builds: first / again / worn | $f / $a / $w |"
  echo "| misplaced / forgotten jobs, displacement | $m / $g / $d |"
  echo
  echo "Samples: $csv"
  kill "$server"
  wait "$server" 2>/dev/null || true
  if [ "$backend" = postgres ]; then psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $DROP_DB" >/dev/null; DROP_DB=""; fi
}

for backend in $BACKENDS; do
  run_backend "$backend"
done
