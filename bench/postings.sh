#!/bin/sh
# The index's postings against the `roaring` crate on bench/seed.py's jobs and
# bench/search_mix.py's searches (see bench/postings/src/main.rs).
#
#     bench/postings.sh [JOBS]      (1,000,000 by default)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-1000000}
work=${TMPDIR:-/tmp}/jobboard-postings-bench
mkdir -p "$work"
if [ ! -s "$work/jobs-$n.tsv" ]; then
    python3 "$here/postings/export.py" "$n" "$work/jobs-$n.tsv" "$work/queries.txt" 2000
fi
cargo build --release --quiet --manifest-path "$here/postings/Cargo.toml" \
    --target-dir "$work/target"
"$work/target/release/postings-bench" "$work/jobs-$n.tsv" "$work/queries.txt"
