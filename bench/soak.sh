#!/usr/bin/env bash
# A soak: mixed traffic for an hour at about half of the measured capacity, sampled every
# minute, to see that memory, files, the database and latency stay flat.
#
#   bench/soak.sh                          # SQLite, 60 minutes
#   SOAK_MINUTES=5 bench/soak.sh           # a short look
#   SOAK_BACKEND=postgres bench/soak.sh    # PostgreSQL (JOBBOARD_BENCH_POSTGRES_URL or
#                                          # JOBBOARD_TEST_POSTGRES_URL: a role that may
#                                          # create databases)
#   SOAK_HEAP=1 bench/soak.sh              # also the allocator's own count, every minute:
#                                          # the bytes in use and the bytes it holds (from
#                                          # /metrics when the server reports them, as a
#                                          # build with jemalloc does; else gdb attaches for
#                                          # half a second to call glibc's malloc_stats)
#
# One `jobboard serve` (release build, every role: API, board, workers, scheduler) on
# 127.0.0.1 with mail to an SMTP sink, and bench/soak_side.py for the outside world (a
# webhook receiver that takes SOAK_HOOK_DELAY seconds, 0.2, to answer; a job feed that
# changes every minute; the SMTP sink). The organization has a webhook subscription to
# every event, an import source read every 5 minutes, and 50 confirmed job alerts (20
# instant, 30 daily); it starts with the jobs 15 s of posting gives.
#
# The capacity is measured first: the read mix (bench/soak_reads.lua: API lists and
# searches, the board's home page and searches, the feed, the sitemap) at full speed for
# 20 s with SOAK_READERS connections. The soak then sends the read mix at half that rate,
# and beside it SOAK_WRITERS connections going round bench/soak_writes.lua (post a job,
# apply to it, view it, delete the oldest beyond SOAK_KEEP: the board keeps its size while
# it is written), each request SOAK_WRITE_DELAY_MS (100) after the last answer. Every
# minute is its own pair of wrk runs, so each minute has its own latency; after each the
# server's resident memory (and its anonymous part: heap and stacks; with SOAK_HEAP=1 also
# the allocator's bytes in use and held), open files, database and WAL size, the jobs,
# what the side received, and the search index's bytes are written to soak-BACKEND.csv in
# BENCH_OUT (default: the current directory), and drawn in soak-BACKEND.svg
# (bench/soak_plot.py).
#
# Needs: cargo, wrk, curl, python3 (standard library); psql for PostgreSQL; gdb for SOAK_HEAP
# with glibc's allocator.
# Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. bench/lib.sh
export BENCH_DIR="$ROOT/bench"

MINUTES="${SOAK_MINUTES:-60}"
BACKEND="${SOAK_BACKEND:-sqlite}"
READERS="${SOAK_READERS:-8}"
WRITERS="${SOAK_WRITERS:-2}"
export SOAK_KEEP="${SOAK_KEEP:-500}"
WRITE_DELAY="${SOAK_WRITE_DELAY_MS:-100}"
OUT="${BENCH_OUT:-$(pwd)}"
PG_URL="${JOBBOARD_BENCH_POSTGRES_URL:-${JOBBOARD_TEST_POSTGRES_URL:-}}"
export JOBBOARD_METRICS_TOKEN="bench-metrics-token-0123456789"

bench_bin
bench_workdir soak
python3 bench/grow_words.py >"$WORK/words.txt"
export GROW_WORDS="$WORK/words.txt" SOAK_STATE="$WORK/writers"

# The outside world.
side_http=$(free_port)
side_smtp=$(free_port)
export SOAK_SIDE_COUNTS="$WORK/side-counts"
python3 bench/soak_side.py "$side_http" "$side_smtp" >"$WORK/side.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 1 100); do grep -q ready "$WORK/side.log" 2>/dev/null && break; sleep 0.1; done

bench_database "$BACKEND" soak
file="$raise" # on SQLite, its file (db_mb and wal_mb read it on SQLite only)
read -r org key < <(bench_org_and_key "$BIN" "$db" "$raise")

port=$(free_port)
base="http://127.0.0.1:$port"
cat >"$WORK/soak.toml" <<EOF
public_url = "$base"
[webhooks]
allow_private_targets = true
[mail]
smtp_url = "smtp://127.0.0.1:$side_smtp"
from = "Soak Board <board@soak.example>"
EOF
RUST_LOG=warn "$BIN" --config "$WORK/soak.toml" --database "$db" serve --listen "127.0.0.1:$port" \
  >"$WORK/server.log" 2>&1 &
server=$!
PIDS+=("$server")
wait_up "$base/healthz"

curl -fsS -o /dev/null -H "x-api-key: $key" -H 'Content-Type: application/json' "$base/api/webhooks" \
  -d "{\"event\":\"*\",\"target_type\":\"webhook\",\"target_url\":\"http://127.0.0.1:$side_http/hook\"}"
"$BIN" --config "$WORK/soak.toml" --database "$db" imports create --org "$org" --kind jsonfeed \
  --url "http://127.0.0.1:$side_http/feed.json" --every 5 --status active >/dev/null
# 50 confirmed alerts (what the alert form and its confirmation mail would make), each
# matching one of the words the posted jobs use.
alerts_sql() {
  local id="$1" now="$2" n
  for n in $(seq 1 50); do
    local freq=daily
    [ "$n" -le 20 ] && freq=instant
    echo "INSERT INTO job_alerts (id, org_id, email, email_lower, frequency, query, status, cursor, created_at, confirmed_at) VALUES ($id, $org, 'alert$n@soak.example', 'alert$n@soak.example', '$freq', 'search=engineer', 'active', (SELECT COALESCE(MAX(seq), 0) FROM job_live_log), $now, $now);"
  done
}
if [ "$BACKEND" = sqlite ]; then
  alerts_sql "randomblob(16)" "CAST(strftime('%s','now') AS INTEGER) * 1000000" |
    python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.stdin.read()); c.commit()' "$file"
