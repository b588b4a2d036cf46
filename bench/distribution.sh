#!/usr/bin/env bash
# Benchmarks of jobs in and out (docs/distribution.md), on SQLite and PostgreSQL:
#
#  1. Imports: a Greenhouse job board of BENCH_IMPORT_JOBS (10,000) jobs served on
#     127.0.0.1 (bench/greenhouse_board.py), imported by `jobboard imports run` into a fresh
#     database: the first run, a rerun with nothing changed, and a rerun with 1% of the
#     jobs changed; BENCH_RUNS fresh databases, medians of wall time and peak memory. The
#     file's time moves on before each run, so every run reads and parses the whole board
#     (an unchanged source that honours the validators answers a rerun with one 304).
#  2. Feeds: GET /feeds/indeed.xml and GET /feeds/jobs.json at BENCH_JOBS (1,000,000)
#     seeded jobs (bench/seed.py, as bench/jobs.sh seeds them; BENCH_KEEP reuses its
#     databases): time to first byte, total time and size of each of BENCH_RUNS reads, one
#     at a time, and the server's memory (resident when idle, peak after the reads). The
#     server runs without its search index (JOBBOARD_SEARCH_INDEX_MB=0: the feeds do not
#     use it, and its build would cloud the memory figures), scheduler and worker.
#  3. Filters: the `country` and `salary_min` filters of GET /api/jobs at BENCH_JOBS jobs,
#     uncached, beside a one-word search, answered by the node's search index (the server
#     started on the seeded database, the index built) and without it
#     (JOBBOARD_SEARCH_INDEX_MB=0: SQL answers).
#
#   bench/distribution.sh
#   BENCH_BACKENDS=sqlite BENCH_JOBS=100000 bench/distribution.sh
#   BENCH_PART=imports bench/distribution.sh    # or feeds
#
# Needs: cargo, curl, python3 (standard library), /usr/bin/time, and for PostgreSQL psql
# plus JOBBOARD_BENCH_POSTGRES_URL (or JOBBOARD_TEST_POSTGRES_URL). Traffic stays on
# 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. bench/lib.sh
IMPORT_JOBS="${BENCH_IMPORT_JOBS:-10000}"
JOBS="${BENCH_JOBS:-1000000}"
RUNS="${BENCH_RUNS:-3}"
PART="${BENCH_PART:-imports feeds filters}"
export JOBBOARD_METRICS_TOKEN="${JOBBOARD_METRICS_TOKEN:-bench-metrics-token-0123456789}"
PG_URL="${JOBBOARD_BENCH_POSTGRES_URL:-${JOBBOARD_TEST_POSTGRES_URL:-}}"
BACKENDS="${BENCH_BACKENDS:-sqlite postgres}"
KEEP="${BENCH_KEEP:-}"

bench_bin
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/jobboard-bench.XXXXXX")
PIDS=()
# The databases of this run are named after its process id (they are made in subshells,
# so they are found by name at the end).
cleanup() {
  local p d
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  if [ -n "$PG_URL" ]; then
    for d in $(psql "$PG_URL" -tAc "SELECT datname FROM pg_database WHERE datname LIKE 'jobboard_bench_import_$$\_%' OR datname = 'jobboard_bench_feeds_$$'" 2>/dev/null); do
      psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $d" >/dev/null 2>&1 || true
    done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_ready() {
  for _ in $(seq 1 600); do
    curl -fsS "http://127.0.0.1:$1/readyz" >/dev/null 2>&1 && return
    sleep 0.1
  done
  echo "server on $1 not ready" >&2; exit 1
}
status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }

# A fresh, migrated database of `backend` with one organization; prints its URL.
fresh_db() {
  local backend="$1" n="$2" name
  case "$backend" in
    sqlite) echo "sqlite://$WORK/import-$n.db" ;;
    postgres)
      name="jobboard_bench_import_$$_$n"
      psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $name" >/dev/null
      psql "$PG_URL" -qc "CREATE DATABASE $name" >/dev/null
      echo "${PG_URL%/*}/$name"
      ;;
  esac
}

# Runs `jobboard imports run` on `db`: prints "seconds peak_kb summary".
timed_run() {
  local db="$1" id="$2" out
  out=$( { JOBBOARD_ALLOW_PRIVATE_TARGETS=1 RUST_LOG=warn /usr/bin/time -f 'TIME %e %M' "$BIN" --database "$db" imports run "$id"; } 2>&1 )
  echo "$(grep '^TIME' <<<"$out" | awk '{print $2, $3}') $(grep -v '^TIME' <<<"$out" | tail -n 1)"
}

# Moves the served file's time a minute on from the last (so `If-Modified-Since` never
# matches: every run reads it whole).
STAMP=$(date +%s)
newer() {
  STAMP=$((STAMP + 60))
  touch -d "@$STAMP" "$WORK/site/board.json"
}

