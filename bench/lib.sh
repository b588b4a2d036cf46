# What the benchmark scripts share (sourced, not run): the binary measured, a work folder
# cleaned up at exit, a free port, waiting for a server, the median of numbers on standard
# input, a benchmark organization with its key, a server's memory and its search
# indexes' state.

# The jobboard binary measured: BENCH_BIN when given, else the release build (built now).
# Sets BIN.
bench_bin() {
  if [ -n "${BENCH_BIN:-}" ]; then
    BIN="$BENCH_BIN"
  else
    cargo build --release --quiet --bin jobboard
    BIN="${CARGO_TARGET_DIR:-target}/release/jobboard"
  fi
}

# A work folder for the run (WORK, named after $1), removed at exit, when the servers in
# PIDS are stopped and the PostgreSQL database DROP_DB (if set) is dropped from PG_URL.
bench_workdir() {
  WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/jobboard-$1.XXXXXX")
  PIDS=()
  DROP_DB=""
  trap bench_cleanup EXIT
}

bench_cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  if [ -n "$DROP_DB" ]; then psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $DROP_DB" >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
}

# A fresh database of backend $1 (sqlite or postgres) for the run, named after $2: sets
# `db` (its URL) and `raise` (bench_org_and_key's third argument: the SQLite file, or
# "postgres"), the caller's own when it declared them local. The PostgreSQL one is
# created on PG_URL now and dropped at exit (DROP_DB). Fails, saying why, when PostgreSQL
# has no PG_URL or the backend is neither.
bench_database() {
  case "$1" in
    sqlite)
      db="sqlite://$WORK/$2.db"
      raise="$WORK/$2.db"
      ;;
    postgres)
      if [ -z "${PG_URL:-}" ]; then echo "no JOBBOARD_BENCH_POSTGRES_URL" >&2; return 1; fi
      DROP_DB="jobboard_$2_$$"
      psql "$PG_URL" -qc "DROP DATABASE IF EXISTS $DROP_DB" >/dev/null
      psql "$PG_URL" -qc "CREATE DATABASE $DROP_DB" >/dev/null
      db="${PG_URL%/*}/$DROP_DB"
      raise=postgres
      ;;
    *) echo "the backend is sqlite or postgres, not $1" >&2; return 1 ;;
  esac
}

# Waits until URL $1 answers (30 s at most, then the run stops).
wait_up() {
  for _ in $(seq 1 300); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return
    sleep 0.1
  done
  echo "not answering: $1" >&2
  exit 1
}

# A free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# The median of the numbers on standard input, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# Migrates database URL $2 with binary $1, creates an organization and a key of it, and
# prints "ORG KEY". The command line caps limits at 100,000 per minute; with $3 (the
# SQLite file, or "postgres") the key's limits are raised in the database to a rate no
# benchmark reaches, so the limiter is measured but never refuses.
bench_org_and_key() {
  local bin="$1" db="$2" raise_in="${3:-}" org key
  "$bin" --database "$db" migrate >/dev/null
  org=$("$bin" --database "$db" orgs create --name bench | tail -n 1)
  key=$("$bin" --database "$db" keys create --org "$org" --read-limit 100000 --write-limit 100000 | tail -n 1)
  local raise="UPDATE api_keys SET read_limit = 1000000000, write_limit = 1000000000 WHERE org_id = $org"
  case "$raise_in" in
    "") ;;
    postgres) psql "$db" -qc "$raise" >/dev/null ;;
    *) python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()' "$raise_in" "$raise" ;;
  esac
  echo "$org $key"
}

# The resident memory of process $1 in MB: now, and its peak so far.
rss_mb() { awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
hwm_mb() { awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
# The part of it that is the heap, stacks and other anonymous memory (not mapped files or
# shared memory such as SQLite's WAL index).
anon_mb() { awk '/^RssAnon/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }

# The /metrics text of the server at base URL $1 (behind JOBBOARD_METRICS_TOKEN).
bench_metrics() { curl -fsS -H "Authorization: Bearer $JOBBOARD_METRICS_TOKEN" "$1/metrics"; }

# The RESULT line (bench/report.lua's) of the wrk output in file $1.
wrk_result() { grep '^RESULT' "$1" | tail -n 1; }

# The search indexes of the server at base URL $1, from its /metrics: "indexes bytes
# builds_first builds_again builds_worn misplaced forgotten displacement".
index_state() {
  bench_metrics "$1" | awk '
    $1 == "jobboard_search_indexes" {n = $2}
    $1 == "jobboard_search_index_bytes" {b = $2}
    $1 == "jobboard_search_index_builds_total{cause=\"first\"}" {f = $2}
    $1 == "jobboard_search_index_builds_total{cause=\"again\"}" {a = $2}
    $1 == "jobboard_search_index_builds_total{cause=\"worn\"}" {w = $2}
    $1 == "jobboard_search_index_misplaced_jobs" {m = $2}
    $1 == "jobboard_search_index_forgotten_jobs" {g = $2}
    $1 == "jobboard_search_index_displacement" {d = $2}
    END {print n + 0, b + 0, f + 0, a + 0, w + 0, m + 0, g + 0, d + 0}'
}
