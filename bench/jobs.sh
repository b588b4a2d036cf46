#!/usr/bin/env bash
# Benchmark of the jobs API on SQLite and PostgreSQL with 1,000,000 seeded jobs.
#
#   bench/jobs.sh                        # both backends (PostgreSQL when a URL is given)
#   BENCH_JOBS=100000 bench/jobs.sh      # fewer jobs, for a quick look
#   BENCH_KEEP=DIR bench/jobs.sh         # seed once into DIR, reuse the seeded databases later
#   BENCH_BIN=path/to/jobboard bench/jobs.sh   # measure another build (e.g. an older one)
#   BENCH_ONLY='healthz|page 1' bench/jobs.sh   # only the endpoints whose label matches
#   BENCH_SET=board bench/jobs.sh        # the public board's pages beside GET /api/jobs, and
#                                        # the sitemap's memory (bench/board.sh)
#   BENCH_SET=dashboard bench/jobs.sh    # the dashboard's heaviest pages (its jobs list,
#                                        # analytics over 12 months) beside the API
#                                        # (bench/dashboard.sh)
#   BENCH_SET=accounts bench/jobs.sh     # the members' pages of an employer who owns 1,000
#                                        # jobs and made 1,000 applications, signed in
#                                        # through the mailed link (bench/accounts.sh)
#   BENCH_SET=search bench/jobs.sh       # searches nobody ran before: a mix of 50,000
#                                        # distinct searches with filters (search_mix.py),
#                                        # each sent once, uncached; and the server's memory
#   BENCH_NODES=3 bench/jobs.sh          # PostgreSQL: three `jobboard serve` processes on the
#                                        # one database behind HAProxy (round robin), measured
#                                        # through the balancer (needs haproxy)
#
# JOBBOARD_SEARCH_INDEX_MB=0 runs the servers without their in-memory search index (lists
# answered by SQL, as before it existed), for before-and-after tables.
#
# Needs: cargo, wrk, python3 (standard library), and for PostgreSQL psql plus
# JOBBOARD_BENCH_POSTGRES_URL (or JOBBOARD_TEST_POSTGRES_URL): a role that may create
# databases. Builds the release binary, seeds a fresh database per backend, starts the
# server on 127.0.0.1, and runs wrk against each endpoint (RUNS runs of DURATION each,
# after a warm-up); prints a Markdown table of the medians. Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. bench/lib.sh
export BENCH_DIR="$ROOT/bench"

JOBS="${BENCH_JOBS:-1000000}"
RUNS="${BENCH_RUNS:-3}"
DURATION="${BENCH_DURATION:-5s}"
CONNS="${BENCH_CONNECTIONS:-50}"
THREADS="${BENCH_THREADS:-2}"
# The search and posting scripts split their lines between wrk's threads by this count.
export WRK_THREADS="$THREADS"
PG_URL="${JOBBOARD_BENCH_POSTGRES_URL:-${JOBBOARD_TEST_POSTGRES_URL:-}}"
BACKENDS="${BENCH_BACKENDS:-sqlite postgres}"
# With BENCH_KEEP set to a directory, the seeded SQLite file is kept there (and on
# PostgreSQL a seeded template database is kept); later runs copy them instead of seeding
# again, so every run starts from the same data. Remove the file (or drop the database
# jobboard_bench_seed_N) after a schema change.
KEEP="${BENCH_KEEP:-}"
# The servers serve /metrics behind this token (read by wait_for_index).
export JOBBOARD_METRICS_TOKEN="${JOBBOARD_METRICS_TOKEN:-bench-metrics-token-0123456789}"

bench_bin
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/jobboard-bench.XXXXXX")
SERVER=""
# With BENCH_NODES=N (N > 1, PostgreSQL only) N servers run behind HAProxy.
NODES="${BENCH_NODES:-1}"
EXTRA_PIDS=()
stop_extra() {
  local p
  for p in "${EXTRA_PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  EXTRA_PIDS=()
}
cleanup() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  stop_extra
  rm -rf "$WORK"
}
trap cleanup EXIT