imports_part() {
  local port server
  port=$(free_port)
  python3 "$ROOT/bench/greenhouse_board.py" "$IMPORT_JOBS" "$WORK/board.json"
  python3 "$ROOT/bench/greenhouse_board.py" "$IMPORT_JOBS" "$WORK/board-changed.json" 1
  mkdir -p "$WORK/site"
  (cd "$WORK/site" && exec python3 -m http.server --bind 127.0.0.1 "$port" >/dev/null 2>&1) &
  server=$!
  PIDS+=("$server")
  for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null && break; sleep 0.1; done
  echo "### Import of a $IMPORT_JOBS-job Greenhouse board ($RUNS fresh databases, medians)"
  echo
  echo "| Backend | Run | Wall time (s) | Peak memory of the run (MB) | What it did |"
  echo "|---|---|---:|---:|---|"
  local backend i db org id
  for backend in $BACKENDS; do
    if [ "$backend" = postgres ] && [ -z "$PG_URL" ]; then echo "skipping PostgreSQL: no URL" >&2; continue; fi
    : >"$WORK/first.txt"; : >"$WORK/again.txt"; : >"$WORK/changed.txt"
    for i in $(seq 1 "$RUNS"); do
      db=$(fresh_db "$backend" "$i")
      "$BIN" --database "$db" migrate >/dev/null
      org=$("$BIN" --database "$db" orgs create --name bench | tail -n 1)
      id=$("$BIN" --database "$db" imports create --org "$org" --kind greenhouse \
        --url "http://127.0.0.1:$port/board.json" --status active | tail -n 1)
      cp "$WORK/board.json" "$WORK/site/board.json"
      newer
      timed_run "$db" "$id" >>"$WORK/first.txt"
      newer
      timed_run "$db" "$id" >>"$WORK/again.txt"
      cp "$WORK/board-changed.json" "$WORK/site/board.json"
      newer
      timed_run "$db" "$id" >>"$WORK/changed.txt"
      echo "== $backend run $i done" >&2
    done
    local f label
    for f in first again changed; do
      case "$f" in
        first) label="first run" ;;
        again) label="rerun, nothing changed" ;;
        changed) label="rerun, 1% changed" ;;
      esac
      printf '| %s | %s | %.2f | %.0f | %s |\n' "$backend" "$label" \
        "$(awk '{print $1}' "$WORK/$f.txt" | median)" \
        "$(awk '{print $2 / 1024}' "$WORK/$f.txt" | median)" \
        "$(tail -n 1 "$WORK/$f.txt" | cut -d' ' -f3- | sed 's/^.*: //')"
    done
  done
  echo
}

# The seeded database of `backend` (copied from BENCH_KEEP when there); prints its URL and
# the seeded organization's API key.
seeded_db() {
  local backend="$1" name="jobboard_bench_feeds_$$" seed_name="jobboard_bench_seed_$JOBS" db org key
  case "$backend" in
    sqlite)
      db="sqlite://$WORK/feeds.db"
      if [ -n "$KEEP" ] && [ -f "$KEEP/sqlite-$JOBS.db" ]; then
        echo "== sqlite: reusing $KEEP/sqlite-$JOBS.db" >&2
        cp "$KEEP/sqlite-$JOBS.db" "$WORK/feeds.db"
        "$BIN" --database "$db" migrate >/dev/null
        echo "$db $(cat "$KEEP/sqlite-$JOBS.db.key")"
        return
      fi
      ;;
    postgres)
      psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $name" >/dev/null
      db="${PG_URL%/*}/$name"
      if [ -n "$KEEP" ] && psql "$PG_URL" -tAc "SELECT 1 FROM pg_database WHERE datname = '$seed_name'" | grep -q 1; then
        echo "== postgres: reusing database $seed_name" >&2
        psql "$PG_URL" -qc "CREATE DATABASE $name TEMPLATE $seed_name" >/dev/null
        "$BIN" --database "$db" migrate >/dev/null
        echo "$db $(psql "$PG_URL" -tAc "SELECT description FROM pg_database d JOIN pg_shdescription s ON s.objoid = d.oid WHERE d.datname = '$seed_name'")"
        return
      fi
      psql "$PG_URL" -qc "CREATE DATABASE $name" >/dev/null
      ;;
  esac
  "$BIN" --database "$db" migrate >/dev/null
  org=$("$BIN" --database "$db" orgs create --name bench | tail -n 1)
  key=$("$BIN" --database "$db" keys create --org "$org" --read-limit 100000 --write-limit 100000 | tail -n 1)
  echo "== $backend: seeding $JOBS jobs" >&2
  if [ "$backend" = sqlite ]; then
    python3 "$ROOT/bench/seed.py" sqlite "$WORK/feeds.db" "$org" "$JOBS"
    if [ -n "$KEEP" ]; then mkdir -p "$KEEP"; cp "$WORK/feeds.db" "$KEEP/sqlite-$JOBS.db"; echo "$key" >"$KEEP/sqlite-$JOBS.db.key"; fi
  else
    python3 "$ROOT/bench/seed.py" postgres "$db" "$org" "$JOBS"
    if [ -n "$KEEP" ]; then
      psql "$PG_URL" -qc "CREATE DATABASE $seed_name TEMPLATE $name" >/dev/null
      psql "$PG_URL" -qc "COMMENT ON DATABASE $seed_name IS '$key'" >/dev/null
    fi
  fi
  echo "$db $key"
}

