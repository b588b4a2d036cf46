#!/usr/bin/env bash
# Many boards on one node: BENCH_BOARDS organizations of BENCH_BOARD_JOBS jobs each,
# searched with skewed traffic, beside one board of the same size in the same run.
#
#   bench/boards.sh                                   # SQLite, 1,000 boards x 1,000 jobs
#   BENCH_BOARDS=200 bench/boards.sh                  # 200 boards
#   BENCH_BACKENDS="sqlite postgres" bench/boards.sh  # and PostgreSQL
#                                                     # (JOBBOARD_BENCH_POSTGRES_URL or
#                                                     # JOBBOARD_TEST_POSTGRES_URL: a role
#                                                     # that may create databases)
#   BENCH_SKEW=1.0 BENCH_RUNS=3 BENCH_DURATION=5s BENCH_CONNECTIONS=50 bench/boards.sh
#   BENCH_KEEP=DIR bench/boards.sh                    # keep the seeded SQLite file (and its
#                                                     # keys) in DIR, and start later runs
#                                                     # from a copy of it
#   JOBBOARD_SEARCH_INDEX_MB=0 bench/boards.sh        # no search index: every list by SQL
#   BENCH_GROW=1 bench/boards.sh                      # the boards grown through the API
#   BENCH_GROW=1 BENCH_WRITERS=50 BENCH_SEARCHERS=10 bench/boards.sh
#
# For each backend: a fresh database; the organizations and a key of each made with the
# command line (`orgs create`, `keys create`); bench/seed.py's jobs for each (the same
# word lists, jobs of their own); `jobboard serve` (release build) on 127.0.0.1 with its
# defaults, which indexes the organizations at start while the budget lasts. Then, run by
# run, alternately: the search mix (bench/search_mix.py, uncached) sent to one board
# (the first), and the same mix spread over every board, the board on line r of the keys
# drawn in proportion to 1 / r^BENCH_SKEW (bench/boards.lua). Prints a Markdown table of
# the medians, the server's peak memory, the indexes held and built (from /metrics), and
# how long a board's index took to build (from the server's log).
#
# With BENCH_GROW=1 the boards start empty, the server is started on them, and their jobs
# come through the API instead: BENCH_WRITERS connections post jobs like bench/seed.py's
# (bench/boards_grow.lua: realistic 40-80 word descriptions, the boards in turn, so they
# grow together) while BENCH_SEARCHERS connections send the mix spread over every board
# as above, until the boards hold BENCH_BOARD_JOBS jobs each. Then, with no restart, the
# same runs as above, and the table also gives the growth: posts a second, the searches
# meanwhile, and the peak memory while growing. A board's index is built at its first
# list, on the few jobs it then holds, and kept in step as it grows.
#
# Needs: cargo, wrk, curl, python3 (standard library), psql for PostgreSQL. Traffic stays
# on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. bench/lib.sh
export BENCH_DIR="$ROOT/bench"

BOARDS="${BENCH_BOARDS:-1000}"
PER_BOARD="${BENCH_BOARD_JOBS:-1000}"
export BOARDS_SKEW="${BENCH_SKEW:-1.0}"
RUNS="${BENCH_RUNS:-3}"
DURATION="${BENCH_DURATION:-5s}"
CONNS="${BENCH_CONNECTIONS:-50}"
BACKENDS="${BENCH_BACKENDS:-sqlite}"
GROW="${BENCH_GROW:-}"
WRITERS="${BENCH_WRITERS:-50}"
SEARCHERS="${BENCH_SEARCHERS:-10}"
PG_URL="${JOBBOARD_BENCH_POSTGRES_URL:-${JOBBOARD_TEST_POSTGRES_URL:-}}"
export WRK_THREADS=2
export JOBBOARD_METRICS_TOKEN="bench-metrics-token-0123456789"

bench_bin
bench_workdir boards

python3 bench/search_mix.py 50000 >"$WORK/mix.txt"
export SEARCH_MIX="$WORK/mix.txt"
if [ -n "$GROW" ]; then
  python3 bench/grow_words.py >"$WORK/words.txt"
  export GROW_WORDS="$WORK/words.txt"
fi

# One run of the mix against the keys of file $2 (one board, or every board), appended
# as a RESULT line to $3.
mix_run() {
  local base="$1" keys="$2" out="$3" start="$4"
  BOARDS_KEYS="$keys" SEARCH_MIX_START="$start" wrk -t2 -c"$CONNS" -d"$DURATION" --timeout 10s \
    -s "$BENCH_DIR/boards.lua" "$base" | grep '^RESULT' >>"$out"
}

