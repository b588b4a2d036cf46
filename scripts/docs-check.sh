#!/usr/bin/env bash
# Renders /api/docs/ in headless Chromium (Debian's package, installed when missing) with
# every network access but loopback failing, and checks that the API reference was drawn
# from the bundled assets: the rendered DOM must list the operations of the document, and
# neither it nor the error code page may break its Content-Security-Policy (Chromium logs
# each violation to the console, which is written to stderr here).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  echo "installing chromium from Debian packages" >&2
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >&2
fi

BIN=$(scripts/dev-binary.sh)
WORK=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
RUST_LOG=warn "$BIN" --database "sqlite://$WORK/docs.db" serve --listen "127.0.0.1:$port" >/dev/null 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done

# Every host name but the server's resolves to nothing: remote assets cannot load.
render() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --host-resolver-rules="MAP * ~NOTFOUND , EXCLUDE 127.0.0.1" \
    --user-data-dir="$WORK/profile" --virtual-time-budget=10000 \
    --enable-logging=stderr --v=0 \
    --dump-dom "http://127.0.0.1:$port$1" 2>"$WORK/console.txt" >"$WORK/dom.html"
  if grep -i 'Content Security Policy' "$WORK/console.txt" >&2; then
    echo "$1 breaks its Content-Security-Policy (above)" >&2
    exit 1
  fi
}

render /api/docs/
ops=$(grep -o 'opblock-summary-path' "$WORK/dom.html" | wc -l || true)
if grep -q 'Job Board Service API' "$WORK/dom.html" && [ "$ops" -gt 0 ]; then
  echo "docs page rendered offline: $ops operations listed, no policy violation"
else
  echo "docs page did not render (operations found: $ops)" >&2
  exit 1
fi
render /api/docs/errors
if grep -q 'id="request_timeout"' "$WORK/dom.html"; then
  echo "error code page rendered, no policy violation"
else
  echo "error code page did not render" >&2
  exit 1
fi
