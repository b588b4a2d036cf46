#!/usr/bin/env bash
# Lighthouse audits of the public board: the home page and a job page must score at least
# MIN (default 95) in performance, accessibility, best practices and SEO. Runs Debian's
# Chromium headless against a server started here on 127.0.0.1 with two jobs, every other
# host name resolving to nothing. The npm package `lighthouse` is installed into
# JOBBOARD_TOOLS_DIR (default ~/.cache/jobboard-tools) when missing: version 13 on Node 22
# and later, else 12.
#
#   scripts/lighthouse.sh            # prints each score, fails below MIN
set -euo pipefail
cd "$(dirname "$0")/.."
MIN="${MIN:-95}"
TOOLS="${JOBBOARD_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/jobboard-tools}"
eval "$(scripts/browser-setup.sh --install)"
LH="$TOOLS/node_modules/.bin/lighthouse"
if [ ! -x "$LH" ]; then
  major=$(node -p 'process.versions.node.split(".")[0]')
  version=12
  if [ "$major" -ge 22 ]; then version=13; fi
  echo "installing lighthouse@$version from npm into $TOOLS" >&2
  mkdir -p "$TOOLS"
  npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error "lighthouse@$version" >&2
fi

BIN=$(scripts/dev-binary.sh)
WORK=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
DB="sqlite://$WORK/board.db"
"$BIN" --database "$DB" migrate >/dev/null
org=$("$BIN" --database "$DB" orgs create --name "Lighthouse jobs" | tail -n 1)
"$BIN" --database "$DB" orgs update "$org" --tagline "Jobs to audit" >/dev/null
key=$("$BIN" --database "$DB" keys create --org "$org" | tail -n 1)
RUST_LOG=warn "$BIN" --database "$DB" serve --listen "127.0.0.1:$port" >"$WORK/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
post() {
  curl -fsS -H "x-api-key: $key" -H 'content-type: application/json' -d "$1" \
    "http://127.0.0.1:$port/api/jobs" | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"]["slug"])'
}
slug=$(post '{"title": "Senior Rust engineer", "company_name": "Acme", "status": "active",
  "description": "<p>Build a fast job board.</p><ul><li>Rust</li><li>SQL</li></ul>",
  "job_type": "full-time", "location": "Berlin", "is_remote": true, "salary_min": 60000,
  "salary_max": 80000, "salary_currency": "EUR", "salary_period": "yearly",
  "how_to_apply_method": "website", "how_to_apply": "https://acme.example/apply"}')
post '{"title": "Baker", "company_name": "Bread and Co", "status": "active", "description": "<p>Bake bread.</p>", "location": "Paris"}' >/dev/null

failed=0
for path in / "/jobs/$slug"; do
  out="$WORK/report.json"
  CHROME_PATH="$CHROMIUM" "$LH" "http://127.0.0.1:$port$path" --quiet \
    --only-categories=performance,accessibility,best-practices,seo \
    --output=json --output-path="$out" \
    --chrome-flags="--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking --disable-component-update --disable-sync --host-resolver-rules='MAP * ~NOTFOUND , EXCLUDE 127.0.0.1' --user-data-dir=$WORK/profile"
  python3 - "$out" "$path" "$MIN" <<'PY' || failed=1
import json, sys
report, path, minimum = json.load(open(sys.argv[1])), sys.argv[2], float(sys.argv[3])
low = []
for key, cat in report["categories"].items():
    score = round((cat["score"] or 0) * 100)
    print(f"{path}: {cat['title']} {score}")
    if score < minimum:
        low.append(key)
        for ref in cat["auditRefs"]:
            a = report["audits"][ref["id"]]
            if ref["weight"] and a.get("score") is not None and a["score"] < 1:
                print(f"  {a['id']}: {a['title']} ({a.get('displayValue', a['score'])})")
sys.exit(1 if low else 0)
PY
done
if [ "$failed" -ne 0 ]; then echo "a Lighthouse score is below $MIN" >&2; exit 1; fi
echo "Lighthouse: every score of / and a job page is at least $MIN"
