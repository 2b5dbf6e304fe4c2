#!/usr/bin/env bash
# The test command: every test of the crate, as CI runs them.
#
#   bash scripts/test.sh [NEXTEST ARGS...]
#
# Installs cargo-nextest first when it is missing (a fresh rustup toolchain has only cargo), then
# runs the suite with it (each test in a process of its own: the runner's tests send signals and
# set process-wide state), and the rustdoc examples, which nextest does not run.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "scripts/test.sh: installing cargo-nextest (cargo install cargo-nextest --locked)" >&2
  cargo install cargo-nextest --locked
fi
cargo nextest run "$@"
cargo test --doc
