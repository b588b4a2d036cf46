#!/usr/bin/env bash
# Stops the server started by scripts/pg-start.sh.
set -euo pipefail
PGDATA="${PGDATA_DIR:-/var/tmp/jobboard-pg}"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
if [ "$(id -u)" -eq 0 ]; then
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -m fast stop
else
  "$PGBIN/pg_ctl" -D "$PGDATA" -m fast stop
fi