run_backend() {
  local backend="$1" db raise
  bench_database "$backend" boards || { echo "skipping $backend" >&2; return; }
  local kept="${BENCH_KEEP:-}/boards-$BOARDS-$PER_BOARD.db"
  if [ -n "$GROW" ]; then
    seed_boards "$backend" "$db" "$raise" 0
  elif [ "$backend" = sqlite ] && [ -n "${BENCH_KEEP:-}" ] && [ -f "$kept" ]; then
    echo "== $backend: reusing $kept" >&2
    cp "$kept" "$WORK/boards.db"
    cp "$kept.keys" "$WORK/keys.txt"
    head -n 1 "$WORK/keys.txt" >"$WORK/one-key.txt"
  else
    seed_boards "$backend" "$db" "$raise"
    if [ "$backend" = sqlite ] && [ -n "${BENCH_KEEP:-}" ]; then
      mkdir -p "$BENCH_KEEP"
      cp "$WORK/boards.db" "$kept"
      cp "$WORK/keys.txt" "$kept.keys"
    fi
  fi
  start_and_measure "$backend" "$db"
}

# The organizations, a key of each (in $WORK/keys.txt) and their jobs.
# With a fourth argument of 0, no jobs.
seed_boards() {
  local backend="$1" db="$2" raise="$3" jobs="${4:-$PER_BOARD}"
  echo "== $backend: $BOARDS organizations and keys" >&2
  "$BIN" --database "$db" migrate >/dev/null
  : >"$WORK/keys.txt"
  local org first="" last=""
  for i in $(seq 1 "$BOARDS"); do
    org=$("$BIN" --database "$db" orgs create --name "Board $i" | tail -n 1)
    "$BIN" --database "$db" keys create --org "$org" --read-limit 100000 --write-limit 100000 | tail -n 1 >>"$WORK/keys.txt"
    first="${first:-$org}"
    last="$org"
  done
  local lift="UPDATE api_keys SET read_limit = 1000000000, write_limit = 1000000000"
  case "$raise" in
    postgres) psql "$db" -qc "$lift" >/dev/null ;;
    *) python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()' "$raise" "$lift" ;;
  esac
  head -n 1 "$WORK/keys.txt" >"$WORK/one-key.txt"
  [ "$jobs" = 0 ] && return
  echo "== $backend: $PER_BOARD jobs for each" >&2
  case "$backend" in
    sqlite) python3 bench/seed.py sqlite "$WORK/boards.db" "$first-$last" "$PER_BOARD" ;;
    postgres) python3 bench/seed.py postgres "$db" "$first-$last" "$PER_BOARD" ;;
  esac
}

# The jobs stored, all boards together.
stored() {
  case "$1" in
    postgres) psql "$2" -tAc "SELECT COUNT(*) FROM jobs" ;;
    *) python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM jobs").fetchone()[0])' "$WORK/boards.db" ;;
  esac
}

# BENCH_GROW: posts to every board while the mix is spread over them, until they hold
# $PER_BOARD jobs each; writes the growth's rows of the table to $WORK/growth.md.
grow() {
  local backend="$1" db="$2" base="$3" server="$4" want=$((BOARDS * PER_BOARD)) start n
  echo "== $backend: growing $BOARDS boards to $PER_BOARD jobs each through the API" >&2
  start=$(date +%s.%N)
  BOARDS_KEYS="$WORK/keys.txt" SEARCH_MIX_START=30000 wrk -t2 -c"$SEARCHERS" -d4h --timeout 10s \
    -s "$BENCH_DIR/boards.lua" "$base" >"$WORK/grow-search.txt" 2>&1 &
  local searchers=$!
  BOARDS_KEYS="$WORK/keys.txt" wrk -t2 -c"$WRITERS" -d4h --timeout 10s \
    -s "$BENCH_DIR/boards_grow.lua" "$base" >"$WORK/grow-post.txt" 2>&1 &
  local writers=$!
  local ticks=0 held b
  while :; do
    n=$(stored "$backend" "$db")
    [ "$n" -ge "$want" ] && break
    if ! kill -0 "$writers" 2>/dev/null; then
      echo "the writers stopped:" >&2
      cat "$WORK/grow-post.txt" >&2
      exit 1
    fi
    ticks=$((ticks + 1))
    if [ $((ticks % 30)) = 0 ]; then
      read -r held b _ < <(index_state "$base")
      echo "   $n of $want jobs, $(rss_mb "$server") MB resident, $held indexes of $((b / 1048576)) MiB" >&2
    fi
    sleep 1
  done
  kill -INT "$writers" "$searchers"
  wait "$writers" "$searchers" || true
  local seconds peak
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  peak=$(hwm_mb "$server")
  n=$(stored "$backend" "$db")
  {
    echo "| growth | value |"
    echo "|---|---:|"
    awk -v n="$n" -v s="$seconds" 'BEGIN {printf "| jobs posted (all boards), in seconds; a second | %d, %.0f s; %.0f |\n", n, s, n / s}'
    wrk_result "$WORK/grow-post.txt" | awk '{printf "| POST /api/jobs p50 / p99 ms while searched | %.1f / %.1f |\n| posts refused or failed | %d |\n", $3, $4, $6 + $7}'
    wrk_result "$WORK/grow-search.txt" | awk '{printf "| search mix while growing (%s connections): req/s, p50 / p99 ms | %.0f, %.1f / %.1f |\n| searches failed | %d |\n", "'"$SEARCHERS"'", $2, $3, $4, $6 + $7}'
    echo "| peak resident memory while growing (MB) | $peak |"
  } >"$WORK/growth.md"
}

