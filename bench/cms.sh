#!/usr/bin/env bash
# Throughput of GET /api/cms/{slug} (the public list, first page of 50) over a collection of
# 100,000 published items, served from the read cache and uncached (`Cache-Control: no-cache`
# makes the server render every response from the database). Release build, SQLite, one
# node, wrk on 127.0.0.1. Prints a Markdown table: each run side by side, then the medians.
#
#   bench/cms.sh                      # 3 runs of 10 s each per mode
#   RUNS=3 DURATION=5s bench/cms.sh   # the figures in BENCHMARKS.md
#   RUNS=5 DURATION=20s bench/cms.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ITEMS="${ITEMS:-100000}"
RUNS="${RUNS:-3}"
DURATION="${DURATION:-10s}"
THREADS="${THREADS:-2}"
CONNECTIONS="${CONNECTIONS:-32}"

cargo build --release --quiet --bin jobboard
BIN="${CARGO_TARGET_DIR:-target}/release/jobboard"
WORK=$(mktemp -d)
PID=""
cleanup() {
  if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

DB="sqlite://$WORK/bench.db"
org=$("$BIN" --database "$DB" orgs create --name bench | tail -n 1)
key=$("$BIN" --database "$DB" keys create --org "$org" --read-limit 100000 --write-limit 1000 | tail -n 1)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
RUST_LOG=warn "$BIN" --database "$DB" serve --listen "127.0.0.1:$port" --no-scheduler --no-worker \
  >"$WORK/server.log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
  sleep 0.1
done
BASE="http://127.0.0.1:$port/api"

curl -fsS -o /dev/null -X POST "$BASE/cms" -H "x-api-key: $key" -H 'content-type: application/json' \
  -d '{"slug": "bench", "name": "Bench", "visibility": "public", "schema": [
        {"name": "title", "type": "text", "required": true}, {"name": "body", "type": "longtext"}]}'

# The items are written straight into the database: going through the API would take the
# write rate limit's time, not measure anything of interest here.
now_us=$(python3 -c 'import time; print(int(time.time() * 1e6))')
sqlite3 "$WORK/bench.db" >/dev/null <<SQL
PRAGMA busy_timeout = 10000;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $ITEMS)
INSERT INTO cms_items (id, org_id, collection_id, data, status, position, created_at, updated_at)
SELECT randomblob(16), $org, (SELECT id FROM cms_collections WHERE org_id = $org AND slug = 'bench'),
       json_object('title', 'Item ' || i, 'body', 'The body of item number ' || i || '.'),
       'published', 0, $now_us - i * 1000, $now_us - i * 1000
FROM n;
UPDATE cms_collections SET version = version + 1 WHERE slug = 'bench';
SQL

total=$(curl -fsS "$BASE/cms/bench" -H "x-api-key: $key" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
if [ "$total" != "$ITEMS" ]; then
  echo "expected $ITEMS items in the public list, found $total" >&2
  exit 1
fi

# Runs wrk once, with a fresh key (a key may make at most 100,000 reads a minute, so each
# run gets its own budget); prints "requests_per_second p50_ms p99_ms".
measure() {
  local run_key
  run_key=$("$BIN" --database "$DB" keys create --org "$org" --read-limit 100000 --write-limit 1000 | tail -n 1)
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -H "x-api-key: $run_key" "$@" "$BASE/cms/bench" |
    python3 -c '
import re, sys
text = sys.stdin.read()
def ms(v):
    n, unit = re.match(r"([\d.]+)(us|ms|s)", v).groups()
    return float(n) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p50 = ms(re.search(r"^\s+50%\s+(\S+)", text, re.M).group(1))
p99 = ms(re.search(r"^\s+99%\s+(\S+)", text, re.M).group(1))
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
if non2xx:
    sys.exit("wrk saw %s failed responses" % non2xx.group(1))
print("%.0f %.2f %.2f" % (rps, p50, p99))
'
}

declare -a cached uncached
for i in $(seq 1 "$RUNS"); do
  cached+=("$(measure)")
  uncached+=("$(measure -H 'Cache-Control: no-cache')")
done

python3 - "$ITEMS" "$DURATION" "$THREADS" "$CONNECTIONS" "${cached[@]}" -- "${uncached[@]}" <<'PY'
import statistics, sys
items, duration, threads, conns = sys.argv[1:5]
rest = sys.argv[5:]
split = rest.index("--")
modes = {"cached": rest[:split], "uncached": rest[split + 1:]}
print(f"{items} published items, first page of 50; wrk -t{threads} -c{conns} -d{duration}, runs side by side, then the median.\n")
print("| mode | requests/s (runs) | p50 ms (runs) | p99 ms (runs) | median req/s | median p50 ms | median p99 ms |")
print("|---|---|---|---|---|---|---|")
for mode, runs in modes.items():
    rows = [list(map(float, r.split())) for r in runs]
    cols = list(zip(*rows))
    fmt = lambda c, f: ", ".join(f.format(x) for x in c)
    print(f"| {mode} | {fmt(cols[0], '{:.0f}')} | {fmt(cols[1], '{:.2f}')} | {fmt(cols[2], '{:.2f}')} "
          f"| {statistics.median(cols[0]):.0f} | {statistics.median(cols[1]):.2f} | {statistics.median(cols[2]):.2f} |")
PY