feeds_part() {
  echo "### Feeds at $JOBS seeded jobs (one read at a time, $RUNS reads each)"
  echo
  echo "| Backend | Feed | Jobs in it | Size (MB) | First byte (s, median) | Total (s, median) | Server memory: idle → peak (MB) |"
  echo "|---|---|---:|---:|---:|---:|---|"
  local backend db key port pid idle path jobs n
  for backend in $BACKENDS; do
    if [ "$backend" = postgres ] && [ -z "$PG_URL" ]; then echo "skipping PostgreSQL: no URL" >&2; continue; fi
    read -r db key < <(seeded_db "$backend")
    port=$(free_port)
    JOBBOARD_SEARCH_INDEX_MB=0 RUST_LOG=warn "$BIN" --database "$db" serve --listen "127.0.0.1:$port" \
      --no-scheduler --no-worker >"$WORK/server.log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    wait_ready "$port"
    curl -fsS -o /dev/null "http://127.0.0.1:$port/"
    idle=$(status_kb "$pid" VmRSS)
    for path in /feeds/indeed.xml /feeds/jobs.json; do
      : >"$WORK/feed.txt"
      for _ in $(seq 1 "$RUNS"); do
        curl -fsS -o /dev/null -w '%{time_starttransfer} %{time_total} %{size_download}\n' \
          "http://127.0.0.1:$port$path" >>"$WORK/feed.txt"
      done
      if [ "$path" = /feeds/indeed.xml ]; then
        jobs=$(curl -fsS "http://127.0.0.1:$port$path" | grep -o '<job>' | wc -l)
      else
        jobs=$(curl -fsS "http://127.0.0.1:$port$path" | tr ',' '\n' | grep -c '^"valid_through"')
      fi
      printf '| %s | %s | %s | %.0f | %.3f | %.1f | %.0f → %.0f |\n' "$backend" "$path" "$jobs" \
        "$(awk '{print $3 / 1048576}' "$WORK/feed.txt" | median)" \
        "$(awk '{print $1}' "$WORK/feed.txt" | median)" \
        "$(awk '{print $2}' "$WORK/feed.txt" | median)" \
        "$((idle / 1024))" "$(( $(status_kb "$pid" VmHWM) / 1024 ))"
    done
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
  echo
}

# Waits until the node on port $1 holds a search index.
wait_indexed() {
  for _ in $(seq 1 6000); do
    curl -fsS -H "Authorization: Bearer $JOBBOARD_METRICS_TOKEN" "http://127.0.0.1:$1/metrics" 2>/dev/null \
      | grep -q '^jobboard_search_indexes [1-9]' && return
    sleep 0.1
  done
  echo "no search index after 600 s" >&2
}

filters_part() {
  echo "### Filters at $JOBS seeded jobs, uncached (median of $RUNS requests each)"
  echo
  echo "| Backend | Request | With the search index (s) | Without it: SQL (s) |"
  echo "|---|---|---:|---:|"
  local backend db key port pid mb q
  for backend in $BACKENDS; do
    if [ "$backend" = postgres ] && [ -z "$PG_URL" ]; then continue; fi
    read -r db key < <(seeded_db "$backend")
    for mb in 128 0; do
      port=$(free_port)
      JOBBOARD_SEARCH_INDEX_MB=$mb RUST_LOG=warn "$BIN" --database "$db" serve --listen "127.0.0.1:$port" \
        --no-scheduler --no-worker >"$WORK/server.log" 2>&1 &
      pid=$!
      PIDS+=("$pid")
      wait_ready "$port"
      [ "$mb" != 0 ] && wait_indexed "$port"
      for q in "country=DE" "salary_min=50000" "country=DE&salary_min=50000" "country=DE&search=rust" "search=rust"; do
        : >"$WORK/q.txt"
        for _ in $(seq 1 "$RUNS"); do
          curl -fsS -o /dev/null -w '%{time_total}\n' -H "x-api-key: $key" -H 'Cache-Control: no-cache' \
            "http://127.0.0.1:$port/api/jobs?$q" >>"$WORK/q.txt"
        done
        echo "$q $(median <"$WORK/q.txt")" >>"$WORK/filters-$backend-$mb.txt"
      done
      kill "$pid"; wait "$pid" 2>/dev/null || true
    done
    join <(sort "$WORK/filters-$backend-128.txt") <(sort "$WORK/filters-$backend-0.txt") |
      awk -v b="$backend" '{printf "| %s | GET /api/jobs?%s | %.4f | %.3f |\n", b, $1, $2, $3}'
  done
  echo
}

echo "Release build of $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d), $(nproc) cores."
echo
for p in $PART; do
  case "$p" in
    imports) imports_part ;;
    feeds) feeds_part ;;
    filters) filters_part ;;
  esac
done
