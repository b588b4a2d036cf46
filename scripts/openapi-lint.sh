#!/usr/bin/env bash
# Lints the OpenAPI document (openapi.json, the snapshot the tests keep equal to what the
# server serves) with Spectral's default OpenAPI ruleset, failing on any warning, and with
# Redocly's `recommended-strict` ruleset. Installs both from the npm registry (pinned
# versions) into a cache directory on first use; needs Node.js 20.19 or later.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${JOBBOARD_LINT_DIR:-/var/tmp/jobboard-openapi-lint}"
SPECTRAL_VERSION=6.16.3
REDOCLY_VERSION=2.77.0
if ! command -v node >/dev/null 2>&1; then
  echo "installing Node.js from Debian packages" >&2
  apt-get install -y --no-install-recommends nodejs npm >/dev/null
fi
if [ ! -x "$DIR/node_modules/.bin/spectral" ] || [ ! -x "$DIR/node_modules/.bin/redocly" ] ||
   ! grep -q "\"version\": \"$SPECTRAL_VERSION\"" "$DIR/node_modules/@stoplight/spectral-cli/package.json" ||
   ! grep -q "\"version\": \"$REDOCLY_VERSION\"" "$DIR/node_modules/@redocly/cli/package.json"; then
  echo "installing Spectral $SPECTRAL_VERSION and Redocly CLI $REDOCLY_VERSION into $DIR" >&2
  mkdir -p "$DIR"
  npm install --prefix "$DIR" --no-save --no-audit --no-fund --loglevel=error \
    "@stoplight/spectral-cli@$SPECTRAL_VERSION" "@redocly/cli@$REDOCLY_VERSION" >/dev/null
fi

echo "== Spectral (spectral:oas, failing on warnings)"
"$DIR/node_modules/.bin/spectral" lint --ruleset scripts/spectral.yaml --fail-severity warn openapi.json
echo "== Redocly (recommended-strict)"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
  "$DIR/node_modules/.bin/redocly" lint --config scripts/redocly.yaml openapi.json
