#!/usr/bin/env bash
# Fuzzes the parsers of untrusted input with AFL++ through cargo-afl (stable toolchain):
# each target of src/lib.rs runs for FUZZ_SECONDS (default 600), FUZZ_JOBS at a time
# (default 2), starting from seeds/<target>/ and keeping its findings in
# $FUZZ_OUT/<target>/default/{crashes,hangs} (default fuzz/out). Prints each target's
# executions, corpus and findings; exits non-zero when any target crashed or hung.
#
#   fuzz/run.sh                          # every target, 10 minutes each
#   FUZZ_TARGETS="html cms" FUZZ_SECONDS=60 fuzz/run.sh
set -euo pipefail
cd "$(dirname "$0")"

TARGETS=${FUZZ_TARGETS:-"strict_json html query form imports cms export"}
SECONDS_EACH=${FUZZ_SECONDS:-600}
JOBS=${FUZZ_JOBS:-2}
OUT=$(realpath -m "${FUZZ_OUT:-out}")
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}

command -v cargo-afl >/dev/null 2>&1 || cargo install cargo-afl --locked
cargo afl build --release

# No CPU frequency or core dump settings are needed (and none are changed); the fuzzer
# runs without its screen.
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_NO_AFFINITY=1
mkdir -p "$OUT"
run_one() {
  local t=$1
  rm -rf "${OUT:?}/$t"
  cargo afl fuzz -i "seeds/$t" -o "$OUT/$t" -V "$SECONDS_EACH" "$CARGO_TARGET_DIR/release/$t" \
    >"$OUT/$t.log" 2>&1 || echo "$t: afl-fuzz failed, see $OUT/$t.log" >&2
}
export -f run_one
export OUT SECONDS_EACH
printf '%s\n' $TARGETS | xargs -P "$JOBS" -I{} bash -c 'run_one {}'

status=0
printf '%-12s %12s %10s %9s %8s %6s\n' target executions per_sec corpus crashes hangs
for t in $TARGETS; do
  stats="$OUT/$t/default/fuzzer_stats"
  if [ ! -f "$stats" ]; then
    echo "$t: no statistics (see $OUT/$t.log)"; status=1; continue
  fi
  get() { awk -F' *: *' -v k="$1" '$1 == k {print $2}' "$stats"; }
  printf '%-12s %12s %10s %9s %8s %6s\n' "$t" "$(get execs_done)" "$(get execs_per_sec)" \
    "$(get corpus_count)" "$(get saved_crashes)" "$(get saved_hangs)"
  if [ "$(get saved_crashes)" != 0 ] || [ "$(get saved_hangs)" != 0 ]; then status=1; fi
done
exit $status
