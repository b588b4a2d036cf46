#!/usr/bin/env bash
# Stops the server started by scripts/pg-start.sh. PG_STOP_MODE=immediate skips the
# shutdown checkpoint (for a throwaway durable server, whose checkpoint would sync every
# test database to disk for nothing).
set -euo pipefail
PGDATA="${PGDATA_DIR:-/var/tmp/jobboard-pg}"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
if [ "$(id -u)" -eq 0 ]; then
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -m "${PG_STOP_MODE:-fast}" stop
else
  "$PGBIN/pg_ctl" -D "$PGDATA" -m "${PG_STOP_MODE:-fast}" stop
fi
