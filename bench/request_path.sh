#!/usr/bin/env bash
# The request path against the floor: what each layer of the service costs beside an axum
# server with nothing of ours (bench/bare_server.rs), measured side by side in one run.
#
#   bench/request_path.sh                      # SQLite
#   BENCH_BACKENDS="sqlite postgres" bench/request_path.sh   # and PostgreSQL
#                                              # (JOBBOARD_BENCH_POSTGRES_URL or
#                                              # JOBBOARD_TEST_POSTGRES_URL: a role that may
#                                              # create databases)
#   BENCH_RUNS=5 BENCH_DURATION=5s bench/request_path.sh
#   BENCH_BEFORE=path/to/jobboard bench/request_path.sh   # and an earlier build's rows,
#                                              # served from the same database, in the
#                                              # same runs
#
# Servers, each on 127.0.0.1: `bare` (axum::serve, one JSON route), `loop` (the same route
# in the service's own connection loop), and `jobboard serve` on a fresh database with one
# organization, one key and 20 live jobs. Rows, in the order of the layers a request
# crosses:
#
#   bare /healthz          the floor
#   loop /healthz          + the service's connection loop and parser settings
#   jobboard /healthz      + the middleware every request passes (request id, limits,
#                            time-outs, security headers, metrics, access log)
#   jobboard /robots.txt   + the board of the request's host (organization, version, origin)
#   jobboard / (cached)    + the page cache and the page's headers
#   GET /api/jobs (cached) + the key's authentication and rate limit, the list cache
#
# Each run measures every row once, one after another (wrk -t2 -c32), so each ratio is
# taken against the floor of its own run; the table gives medians of RUNS runs. The data
# is grown through the API by the running server (20 jobs posted before the first pass);
# a second pass measures the same rows while bench/poster.py posts BENCH_POSTING (10)
# jobs a second through the API, as a board in use grows.
# Needs: cargo, wrk, curl, python3. Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. bench/lib.sh

RUNS="${BENCH_RUNS:-3}"
DURATION="${BENCH_DURATION:-5s}"
CONNS="${BENCH_CONNECTIONS:-32}"
THREADS="${BENCH_THREADS:-2}"
BACKENDS="${BENCH_BACKENDS:-sqlite}"
# Jobs a second posted through the API during a second pass of every row (0: no second
# pass).
POSTING="${BENCH_POSTING:-10}"
PG_URL="${JOBBOARD_BENCH_POSTGRES_URL:-${JOBBOARD_TEST_POSTGRES_URL:-}}"

cargo build --release --quiet --bin jobboard --example bare_server
TARGET="${CARGO_TARGET_DIR:-target}/release"
BIN="$TARGET/jobboard"
BARE="$TARGET/examples/bare_server"

bench_workdir bench

# One wrk run; prints "req/s p50 p99 non2xx errors".
hit() {
  local url="$1"
  shift
  wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" "$@" -s "$ROOT/bench/report.lua" "$url" |
    awk '/^RESULT/ {print $2, $3, $4, $6, $7}'
}

# Starts bare_server in mode $1; sets PORT.
start_bare() {
  PORT=$(free_port)
  "$BARE" "$1" "127.0.0.1:$PORT" >/dev/null &
  PIDS+=($!)
  wait_up "http://127.0.0.1:$PORT/healthz"
}

