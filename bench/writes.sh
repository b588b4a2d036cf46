#!/usr/bin/env bash
# Writes at import pace: POST /api/jobs with realistic bodies (bench/posting.lua: a title,
# one of about 400 companies, a city, a job type, a description of 40 to 80 words) from
# BENCH_WRITERS connections for BENCH_SECONDS, on a fresh database, while the board's
# in-memory index is kept in step (it is built by a search before the first post). After
# each round: the API's total (answered by the index) against the jobs stored (once the
# posts in flight are committed, read again for up to 5 s until they agree), and the
# index's builds and wear from /metrics.
#
#   bench/writes.sh                              # SQLite, and PostgreSQL when a URL is given
#   BENCH_BACKENDS=sqlite bench/writes.sh        # one backend
#   BENCH_BEFORE=path/to/older/jobboard ...      # an earlier build in alternating rounds
#   BENCH_ROUNDS=3 BENCH_SECONDS=20 BENCH_WRITERS=50   # the defaults
#   BENCH_BIN=path/to/jobboard ...               # the build measured (default: built now)
#
# Each round starts `jobboard serve` (release build, every role: workers and scheduler
# too) on 127.0.0.1 with its defaults. Prints each round and the medians per build.
#
# Needs: wrk, curl, python3, and for PostgreSQL psql plus JOBBOARD_BENCH_POSTGRES_URL (or
# JOBBOARD_TEST_POSTGRES_URL): a role that may create databases. Traffic stays on
# 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. bench/lib.sh
export BENCH_DIR="$ROOT/bench"

ROUNDS="${BENCH_ROUNDS:-3}"
SECONDS_EACH="${BENCH_SECONDS:-20}"
WRITERS="${BENCH_WRITERS:-50}"
PG_URL="${JOBBOARD_BENCH_POSTGRES_URL:-${JOBBOARD_TEST_POSTGRES_URL:-}}"
if [ -n "$PG_URL" ]; then BACKENDS="${BENCH_BACKENDS:-sqlite postgres}"; else BACKENDS="${BENCH_BACKENDS:-sqlite}"; fi
export JOBBOARD_METRICS_TOKEN="bench-metrics-token-0123456789"

bench_bin
bench_workdir writes
python3 bench/grow_words.py >"$WORK/words.txt"
export GROW_WORDS="$WORK/words.txt"

# The board's job count through the API, uncached, from lists the index answers (a
# filtered list; an unfiltered one is read from the database): the remote jobs and the
# others, every status.
api_total() {
  local r n sum=0
  for r in true false; do
    n=$(curl -fsS -H "x-api-key: $2" -H 'Cache-Control: no-cache' "$1/api/jobs?status=all&is_remote=$r&per_page=1" |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["meta"]["pagination"]["total_items"])')
    sum=$((sum + n))
  done
  echo "$sum"
}

# The jobs stored, counted by the database.
stored() {
  case "$1" in
    postgres) psql "$2" -tAc "SELECT count(*) FROM jobs" ;;
    *) python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM jobs").fetchone()[0])' "$3" ;;
  esac
}

# One round of build $3 (named $2) on backend $1:
# "posts/s p50_ms p99_ms non2xx errors api_total stored indexes builds_again builds_worn misplaced".
round() {
  local backend="$1" name="$2" bin="$3" n="$4" db raise port base org key
  bench_database "$backend" "writes_${name}_$n"
  read -r org key < <(bench_org_and_key "$bin" "$db" "$raise")
  port=$(free_port)
  base="http://127.0.0.1:$port"
  RUST_LOG=warn "$bin" --database "$db" serve --listen "127.0.0.1:$port" >"$WORK/$backend-$name-$n.log" 2>&1 &
  server=$!
  # A round runs in a subshell of its own: when it ends, however it ends, it stops its
  # server and drops its PostgreSQL database.
  trap 'kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
        [ -z "$DROP_DB" ] || psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $DROP_DB WITH (FORCE)" >/dev/null 2>&1 || true' EXIT
  wait_up "$base/healthz"
  # The first search builds the organization's index (the round waits until /metrics
  # counts it, at most 10 s); every list after it applies the writes committed before it.
  curl -fsS -o /dev/null -H "x-api-key: $key" -H 'Cache-Control: no-cache' "$base/api/jobs?search=engineer"
  for _ in $(seq 1 100); do
    [ "$(index_state "$base" | cut -d' ' -f1)" -ge 1 ] && break
    sleep 0.1
  done
  wrk -t2 -c"$WRITERS" -d"${SECONDS_EACH}s" -H "x-api-key: $key" -s bench/grow.lua --timeout 10s "$base" \
    >"$WORK/posts.txt"
  local rps p50 p99 bad errors total count state last=-1
  read -r _ rps p50 p99 _ bad errors < <(wrk_result "$WORK/posts.txt")
  # The posts wrk left in flight when it stopped are still committed: the count is read
  # once it stays the same for a second.
  count=$(stored "$backend" "$db" "$raise")
  while [ "$count" != "$last" ]; do
    last=$count
    sleep 1
    count=$(stored "$backend" "$db" "$raise")
  done
  # The index's total, until it agrees (at most 5 s).
  for _ in $(seq 1 50); do
    total=$(api_total "$base" "$key")
    [ "$total" = "$count" ] && break
    sleep 0.1
  done
  state=$(index_state "$base")
  read -r indexes _ _ again worn misplaced _ _ <<<"$state"
  echo "$rps $p50 $p99 $bad $errors $total $count $indexes $again $worn $misplaced"
}

builds="now"
[ -n "${BENCH_BEFORE:-}" ] && builds="before now"
for backend in $BACKENDS; do
  echo "$backend, $WRITERS writers, ${SECONDS_EACH} s a round: round build posts/s p50_ms p99_ms non2xx errors api_total stored indexes builds_again builds_worn misplaced"
  for build in $builds; do : >"$WORK/$backend-$build.txt"; done
  for n in $(seq 1 "$ROUNDS"); do
    for build in $builds; do
      bin=$BIN
      [ "$build" = before ] && bin=$BENCH_BEFORE
      line=$(round "$backend" "$build" "$bin" "$n")
      echo "$line" >>"$WORK/$backend-$build.txt"
      echo "$n $build $line"
      read -r _ _ _ bad errors total count _ <<<"$line"
      if [ "$bad" != 0 ] || [ "$errors" != 0 ] || [ "$total" != "$count" ]; then
        echo "round $n of $build: $bad refused, $errors socket errors, the API lists $total of $count stored jobs" >&2
      fi
    done
  done
  for build in $builds; do
    echo "$backend $build medians: posts/s $(cut -d' ' -f1 "$WORK/$backend-$build.txt" | median)," \
      "p50 $(cut -d' ' -f2 "$WORK/$backend-$build.txt" | median) ms," \
      "p99 $(cut -d' ' -f3 "$WORK/$backend-$build.txt" | median) ms"
  done
done