start_and_measure() {
  local backend="$1" db="$2" port base server
  port=$(free_port)
  base="http://127.0.0.1:$port"
  RUST_LOG=info "$BIN" --database "$db" serve --listen "127.0.0.1:$port" --no-worker >"$WORK/server-$backend.log" 2>&1 &
  server=$!
  PIDS+=("$server")
  wait_up "$base/healthz"
  local n b f a w idle at_start growth=""
  if [ -n "$GROW" ]; then
    grow "$backend" "$db" "$base" "$server"
    growth=$(cat "$WORK/growth.md")
  else
    # The start's indexing: until the count of indexes holds still for two seconds.
    local held=-1 same=0
    while [ "$same" -lt 2 ]; do
      sleep 1
      read -r n _ < <(index_state "$base")
      if [ "$n" = "$held" ]; then same=$((same + 1)); else same=0; held="$n"; fi
    done
  fi
  idle=$(rss_mb "$server")
  read -r n b f a w _ < <(index_state "$base")
  at_start="$n indexes, $(awk -v b="$b" 'BEGIN {printf "%.0f", b / 1048576}') MiB"

  # A short warm-up of each, then the runs, alternating.
  BOARDS_KEYS="$WORK/keys.txt" SEARCH_MIX_START=45000 wrk -t2 -c"$CONNS" -d2s -s "$BENCH_DIR/boards.lua" "$base" >/dev/null
  local run
  : >"$WORK/one.txt"
  : >"$WORK/many.txt"
  for run in $(seq 0 $((RUNS - 1))); do
    mix_run "$base" "$WORK/one-key.txt" "$WORK/one.txt" $((run * 10000))
    mix_run "$base" "$WORK/keys.txt" "$WORK/many.txt" $((run * 10000 + 5000))
  done
  read -r n b f a w _ < <(index_state "$base")

  local one_rps many_rps
  one_rps=$(awk '{print $2}' "$WORK/one.txt" | median)
  many_rps=$(awk '{print $2}' "$WORK/many.txt" | median)
  echo
  echo "### $backend: $BOARDS boards x $PER_BOARD jobs${GROW:+ grown through the API}, skew $BOARDS_SKEW, wrk -t2 -c$CONNS, medians of $RUNS runs of $DURATION"
  echo
  if [ -n "$growth" ]; then
    echo "$growth"
    echo
  fi
  echo "| search mix, uncached | req/s | p50 ms | p99 ms | failed |"
  echo "|---|---:|---:|---:|---:|"
  for which in one many; do
    local label="one board (the first)"
    [ "$which" = many ] && label="every board, skewed"
    printf '| %s | %.0f | %.1f | %.1f | %d |\n' "$label" \
      "$(awk '{print $2}' "$WORK/$which.txt" | median)" \
      "$(awk '{print $3}' "$WORK/$which.txt" | median)" \
      "$(awk '{print $4}' "$WORK/$which.txt" | median)" \
      "$(awk '{s += $6 + $7} END {print s + 0}' "$WORK/$which.txt")"
  done
  echo
  awk -v o="$one_rps" -v m="$many_rps" 'BEGIN {printf "Every board against one: %.0f%%.\n", 100 * m / o}'
  echo
  echo "| measure | value |"
  echo "|---|---:|"
  local after="the start's indexing"
  [ -n "$GROW" ] && after="the growth"
  echo "| server memory: after $after / peak / at the end (MB) | $idle / $(hwm_mb "$server") / $(rss_mb "$server") |"
  echo "| indexes after $after | $at_start |"
  awk -v n="$n" -v b="$b" 'BEGIN {printf "| indexes at the end | %d, %.0f MiB |\n", n, b / 1048576}'
  echo "| index builds: first / again / worn | $f / $a / $w |"
  sed 's/\x1b\[[0-9;]*m//g' "$WORK/server-$backend.log" | grep -o 'jobs=[0-9]* bytes=[0-9]* ms=[0-9]*' |
    sed 's/.*ms=//' >"$WORK/build-ms.txt" || true
  if [ -s "$WORK/build-ms.txt" ]; then
    printf '| one board'"'"'s index build: median / max ms | %s / %s |\n' \
      "$(median <"$WORK/build-ms.txt")" "$(sort -n "$WORK/build-ms.txt" | tail -n 1)"
  fi
  kill "$server"
  wait "$server" 2>/dev/null || true
  if [ "$backend" = postgres ]; then psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $DROP_DB" >/dev/null; DROP_DB=""; fi
}

for backend in $BACKENDS; do
  run_backend "$backend"
done