# The endpoints measured: label, path, and an optional request header (POST bodies come
# from post.lua). Job lists are served from the list cache while nothing changes; the
# `Cache-Control: no-cache` rows make every request render afresh (the cost of a first read,
# or of a read right after a write).
ENDPOINTS=(
  "healthz|/healthz"
  "GET /jobs page 1|/api/jobs"
  "GET /jobs page 500|/api/jobs?page=500"
  "GET /jobs filtered|/api/jobs?job_types=full-time,contract&is_remote=true&locations=berlin,paris"
  "GET /jobs search (1 word)|/api/jobs?search=pharmac"
  "GET /jobs search (2 words)|/api/jobs?search=rust%20mech"
  "GET /jobs page 1, uncached|/api/jobs|Cache-Control: no-cache"
  "GET /jobs page 500, uncached|/api/jobs?page=500|Cache-Control: no-cache"
  "GET /jobs filtered, uncached|/api/jobs?job_types=full-time,contract&is_remote=true&locations=berlin,paris|Cache-Control: no-cache"
  "GET /jobs search (1 word), uncached|/api/jobs?search=pharmac|Cache-Control: no-cache"
  "GET /jobs search (2 words), uncached|/api/jobs?search=rust%20mech|Cache-Control: no-cache"
  "POST /jobs|/api/jobs"
)

# The board's pages, measured beside the API list they mirror (BENCH_SET=board). @SLUG@ is
# the newest live job. The sitemap index names 20 parts of 50,000 jobs at 1,000,000 jobs;
# the parts are measured apart (one at a time: each is a 5 MB document), with the memory
# they cost the server (see sitemap_memory).
BOARD_ENDPOINTS=(
  "GET /api/jobs page 1|/api/jobs"
  "GET /api/jobs search (1 word)|/api/jobs?search=pharmac"
  "board / page 1|/"
  "board / search (1 word)|/?search=pharmac"
  "board job page|/jobs/@SLUG@"
  "board job page, counted as a visit|/jobs/@SLUG@|User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
  "board sitemap.xml (index)|/sitemap.xml"
  "GET /api/jobs page 1, uncached|/api/jobs|Cache-Control: no-cache"
  "GET /api/jobs search (1 word), uncached|/api/jobs?search=pharmac|Cache-Control: no-cache"
  "board / page 1, uncached|/|Cache-Control: no-cache"
  "board / search (1 word), uncached|/?search=pharmac|Cache-Control: no-cache"
  "board job page, uncached|/jobs/@SLUG@|Cache-Control: no-cache"
)
if [ "${BENCH_SET:-api}" = board ]; then ENDPOINTS=("${BOARD_ENDPOINTS[@]}"); fi

# The dashboard's heaviest pages, signed in (BENCH_SET=dashboard; @COOKIE@ is the session
# bench/dashboard_setup.py signs in, with a year of analytics ingested), beside the API
# calls that read the same data. Dashboard pages are never cached: each renders afresh.
DASHBOARD_ENDPOINTS=(
  "GET /api/jobs page 1, uncached|/api/jobs|Cache-Control: no-cache"
  "dashboard jobs, pending tab|/dashboard/jobs|@COOKIE@"
  "dashboard jobs, active tab|/dashboard/jobs?status=active|@COOKIE@"
  "dashboard jobs, all, page 1,000|/dashboard/jobs?status=all&page=1000|@COOKIE@"
  "dashboard jobs, search (1 word)|/dashboard/jobs?status=all&search=pharmac|@COOKIE@"
  "GET /api/analytics?period=12mo|/api/analytics?period=12mo"
  "dashboard analytics, 12 months|/dashboard/analytics?period=12mo|@COOKIE@"
  "dashboard analytics, 30 days|/dashboard/analytics?period=30d|@COOKIE@"
)
if [ "${BENCH_SET:-api}" = dashboard ]; then ENDPOINTS=("${DASHBOARD_ENDPOINTS[@]}"); fi

# The members' pages (BENCH_SET=accounts; @COOKIE@ is the session of an employer who owns
# 1,000 jobs and made 1,000 applications, set up by bench/accounts_setup.py), beside the
# API list. Account pages are never cached. The server gets an SMTP address but no worker,
# so the sign-in mail waits in the outbox for the setup to read.
ACCOUNTS_ENDPOINTS=(
  "GET /api/jobs page 1, uncached (reference)|/api/jobs|Cache-Control: no-cache"
  "account home|/account|@COOKIE@"
  "account jobs, page 1 (50 of 1,000, with counts)|/account/jobs|@COOKIE@"
  "account jobs, page 20 (the last)|/account/jobs?page=20|@COOKIE@"
  "account export (1,000 jobs, 1,000 applications)|/account/export|@COOKIE@"
)
if [ "${BENCH_SET:-api}" = accounts ]; then
  ENDPOINTS=("${ACCOUNTS_ENDPOINTS[@]}")
  export JOBBOARD_SMTP_URL=smtp://127.0.0.1:9 JOBBOARD_MAIL_FROM=bench@example.test
