#!/usr/bin/env bash
# The Python tools some tests call: the Standard Webhooks reference library
# (`standardwebhooks`, which verifies our deliveries' signatures), openapi-python-client
# (which generates a client from our OpenAPI document; a test drives it) and the card
# processor's official library (`stripe`, which signs the events of the processor
# stand-in, scripts/processor-standin.py) and Google's auth library (`google-auth`, which
# checks the assertions the indexing stand-in, scripts/indexing-standin.py, receives).
# Installed from PyPI into
# a virtual environment (JOBBOARD_VENV, default /var/tmp/jobboard-venv) when missing.
set -euo pipefail
VENV="${JOBBOARD_VENV:-/var/tmp/jobboard-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import standardwebhooks' 2>/dev/null; then
  echo "installing standardwebhooks from PyPI into $VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check "standardwebhooks>=1.0,<2"
fi
if ! "$VENV/bin/python" -c 'import openapi_python_client' 2>/dev/null; then
  echo "installing openapi-python-client from PyPI into $VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check "openapi-python-client>=0.29,<0.30"
fi
if ! "$VENV/bin/python" -c 'import google.auth.jwt, cryptography' 2>/dev/null; then
  echo "installing google-auth from PyPI into $VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check "google-auth>=2.30,<3" "cryptography>=42"
fi
if ! "$VENV/bin/python" -c 'import stripe' 2>/dev/null; then
  echo "installing stripe from PyPI into $VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check "stripe>=12,<17"
fi
