#!/usr/bin/env bash
# The peer: the search mix of bench/boards.sh answered by Datasette 0.65.5 (PyPI) from
# the same SQLite file, the same way (one board, then every board drawn with the same
# skew), so BENCHMARKS.md can put the ratio beside each figure.
#
#   BENCH_KEEP=DIR bench/datasette.sh          # the file bench/boards.sh kept in DIR
#   BENCH_DB=path/to/boards.db bench/datasette.sh
#   BENCH_RUNS=3 BENCH_DURATION=30s BENCH_CONNECTIONS=4 BENCH_SKEW=1.0 bench/datasette.sh
#
# Datasette is installed with pip into a virtual environment kept between runs
# (BENCH_VENV, by default ~/.cache/jobboard-bench/datasette) and serves the file
# immutable (read-only, as published data), its full-text search on the jobs' FTS5
# table. bench/datasette_mix.py turns each line of the mix into Datasette's list of the
# organization's active jobs with the same words, filters and page, with its count.
# Before the runs, the totals of the first BENCH_CHECK lines (100) for the first
# organization are compared with the jobboard server's on a copy of the same file, when
# BENCH_BIN (or a release build) is at hand: how many agree is printed.
#
# Needs: python3 with venv and pip, wrk, curl. Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. bench/lib.sh
export BENCH_DIR="$ROOT/bench"

BOARDS="${BENCH_BOARDS:-1000}"
PER_BOARD="${BENCH_BOARD_JOBS:-1000}"
DB="${BENCH_DB:-${BENCH_KEEP:-}/boards-$BOARDS-$PER_BOARD.db}"
export BOARDS_SKEW="${BENCH_SKEW:-1.0}"
RUNS="${BENCH_RUNS:-3}"
DURATION="${BENCH_DURATION:-30s}"
# Datasette answers about one of these lists a second from this file: more connections
# than its SQL threads only queue (at 50, wrk's requests time out before an answer).
CONNS="${BENCH_CONNECTIONS:-4}"
CHECK="${BENCH_CHECK:-100}"
VENV="${BENCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/jobboard-bench/datasette}"
export WRK_THREADS=2
[ -f "$DB" ] || { echo "no database at $DB: run BENCH_KEEP=DIR bench/boards.sh first" >&2; exit 1; }

if ! "$VENV/bin/datasette" --version 2>/dev/null | grep -q '0\.65\.5'; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "datasette==0.65.5"
fi

bench_workdir datasette
# Datasette names a database after its file.
ln -s "$(realpath "$DB")" "$WORK/boards.db"
cat >"$WORK/metadata.json" <<'JSON'
{"databases": {"boards": {"tables": {"jobs": {"fts_table": "jobs_find", "fts_pk": "seq"}}}}}
JSON
python3 -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for (i,) in c.execute("SELECT id FROM organizations ORDER BY id"): print(i)' "$DB" >"$WORK/orgs.txt"
head -n 1 "$WORK/orgs.txt" >"$WORK/one-org.txt"
now=$(python3 -c 'import time; print(int(time.time() * 1e6))')
python3 bench/search_mix.py 50000 >"$WORK/api-mix.txt"
python3 bench/datasette_mix.py boards "$now" <"$WORK/api-mix.txt" >"$WORK/mix.txt"
export SEARCH_MIX="$WORK/mix.txt"

port=$(free_port)
base="http://127.0.0.1:$port"
"$VENV/bin/datasette" serve -i "$WORK/boards.db" --metadata "$WORK/metadata.json" \
  --host 127.0.0.1 --port "$port" --setting sql_time_limit_ms 30000 >"$WORK/datasette.log" 2>&1 &
PIDS+=("$!")
server=$!
# Datasette counts the rows of an immutable file's tables before it answers.
for _ in $(seq 1 600); do
  curl -fsS -o /dev/null "$base/-/versions.json" 2>/dev/null && break
  sleep 0.5
done
curl -fsS -o /dev/null "$base/-/versions.json"

if [ "$CHECK" -gt 0 ]; then
  bench_bin
  cp "$DB" "$WORK/jobboard.db"
  key=$(head -n 1 "${DB}.keys")
  jport=$(free_port)
  "$BIN" --database "sqlite://$WORK/jobboard.db" serve --listen "127.0.0.1:$jport" --no-worker \
    >"$WORK/jobboard.log" 2>&1 &
  PIDS+=("$!")
  wait_up "http://127.0.0.1:$jport/healthz"
  org=$(head -n 1 "$WORK/orgs.txt")
  agree=0
  while IFS=$'\t' read -r api ds; do
    a=$(curl -fsS -H "x-api-key: $key" "http://127.0.0.1:$jport$api" |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["meta"]["pagination"]["total_items"])')
    d=$(curl -fsS "$base${ds//\{org\}/$org}" |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["filtered_table_rows_count"])')
    [ "$a" = "$d" ] && agree=$((agree + 1))
  done < <(paste <(head -n "$CHECK" "$WORK/api-mix.txt") <(head -n "$CHECK" "$SEARCH_MIX"))
  echo "totals that agree with jobboard's (first $CHECK lines, organization $org): $agree of $CHECK" >&2
  kill "${PIDS[-1]}"
fi

: >"$WORK/one.txt"
: >"$WORK/many.txt"
for run in $(seq 0 $((RUNS - 1))); do
  for which in one many; do
    orgs="$WORK/orgs.txt"
    [ "$which" = one ] && orgs="$WORK/one-org.txt"
    BOARDS_IN_PATH=1 BOARDS_KEYS="$orgs" SEARCH_MIX_START=$((run * 10000)) \
      wrk -t2 -c"$CONNS" -d"$DURATION" --timeout 60s -s "$BENCH_DIR/boards.lua" "$base" |
      grep '^RESULT' >>"$WORK/$which.txt"
  done
done

echo
echo "### Datasette $("$VENV/bin/datasette" --version | awk '{print $3}'): $BOARDS boards x $PER_BOARD jobs, skew $BOARDS_SKEW, wrk -t2 -c$CONNS, medians of $RUNS runs of $DURATION"
echo
echo "| search mix, uncached | req/s | p50 ms | p99 ms | failed |"
echo "|---|---:|---:|---:|---:|"
for which in one many; do
  label="one board (the first)"
  [ "$which" = many ] && label="every board, skewed"
  printf '| %s | %.2f | %.0f | %.0f | %d |\n' "$label" \
    "$(awk '{print $2}' "$WORK/$which.txt" | median)" \
    "$(awk '{print $3}' "$WORK/$which.txt" | median)" \
    "$(awk '{print $4}' "$WORK/$which.txt" | median)" \
    "$(awk '{s += $6 + $7} END {print s + 0}' "$WORK/$which.txt")"
done
echo
echo "Datasette's peak memory: $(hwm_mb "$server") MB"