fi

# First-time searches (BENCH_SET=search): the mix's requests are distinct searches with
# filters, each sent once (every run starts at another part of the 50,000), and with
# `Cache-Control: no-cache`, so none is answered from the list cache. "engineer" begins a
# word of about 50,000 of the seeded jobs.
SEARCH_ENDPOINTS=(
  "healthz|/healthz"
  "GET /api/jobs page 1, cached|/api/jobs"
  "GET /api/jobs page 1, uncached|/api/jobs|Cache-Control: no-cache"
  "one common word, uncached|/api/jobs?search=engineer|Cache-Control: no-cache"
  "search mix, uncached|/api/jobs|Cache-Control: no-cache"
  "board / search mix, uncached|/|Cache-Control: no-cache"
)
if [ "${BENCH_SET:-api}" = search ]; then
  ENDPOINTS=("${SEARCH_ENDPOINTS[@]}")
  python3 "$BENCH_DIR/search_mix.py" 50000 >"$WORK/mix.txt"
  # The board takes the same query string at `/`.
  sed 's|^/api/jobs?|/?|' "$WORK/mix.txt" >"$WORK/board-mix.txt"
fi

# The server's resident memory (kB): now, and its peak so far.
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }

# Reads every sitemap part (4 at a time, as a crawler might) on an idle server and reports
# the time of each and the server's memory above its idle level.
sitemap_memory() {
  local base="$1" idle parts n start total
  idle=$(rss_kb "$SERVER")
  parts=$(curl -fsS "$base/sitemap.xml" | grep -o '/sitemaps/jobs-[0-9]*\.xml' | wc -l)
  start=$(date +%s.%N)
  for n in $(seq 1 "$parts"); do echo "$n"; done |
    xargs -P 4 -I{} curl -fsS -o /dev/null -w '%{size_download} %{time_total}\n' "$base/sitemaps/jobs-{}.xml" >"$WORK/parts.txt"
  total=$(echo "$(date +%s.%N) - $start" | bc)
  local urls
  urls=$(for n in $(seq 1 "$parts"); do curl -fsS "$base/sitemaps/jobs-$n.xml"; done | grep -c '<loc>')
  awk -v idle="$idle" -v hwm="$(hwm_kb "$SERVER")" -v parts="$parts" -v total="$total" -v urls="$urls" '
    { bytes += $1; if ($2 > max) max = $2 }
    END { printf "| sitemap: %d parts, %d URLs, %.0f MB | all parts in %.1f s (4 at a time), slowest part %.2f s | server memory: idle %.0f MB, peak %.0f MB (+%.0f MB) |\n",
          parts, urls, bytes / 1e6, total, max, idle / 1024, hwm / 1024, (hwm - idle) / 1024 }' "$WORK/parts.txt"
}


measure() {
  local label="$1" url="${2//@SLUG@/$SLUG}" key="$3" extra="${4:-X-Bench: 1}" script="$BENCH_DIR/report.lua"
  extra="${extra//@COOKIE@/${COOKIE:-X-Bench: 1}}"
  [ "$label" = "POST /jobs" ] && script="$BENCH_DIR/post.lua"
  case "$label" in
    "search mix"*) script="$BENCH_DIR/search_mix.lua"; export SEARCH_MIX="$WORK/mix.txt" ;;
    "board / search mix"*) script="$BENCH_DIR/search_mix.lua"; export SEARCH_MIX="$WORK/board-mix.txt" ;;
  esac
  SEARCH_MIX_START=40000 wrk -t"$THREADS" -c"$CONNS" -d2s -H "x-api-key: $key" -H "$extra" -s "$script" "$url" >/dev/null
  local out="$WORK/runs.txt" run=0
  : >"$out"
  for _ in $(seq 1 "$RUNS"); do
    SEARCH_MIX_START=$((run * 10000)) wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" -H "x-api-key: $key" -H "$extra" -s "$script" --timeout 10s "$url" \
      | grep '^RESULT' >>"$out"
    run=$((run + 1))
  done
  local rps p50 p99 bad
  rps=$(awk '{print $2}' "$out" | median)
  p50=$(awk '{print $3}' "$out" | median)
  p99=$(awk '{print $4}' "$out" | median)
  bad=$(awk '{s+=$6+$7} END {print s+0}' "$out")
  printf '%s|%.0f|%.2f|%.2f|%s\n' "$label" "$rps" "$p50" "$p99" "$bad"
}