else
  alerts_sql "gen_random_uuid()" "now()" | psql "$db" -q >/dev/null
fi

# The board's first jobs.
wrk -t2 -c4 -d15s -H "x-api-key: $key" -s bench/grow.lua "$base" >/dev/null

# The capacity of the read mix.
SOAK_DELAY_MS=0 wrk -t1 -c"$READERS" -d20s -H "x-api-key: $key" -s bench/soak_reads.lua "$base" \
  >"$WORK/capacity.txt"
read -r _ capacity cap_p50 _ < <(wrk_result "$WORK/capacity.txt")
# Each reader waits so that all of them together send half of it.
read_delay=$(python3 -c "r = $capacity / 2 / $READERS; print(max(0, round(1000 / r - $cap_p50)))")
echo "read mix capacity: $capacity req/s (p50 $cap_p50 ms); soak: $READERS readers, each $read_delay ms after an answer"

csv="$OUT/soak-$BACKEND.csv"
echo "minute,rss_mb,hwm_mb,anon_mb,open_files,db_mb,wal_mb,read_rps,read_p50_ms,read_p99_ms,write_rps,write_p50_ms,write_p99_ms,non2xx,socket_errors,jobs,hooks,mails,feeds,index_mb,heap_used_mb,heap_held_mb" >"$csv"
# The allocator's bytes in use and held: from /metrics when the server's allocator reports
# them (jemalloc: allocated, resident); else glibc's malloc_stats, called in the server by
# gdb, which writes to its standard error (the server's log): "in use bytes" and "system
# bytes" of all arenas, the last "Total" block.
heap_mb() {
  if [ "${SOAK_HEAP:-0}" != 1 ]; then echo ","; return; fi
  local reported
  reported=$(bench_metrics "$base" | awk '
    $1 == "jobboard_allocator_allocated_bytes" && $2 != "NaN" {u = $2}
    $1 == "jobboard_allocator_resident_bytes" && $2 != "NaN" {s = $2}
    END {if (u != "") printf "%.1f,%.1f", u / 1048576, s / 1048576}')
  if [ -n "$reported" ]; then echo "$reported"; return; fi
  gdb --readnever -p "$server" -batch -nx -ex 'call (void)malloc_stats()' >/dev/null 2>&1 || true
  awk '/^Total/ {t = 1; next} t && /system bytes/ {s = $NF} t && /in use bytes/ {u = $NF; t = 0}
       END {if (u != "") printf "%.1f,%.1f", u / 1048576, s / 1048576; else printf ","}' "$WORK/server.log"
}
db_mb() {
  if [ "$BACKEND" = sqlite ]; then
    python3 -c 'import os, sys; print(round(os.path.getsize(sys.argv[1]) / 2**20, 1))' "$file"
  else
    psql "$db" -Atc "SELECT round(pg_database_size(current_database()) / 1048576.0, 1)"
  fi
}
wal_mb() {
  if [ "$BACKEND" = sqlite ]; then
    python3 -c 'import os, sys; p = sys.argv[1] + "-wal"; print(round(os.path.getsize(p) / 2**20, 1) if os.path.exists(p) else 0)' "$file"
  else
    psql "$db" -Atc "SELECT round(COALESCE(SUM(size), 0) / 1048576.0, 1) FROM pg_ls_waldir()" 2>/dev/null || echo NA
  fi
}
jobs_now() {
  curl -fsS -H "x-api-key: $key" -H 'Cache-Control: no-cache' "$base/api/jobs?per_page=1" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["meta"]["pagination"]["total_items"])'
}
for minute in $(seq 1 "$MINUTES"); do
  SOAK_DELAY_MS="$read_delay" wrk -t1 -c"$READERS" -d60s -H "x-api-key: $key" \
    -s bench/soak_reads.lua "$base" >"$WORK/reads.txt" &
  readers=$!
  SOAK_DELAY_MS="$WRITE_DELAY" wrk -t"$WRITERS" -c"$WRITERS" -d60s -H "x-api-key: $key" \
    -s bench/soak_writes.lua "$base" >"$WORK/writes.txt" &
  writers=$!
  wait "$readers" "$writers"
  read -r _ r_rps r_p50 r_p99 _ r_bad r_err < <(wrk_result "$WORK/reads.txt")
  read -r _ w_rps w_p50 w_p99 _ w_bad w_err < <(wrk_result "$WORK/writes.txt")
  read -r hooks mails feeds <"$SOAK_SIDE_COUNTS" || true
  index=$(index_state "$base" | awk '{printf "%.1f", $2 / 1048576}')
  row="$minute,$(rss_mb "$server"),$(hwm_mb "$server"),$(anon_mb "$server"),$(ls "/proc/$server/fd" | wc -l),$(db_mb),$(wal_mb)"
  row="$row,$r_rps,$r_p50,$r_p99,$w_rps,$w_p50,$w_p99,$((r_bad + w_bad)),$((r_err + w_err))"
  row="$row,$(jobs_now),${hooks:-0},${mails:-0},${feeds:-0},$index,$(heap_mb)"
  echo "$row" >>"$csv"
  echo "$row"
done

python3 bench/soak_plot.py "$csv" >"$OUT/soak-$BACKEND.svg"
echo "server errors logged: $(grep -cE 'ERROR|panicked' "$WORK/server.log" || true)"
echo "samples: $csv; drawing: $OUT/soak-$BACKEND.svg"