# Measures every row of `rows` RUNS times, one after the other, and prints the table
# titled $1.
measure_rows() {
  local row label url header out run
  : >"$WORK/results.txt"
  for run in $(seq 1 "$RUNS"); do
    for row in "${rows[@]}"; do
      IFS='|' read -r label url header <<<"$row"
      out=$(hit "$url" -H "${header:-X-Bench: 1}")
      echo "$run|$label|$out" >>"$WORK/results.txt"
      echo "  run $run: $label: $out" >&2
    done
  done
  echo
  echo "### $backend, $1: $(nproc) cores, wrk -t$THREADS -c$CONNS, $RUNS runs of $DURATION, $(date -u +%Y-%m-%d)"
  echo
  echo "| Request | req/s (median) | per run | p99 ms (median) | of bare (median of runs) | non-2xx, errors |"
  echo "|---|---:|---|---:|---:|---|"
  for row in "${rows[@]}"; do
    IFS='|' read -r label url header <<<"$row"
    local rps per p99 ratio bad
    rps=$(awk -F'|' -v l="$label" '$2 == l {split($3, a, " "); print a[1]}' "$WORK/results.txt" | median)
    per=$(awk -F'|' -v l="$label" '$2 == l {split($3, a, " "); printf "%s%.0f", sep, a[1]; sep=", "}' "$WORK/results.txt")
    p99=$(awk -F'|' -v l="$label" '$2 == l {split($3, a, " "); print a[3]}' "$WORK/results.txt" | median)
    bad=$(awk -F'|' -v l="$label" '$2 == l {split($3, a, " "); n += a[4]; e += a[5]} END {print n ", " e}' "$WORK/results.txt")
    ratio=$(awk -F'|' -v l="$label" '
      { split($3, a, " ") }
      $2 == "bare /healthz" { floor[$1] = a[1] }
      $2 == l { mine[$1] = a[1] }
      END { for (r in mine) printf "%.3f\n", mine[r] / floor[r] }' "$WORK/results.txt" | median)
    printf '| %s | %.0f | %s | %.2f | %.0f%% | %s |\n' "$label" "$rps" "$per" "$p99" "$(echo "$ratio * 100" | bc -l)" "$bad"
  done
}

run_backend() {
  local backend="$1" db
  if [ "$backend" = sqlite ]; then
    db="sqlite://$WORK/bench.db"
  else
    [ -n "$PG_URL" ] || { echo "PostgreSQL: set JOBBOARD_BENCH_POSTGRES_URL" >&2; return; }
    DROP_DB="jobboard_bench_path_$$"
    psql "$PG_URL" -qc "CREATE DATABASE $DROP_DB" >/dev/null
    db="${PG_URL%/*}/$DROP_DB"
  fi
  local org key port
  read -r org key < <(bench_org_and_key "$BIN" "$db" "$([ "$backend" = sqlite ] && echo "$WORK/bench.db" || echo postgres)")
  port=$(free_port)
  RUST_LOG=warn "$BIN" --database "$db" serve --listen "127.0.0.1:$port" --no-worker >"$WORK/server-$backend.log" 2>&1 &
  local server=$!
  PIDS+=("$server")
  wait_up "http://127.0.0.1:$port/readyz"
  local base="http://127.0.0.1:$port" i
  for i in $(seq 1 20); do
    curl -fsS -o /dev/null -H "x-api-key: $key" -H 'content-type: application/json' \
      -d "{\"title\":\"Engineer $i\",\"company_name\":\"Acme\",\"location\":\"Berlin\",\"job_type\":\"full-time\",\"status\":\"active\",\"description\":\"<p>Build and run the systems our customers rely on, with a small team that owns what it ships.</p>\"}" \
      "$base/api/jobs"
  done
  [ "$(curl -fsS -H "x-api-key: $key" "$base/api/jobs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["meta"]["pagination"]["total_items"])')" = 20 ] ||
    { echo "the 20 jobs are not listed" >&2; exit 1; }

  local before_rows=()
  if [ -n "${BENCH_BEFORE:-}" ]; then
    local before_port
    before_port=$(free_port)
    RUST_LOG=warn "$BENCH_BEFORE" --database "$db" serve --listen "127.0.0.1:$before_port" --no-worker \
      >"$WORK/before-$backend.log" 2>&1 &
    PIDS+=($!)
    wait_up "http://127.0.0.1:$before_port/readyz"
    local b="http://127.0.0.1:$before_port"
    before_rows=(
      "before: /healthz|$b/healthz"
      "before: /robots.txt|$b/robots.txt"
      "before: / (cached)|$b/"
      "before: GET /api/jobs (cached)|$b/api/jobs|x-api-key: $key"
    )
  fi
  local bare loop
  start_bare bare
  bare=$PORT
  start_bare loop
  loop=$PORT
  local rows=(
    "bare /healthz|http://127.0.0.1:$bare/healthz"
    "loop /healthz|http://127.0.0.1:$loop/healthz"
    "jobboard /healthz|$base/healthz"
    "jobboard /robots.txt|$base/robots.txt"
    "jobboard / (cached)|$base/"
    "GET /api/jobs (cached)|$base/api/jobs|x-api-key: $key"
    "${before_rows[@]}"
  )
  local row label url header out
  # Warm-up: every row once, briefly (caches filled, connections and allocator settled).
  for row in "${rows[@]}"; do
    IFS='|' read -r label url header <<<"$row"
    wrk -t"$THREADS" -c"$CONNS" -d1s -H "${header:-X-Bench: 1}" "$url" >/dev/null
  done
  measure_rows "nothing else running"
  if [ "$POSTING" != 0 ]; then
    # The same rows while the board grows through the API: every post is a write, so the
    # board, the key and the pages are read again after it.
    python3 "$ROOT/bench/poster.py" "$base" "$key" "$WORK/posted.txt" "$POSTING" &
    local poster=$!
    PIDS+=("$poster")
    measure_rows "while $POSTING jobs a second are posted through the API"
    kill -TERM "$poster"
    wait "$poster" 2>/dev/null || true
    local posted refused
    read -r posted refused <"$WORK/posted.txt"
    echo
    echo "Posted meanwhile: $posted jobs ($refused refused or failed)."
  fi
  kill "$server" 2>/dev/null || true
}

for backend in $BACKENDS; do
  run_backend "$backend"
done