run_backend() {
  local backend="$1" db name="jobboard_bench_$$"
  case "$backend" in
    sqlite) db="sqlite://$WORK/bench.db" ;;
    postgres)
      if [ -z "$PG_URL" ]; then echo "skipping PostgreSQL: no JOBBOARD_BENCH_POSTGRES_URL" >&2; return; fi
      psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $name" >/dev/null
      psql "$PG_URL" -qc "CREATE DATABASE $name" >/dev/null
      db="${PG_URL%/*}/$name"
      ;;
  esac
  local seed_db="" seed_name="jobboard_bench_seed_$JOBS"
  if [ -n "$KEEP" ]; then
    mkdir -p "$KEEP"
    if [ "$backend" = sqlite ]; then
      seed_db="$KEEP/sqlite-$JOBS.db"
      if [ -f "$seed_db" ]; then
        echo "== $backend: reusing $seed_db" >&2
        cp "$seed_db" "$WORK/bench.db"
        start_and_measure "$backend" "$db" "$(cat "$seed_db.key")"
        return
      fi
    elif psql "$PG_URL" -tAc "SELECT 1 FROM pg_database WHERE datname = '$seed_name'" | grep -q 1; then
      echo "== $backend: reusing database $seed_name" >&2
      psql "$PG_URL" -qc "DROP DATABASE $name" >/dev/null
      psql "$PG_URL" -qc "CREATE DATABASE $name TEMPLATE $seed_name" >/dev/null
      start_and_measure "$backend" "$db" "$(psql "$PG_URL" -tAc "SELECT description FROM pg_database d JOIN pg_shdescription s ON s.objoid = d.oid WHERE d.datname = '$seed_name'")"
      return
    fi
  fi
  local org key
  read -r org key < <(bench_org_and_key "$BIN" "$db" "$([ "$backend" = sqlite ] && echo "$WORK/bench.db" || echo postgres)")
  echo "== $backend: seeding $JOBS jobs" >&2
  if [ "$backend" = sqlite ]; then
    python3 "$BENCH_DIR/seed.py" sqlite "$WORK/bench.db" "$org" "$JOBS"
  else
    python3 "$BENCH_DIR/seed.py" postgres "$db" "$org" "$JOBS"
  fi
  if [ -n "$KEEP" ]; then
    if [ "$backend" = sqlite ]; then
      cp "$WORK/bench.db" "$seed_db" && echo "$key" >"$seed_db.key"
    else
      psql "$PG_URL" -qc "CREATE DATABASE $seed_name TEMPLATE $name" >/dev/null
      psql "$PG_URL" -qc "COMMENT ON DATABASE $seed_name IS '$key'" >/dev/null
    fi
  fi
  start_and_measure "$backend" "$db" "$key"
}

wait_ready() {
  for _ in $(seq 1 200); do
    curl -fsS "http://127.0.0.1:$1/readyz" >/dev/null 2>&1 && return
    sleep 0.1
  done
}

# Waits until the node on port $1 holds a search index (`serve` builds the largest
# organizations' indexes at start; lists are answered by SQL until then) and reports the
# time it took and its size. Skipped with search_index_mb = 0.
wait_indexed() {
  local started=$SECONDS m
  [ "${JOBBOARD_SEARCH_INDEX_MB:-}" = 0 ] && return
  for _ in $(seq 1 6000); do
    m=$(curl -fsS -H "Authorization: Bearer $JOBBOARD_METRICS_TOKEN" "http://127.0.0.1:$1/metrics" 2>/dev/null || true)
    if grep -q '^jobboard_search_indexes [1-9]' <<<"$m"; then
      echo "== search index ready after about $((SECONDS - started)) s, $(($(awk '/^jobboard_search_index_bytes /{printf "%d", $2}' <<<"$m") / 1048576)) MiB" >&2
      return
    fi
    sleep 0.1
  done
  echo "== no search index after 600 s" >&2
}

