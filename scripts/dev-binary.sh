#!/usr/bin/env bash
# Builds the server's debug binary as the test suite does and prints its path: the binary
# `cargo test --workspace` builds for the integration tests, with the features the tests
# of the whole workspace turn on. (`cargo build --bin jobboard` resolves the features of
# the binary alone, which differ, so after the test suite it built most of the dependency
# graph a second time.) The scripts that run the built server call it.
#
#     BIN=$(scripts/dev-binary.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --no-run --quiet 1>&2
echo "${CARGO_TARGET_DIR:-$(pwd)/target}/debug/jobboard"
