#!/usr/bin/env bash
# Three `jobboard serve` nodes on one PostgreSQL database behind HAProxy (round robin),
# everything on 127.0.0.1: to try several nodes out, and for benchmarks. Installs Debian's
# haproxy package when it is missing. Prints the balancer's URL on its last line.
#
#   scripts/cluster.sh            # or `scripts/cluster.sh start`
#   scripts/cluster.sh stop
#
# Database: CLUSTER_DATABASE_URL when set (a postgres:// URL, used as it is); else the
# database `jobboard_cluster` (created when missing, kept between runs) on the server of
# JOBBOARD_TEST_POSTGRES_URL; else on a throwaway server started with scripts/pg-start.sh,
# which `stop` stops again.
#
# CLUSTER_PORT        the balancer's port (default 8080); the nodes listen on the three
#                     ports after it
# CLUSTER_DIR         pid files, haproxy.cfg and logs (default /var/tmp/jobboard-cluster)
# JOBBOARD_BIN        the binary to run (default: `cargo build --release`, then its output)
#
# The nodes read every other setting from the environment as `serve` does (JOBBOARD_*,
# `jobboard config` lists them), e.g. JOBBOARD_ALLOW_PRIVATE_TARGETS=1 for webhooks to this
# machine. The first start on an empty database prints the first API key and the link that
# creates the first dashboard user, as `serve` does.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${CLUSTER_DIR:-/var/tmp/jobboard-cluster}"
PORT="${CLUSTER_PORT:-8080}"
NODES=3
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi

# Sends SIGTERM to the process of pid file $1 and waits (up to 30 s) until it is gone.
stop_pidfile() {
  local file="$1" pid i
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if kill -TERM "$pid" 2>/dev/null; then
    for i in $(seq 1 300); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "process $pid did not stop within 30 s; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$file"
}

stop_cluster() {
  stop_pidfile "$DIR/haproxy.pid"
  for n in $(seq 1 "$NODES"); do
    stop_pidfile "$DIR/node$n.pid"
  done
  if [ -f "$DIR/pg-started" ]; then
    scripts/pg-stop.sh >/dev/null 2>&1 || true
    rm -f "$DIR/pg-started"
  fi
}

case "${1:-start}" in
  start) ;;
  stop)
    stop_cluster
    echo "cluster stopped" >&2
    exit 0
    ;;
  *)
    echo "usage: $0 [start|stop]" >&2
    exit 2
    ;;
esac

if [ -f "$DIR/haproxy.pid" ] && kill -0 "$(cat "$DIR/haproxy.pid")" 2>/dev/null; then
  echo "a cluster is already running (pid files in $DIR); run $0 stop first" >&2
  exit 1
fi
mkdir -p "$DIR"

# HAProxy, from Debian's package when missing.
HAPROXY=$(command -v haproxy || true)
[ -z "$HAPROXY" ] && [ -x /usr/sbin/haproxy ] && HAPROXY=/usr/sbin/haproxy
if [ -z "$HAPROXY" ]; then
  echo "installing HAProxy from Debian packages..." >&2
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends haproxy >&2
  HAPROXY=/usr/sbin/haproxy
fi

# The binary.
if [ -n "${JOBBOARD_BIN:-}" ]; then
  BIN="$JOBBOARD_BIN"
else
  cargo build --release --quiet --bin jobboard
  BIN="${CARGO_TARGET_DIR:-target}/release/jobboard"
fi

# The database.
psql_bin() {
  command -v psql || ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -n 1
}
if [ -n "${CLUSTER_DATABASE_URL:-}" ]; then
  DB_URL="$CLUSTER_DATABASE_URL"
else
  ADMIN_URL="${JOBBOARD_TEST_POSTGRES_URL:-}"
  if [ -z "$ADMIN_URL" ]; then
    ADMIN_URL=$(scripts/pg-start.sh 2>"$DIR/pg-start.log" | tail -n 1) || {
      cat "$DIR/pg-start.log" >&2
      exit 1
    }
    # `stop` stops the server only when this start started it.
    if ! grep -q "already running" "$DIR/pg-start.log"; then
      touch "$DIR/pg-started"
    fi
  fi
  PSQL=$(psql_bin)
  if [ -z "$(PGCONNECT_TIMEOUT=10 "$PSQL" "$ADMIN_URL" -tAc "SELECT 1 FROM pg_database WHERE datname = 'jobboard_cluster'")" ]; then
    "$PSQL" "$ADMIN_URL" -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE jobboard_cluster"
  fi
  DB_URL="${ADMIN_URL%/*}/jobboard_cluster"
fi
case "$DB_URL" in
  postgres://* | postgresql://*) ;;
  *)
    echo "the nodes need a postgres:// database (SQLite serves one node)" >&2
    exit 1
    ;;
esac

BASE="http://127.0.0.1:$PORT"
# Settings every node shares: the balancer is the public address and the one proxy whose
# X-Forwarded-For names the client.
export DATABASE_URL="$DB_URL"
export JOBBOARD_PUBLIC_URL="${JOBBOARD_PUBLIC_URL:-$BASE}"
export JOBBOARD_TRUSTED_PROXIES="${JOBBOARD_TRUSTED_PROXIES:-127.0.0.1}"
unset JOBBOARD_LISTEN

# Waits (up to 60 s) until $1 answers 200; fails naming log file $2 otherwise.
wait_ready() {
  local url="$1" log="$2" i
  for i in $(seq 1 600); do
    if curl -fsS --noproxy '*' -o /dev/null --max-time 2 "$url" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "$url is not ready after 60 s; see $log" >&2
  tail -n 20 "$log" >&2 || true
  stop_cluster
  exit 1
}

"$BIN" migrate >"$DIR/migrate.log" 2>&1 || {
  cat "$DIR/migrate.log" >&2
  exit 1
}

# The nodes start together; on an empty database exactly one of them creates
# organization 1 and prints the first key (in its nodeN.out).
for n in $(seq 1 "$NODES"); do
  NODE_PORT=$((PORT + n))
  setsid "$BIN" serve --listen "127.0.0.1:$NODE_PORT" \
    >"$DIR/node$n.out" 2>"$DIR/node$n.log" </dev/null &
  echo $! >"$DIR/node$n.pid"
done
for n in $(seq 1 "$NODES"); do
  wait_ready "http://127.0.0.1:$((PORT + n))/readyz" "$DIR/node$n.log"
done

# Round robin, each request on its own; a node that refuses connections is skipped at
# once (retries with redispatch) and taken out of rotation by the health check.
{
  cat <<EOF
global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s
    retries 3
    option redispatch 1
    option forwardfor

frontend jobboard
    bind 127.0.0.1:$PORT
    default_backend nodes

backend nodes
    balance roundrobin
    option httpchk GET /readyz
EOF
  for n in $(seq 1 "$NODES"); do
    echo "    server node$n 127.0.0.1:$((PORT + n)) check inter 2s fall 2 rise 1"
  done
} >"$DIR/haproxy.cfg"
"$HAPROXY" -q -c -f "$DIR/haproxy.cfg" >&2
"$HAPROXY" -q -D -f "$DIR/haproxy.cfg" -p "$DIR/haproxy.pid"
wait_ready "$BASE/healthz" "$DIR/haproxy.cfg"

if [ -s "$DIR/node1.out" ]; then
  cat "$DIR/node1.out" >&2
fi
echo "nodes: http://127.0.0.1:$((PORT + 1)) .. http://127.0.0.1:$((PORT + NODES)) (logs in $DIR); stop with $0 stop" >&2
echo "$BASE"
