#!/usr/bin/env bash
# The browser tools of the browser tests and page audits: Debian's `chromium` and
# `chromium-driver` (same version, so the driver matches), and the npm package `axe-core`
# (its script is injected into pages by the tests; nothing from npm is kept in the
# repository). Prints what it finds as KEY=VALUE lines (an empty value: missing):
#
#   CHROMIUM=/usr/bin/chromium
#   CHROMEDRIVER=/usr/bin/chromedriver
#   AXE_JS=$HOME/.cache/jobboard-tools/node_modules/axe-core/axe.min.js
#
#   scripts/browser-setup.sh              # look only
#   scripts/browser-setup.sh --install    # install what is missing first (apt-get, npm)
#
# npm packages go to JOBBOARD_TOOLS_DIR (default ~/.cache/jobboard-tools).
set -euo pipefail
TOOLS="${JOBBOARD_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/jobboard-tools}"
AXE="$TOOLS/node_modules/axe-core/axe.min.js"

if [ "${1:-}" = "--install" ]; then
  if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    echo "installing chromium and chromium-driver from Debian packages" >&2
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      chromium chromium-driver >&2
  fi
  if [ ! -f "$AXE" ]; then
    if ! command -v npm >/dev/null 2>&1; then
      if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
      $SUDO apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm >&2
    fi
    echo "installing axe-core from npm into $TOOLS" >&2
    mkdir -p "$TOOLS"
    npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error axe-core@4 >&2
  fi
fi

echo "CHROMIUM=$(command -v chromium || true)"
echo "CHROMEDRIVER=$(command -v chromedriver || true)"
if [ -f "$AXE" ]; then echo "AXE_JS=$AXE"; else echo "AXE_JS="; fi
