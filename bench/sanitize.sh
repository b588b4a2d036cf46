#!/usr/bin/env bash
# /healthz latency while the worst-case job descriptions are being posted: four clients
# each sending, over and over, a description of "<ul><li>" repeated 12,000 times (96 KB
# of nested lists). Measures /healthz alone, then with the four clients running, per
# binary, side by side in one run.
#
#   bench/sanitize.sh                                  # the current release build
#   BENCH_BINS="before:path/to/old after:path/to/new" bench/sanitize.sh
#
# Needs: cargo (without BENCH_BINS), wrk, curl, python3. Traffic stays on 127.0.0.1.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/bench/lib.sh"
RUNS="${BENCH_RUNS:-3}"
DURATION="${BENCH_DURATION:-5}"
if [ -z "${BENCH_BINS:-}" ]; then
  (cd "$ROOT" && cargo build --release --quiet --bin jobboard)
  BENCH_BINS="current:${CARGO_TARGET_DIR:-$ROOT/target}/release/jobboard"
fi
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/jobboard-sanitize.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT


python3 -c 'import json; print(json.dumps({"title": "Nested", "company_name": "Acme", "description": "<ul><li>" * 12000}))' >"$WORK/worst.json"

# One poster: sends the worst case until told to stop, one status code per line.
poster() {
  local url="$1" key="$2" out="$3"
  while [ ! -f "$WORK/stop" ]; do
    curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -H "x-api-key: $key" \
      -H 'content-type: application/json' --data-binary @"$WORK/worst.json" "$url/api/jobs" >>"$out" || true
  done
}

healthz() {
  wrk -t2 -c16 -d"${DURATION}s" -s "$ROOT/bench/report.lua" --timeout 10s "$1/healthz" | grep '^RESULT'
}

echo "| binary | load | /healthz p50 ms | /healthz p99 ms | /healthz requests/s | worst-case posts answered (median time s) | statuses |"
echo "|---|---|---|---|---|---|---|"
for entry in $BENCH_BINS; do
  label="${entry%%:*}" bin="${entry#*:}"
  db="sqlite://$WORK/$label.db"
  "$bin" --database "$db" migrate >/dev/null
  org=$("$bin" --database "$db" orgs create --name bench | tail -n 1)
  key=$("$bin" --database "$db" keys create --org "$org" --read-limit 100000 --write-limit 100000 | tail -n 1)
  port=$(free_port)
  RUST_LOG=warn "$bin" --database "$db" serve --listen "127.0.0.1:$port" --no-worker >"$WORK/$label.log" 2>&1 &
  server=$!
  PIDS+=("$server")
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
  url="http://127.0.0.1:$port"
  for mode in idle posting; do
    : >"$WORK/runs"
    : >"$WORK/posts"
    for _ in $(seq 1 "$RUNS"); do
      rm -f "$WORK/stop"
      posters=()
      if [ "$mode" = posting ]; then
        for _ in 1 2 3 4; do poster "$url" "$key" "$WORK/posts" & posters+=($!); done
        sleep 1   # the four posters are under way before measuring
      fi
      healthz "$url" >>"$WORK/runs"
      touch "$WORK/stop"
      for p in "${posters[@]}"; do wait "$p" 2>/dev/null || true; done
    done
    p50=$(awk '{print $3}' "$WORK/runs" | median)
    p99=$(awk '{print $4}' "$WORK/runs" | median)
    rps=$(awk '{print $2}' "$WORK/runs" | median)
    if [ "$mode" = posting ]; then
      n=$(wc -l <"$WORK/posts")
      t=$(awk '{print $2}' "$WORK/posts" | median)
      codes=$(awk '{print $1}' "$WORK/posts" | sort | uniq -c | awk '{printf "%s%s x%s", (NR>1?", ":""), $2, $1}')
      printf '| %s | 4 posters | %.2f | %.2f | %.0f | %s (%.3f) | %s |\n' "$label" "$p50" "$p99" "$rps" "$n" "$t" "$codes"
    else
      printf '| %s | idle | %.2f | %.2f | %.0f | | |\n' "$label" "$p50" "$p99" "$rps"
    fi
  done
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
done
