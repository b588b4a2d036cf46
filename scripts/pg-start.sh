#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server on 127.0.0.1 for tests and benchmarks, installing
# Debian's postgresql package when it is missing. Runs the server as the `postgres` user
# (initdb refuses root). Prints the connection URL on its last line.
#
#   eval "$(scripts/pg-start.sh --export)"   # sets JOBBOARD_TEST_POSTGRES_URL
#   scripts/pg-stop.sh
#
# For speed the server runs without durability (fsync, synchronous_commit and
# full_page_writes off). PG_DURABLE=1 keeps PostgreSQL's defaults (all on), as in
# production; give it its own PGPORT and PGDATA_DIR to run beside the fast one.
set -euo pipefail

PGPORT="${PGPORT:-55432}"
PGDATA="${PGDATA_DIR:-/var/tmp/jobboard-pg}"

pgbin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}

if [ -z "$(pgbin)" ]; then
  echo "installing PostgreSQL from Debian packages..." >&2
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends postgresql >&2
fi
PGBIN=$(pgbin)

run_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

URL="postgres://app:app@127.0.0.1:${PGPORT}/app"
if [ "${PG_DURABLE:-0}" = "1" ]; then
  DURABILITY="-c fsync=on -c synchronous_commit=on -c full_page_writes=on"
else
  DURABILITY="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
fi
if run_pg "$PGBIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
  echo "PostgreSQL already running in $PGDATA" >&2
else
  if (exec 3<>"/dev/tcp/127.0.0.1/${PGPORT}") 2>/dev/null; then
    echo "port ${PGPORT} is taken by another server; set PGPORT" >&2
    exit 1
  fi
  rm -rf "$PGDATA"
  if [ "$(id -u)" -eq 0 ]; then
    install -d -m 0700 -o postgres -g postgres "$PGDATA"
  else
    install -d -m 0700 "$PGDATA"
  fi
  run_pg "$PGBIN/initdb" -D "$PGDATA" -U postgres -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  run_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p ${PGPORT} -c unix_socket_directories=${PGDATA} -c max_connections=400 ${DURABILITY}" start >&2
  run_pg "$PGBIN/psql" -h "$PGDATA" -p "$PGPORT" -U postgres -v ON_ERROR_STOP=1 -q \
    -c "CREATE ROLE app LOGIN PASSWORD 'app' CREATEDB" -c "CREATE DATABASE app OWNER app" >&2
fi

if [ "${1:-}" = "--export" ]; then
  echo "export JOBBOARD_TEST_POSTGRES_URL='${URL}'"
else
  echo "$URL"
fi