# Starts NODES-1 more servers on the database and HAProxy in front of all of them; sets
# `port` to the balancer's.
start_cluster() {
  local db="$1" first="$2" n p backends="" lb
  backends="    server node1 127.0.0.1:$first"
  for n in $(seq 2 "$NODES"); do
    p=$(free_port)
    RUST_LOG=warn "$BIN" --database "$db" serve --listen "127.0.0.1:$p" --no-worker \
      >"$WORK/server$n.log" 2>&1 &
    EXTRA_PIDS+=($!)
    wait_ready "$p"
    wait_indexed "$p"
    backends="$backends
    server node$n 127.0.0.1:$p"
  done
  lb=$(free_port)
  cat >"$WORK/haproxy.cfg" <<CFG
global
    maxconn 4096
defaults
    mode http
    option http-keep-alive
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend bench
    bind 127.0.0.1:$lb
    default_backend nodes
backend nodes
    balance roundrobin
$backends
CFG
  haproxy -f "$WORK/haproxy.cfg" -db >"$WORK/haproxy.log" 2>&1 &
  EXTRA_PIDS+=($!)
  wait_ready "$lb"
  echo "== $NODES nodes behind HAProxy on 127.0.0.1:$lb" >&2
  port=$lb
}

start_and_measure() {
  local backend="$1" db="$2" key="$3" port
  port=$(free_port)
  RUST_LOG=warn "$BIN" --database "$db" serve --listen "127.0.0.1:$port" --no-worker \
    >"$WORK/server.log" 2>&1 &
  SERVER=$!
  wait_ready "$port"
  wait_indexed "$port"
  if [ "$NODES" -gt 1 ] && [ "$backend" = postgres ]; then start_cluster "$db" "$port"; fi
  IDLE_KB=$(rss_kb "$SERVER")
  SLUG=$(curl -fsS -H "x-api-key: $key" "http://127.0.0.1:$port/api/jobs?per_page=1" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["data"][0]["slug"])')
  if [ "${BENCH_SET:-api}" = dashboard ]; then
    echo "== $backend: a staff user, its session, a year of analytics" >&2
    COOKIE=$(python3 "$BENCH_DIR/dashboard_setup.py" "$BIN" "$db" "$port" "$key" | tail -n 1)
  fi
  if [ "${BENCH_SET:-api}" = accounts ]; then
    echo "== $backend: an employer with 1,000 jobs and 1,000 applications, signed in" >&2
    COOKIE=$(python3 "$BENCH_DIR/accounts_setup.py" "$BIN" "$db" "$port" "$key" 2>"$WORK/plans.txt" | tail -n 1)
    { echo; echo "### $backend, $JOBS jobs: query plans of the account pages"; echo; echo '```text'; cat "$WORK/plans.txt"; echo '```'; } | tee -a "$WORK/report.md"
  fi
  if [ "${BENCH_SET:-api}" = board ]; then
    echo "== $backend: sitemap memory" >&2
    { echo; echo "### $backend, $JOBS jobs: sitemap"; echo; sitemap_memory "http://127.0.0.1:$port"; } | tee -a "$WORK/report.md"
  fi
  echo "== $backend: measuring ($RUNS x $DURATION per endpoint, $CONNS connections)" >&2
  {
    echo
    if [ "$NODES" -gt 1 ] && [ "$backend" = postgres ]; then
      echo "### $backend, $JOBS jobs, $NODES nodes behind HAProxy"
    else
      echo "### $backend, $JOBS jobs"
    fi
    echo
    echo "| Endpoint | Requests/s (median) | p50 ms | p99 ms | non-2xx + errors |"
    echo "|---|---:|---:|---:|---:|"
    for e in "${ENDPOINTS[@]}"; do
      local label path extra
      IFS='|' read -r label path extra <<<"$e"
      if [ -n "${BENCH_ONLY:-}" ] && ! grep -Eq "$BENCH_ONLY" <<<"$label"; then continue; fi
      measure "$label" "http://127.0.0.1:$port$path" "$key" "$extra" |
        awk -F'|' '{printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5}'
      if ! kill -0 "$SERVER" 2>/dev/null; then
        echo "the server stopped during '$label'; its log:" >&2
        tail -n 30 "$WORK/server.log" >&2
        exit 1
      fi
    done
  } | tee -a "$WORK/report.md"
  if [ "${BENCH_SET:-api}" = search ]; then
    { echo; echo "server memory ($backend): idle $((IDLE_KB / 1024)) MB, now $(($(rss_kb "$SERVER") / 1024)) MB, peak $(($(hwm_kb "$SERVER") / 1024)) MB"; } | tee -a "$WORK/report.md"
  fi
  kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""
  stop_extra
  if [ "$backend" = postgres ]; then
    psql "$PG_URL" -qc "DROP DATABASE IF EXISTS jobboard_bench_$$" >/dev/null || true
  fi
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, wrk -t$THREADS -c$CONNS, release build" >&2
for b in $BACKENDS; do run_backend "$b"; done
