#!/usr/bin/env bash
# Starts the built server on a fresh SQLite database (and, when JOBBOARD_TEST_POSTGRES_URL
# is set, on a fresh PostgreSQL database too) and runs schemathesis against its
# /api/openapi.json with a key: every check in every phase (examples, coverage, fuzzing,
# and the stateful phase following the document's links), with the few exclusions
# scripts/schemathesis.toml names and explains. The server runs without the webhook and
# mail workers, so nothing generated is ever delivered anywhere. Traffic goes to
# 127.0.0.1 only; examples per operation are bounded.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${JOBBOARD_VENV:-/var/tmp/jobboard-venv}"
if [ ! -x "$VENV/bin/schemathesis" ] || [ ! -x "$VENV/bin/openapi-spec-validator" ]; then
  echo "installing schemathesis and openapi-spec-validator from PyPI into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "schemathesis>=4,<5" "openapi-spec-validator>=0.7"
fi

BIN=$(scripts/dev-binary.sh)
WORK=$(mktemp -d)
PIDS=()
PG_DB=""
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "$PG_DB" ]; then
    psql "$JOBBOARD_TEST_POSTGRES_URL" -qc "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" >/dev/null 2>&1 || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

run_against() {
  local db="$1" label="$2"
  local port key org
  port=$(free_port)
  org=$("$BIN" --database "$db" orgs create --name "schemathesis" | tail -n 1)
  key=$("$BIN" --database "$db" keys create --org "$org" --read-limit 100000 --write-limit 100000 | tail -n 1)
  RUST_LOG=warn "$BIN" --database "$db" serve --listen "127.0.0.1:$port" --no-worker \
    >"$WORK/$label.out" 2>"$WORK/$label.err" &
  PIDS+=($!)
  for _ in $(seq 1 100); do
    if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
    sleep 0.1
  done
  echo "== OpenAPI 3.1 validation of the served document ($label)"
  curl -fsS "http://127.0.0.1:$port/api/openapi.json" >"$WORK/openapi.json"
  "$VENV/bin/openapi-spec-validator" "$WORK/openapi.json"
  echo "== schemathesis on $label (port $port)"
  "$VENV/bin/schemathesis" --config-file scripts/schemathesis.toml run "http://127.0.0.1:$port/api/openapi.json" \
    --url "http://127.0.0.1:$port/api" \
    --header "x-api-key: $key" \
    --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-40}" \
    --request-timeout 10 \
    --no-color
}

run_against "sqlite://$WORK/st.db" sqlite
if [ -n "${JOBBOARD_TEST_POSTGRES_URL:-}" ]; then
  name="st_$(date +%s)_$$"
  psql "$JOBBOARD_TEST_POSTGRES_URL" -qc "CREATE DATABASE $name" >/dev/null
  PG_DB="$name"
  run_against "${JOBBOARD_TEST_POSTGRES_URL%/*}/$name" postgres
fi
