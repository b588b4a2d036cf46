# What the benchmark scripts share (sourced, not run): a free port, the median of numbers
# on standard input, and a benchmark organization with its key.

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
