#!/usr/bin/env bash
# The test command: every test of the crate, as CI runs them.
#
#   bash scripts/test.sh [NEXTEST ARGS...]
#
# Installs cargo-nextest first when it is missing (a fresh rustup toolchain has only cargo), then
# runs the suite with it (each test in a process of its own: the runner's tests send signals and
# set process-wide state), then the process tests a second time on the runner's thread fallback
# (KA_HOOKS_PROCESS_FALLBACK=1: the path macOS takes, which Linux would not pick), and the rustdoc
# examples, which nextest does not run.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "scripts/test.sh: installing cargo-nextest (cargo install cargo-nextest --locked)" >&2
  cargo install cargo-nextest --locked
fi
cargo nextest run "$@"

# The process tests: the runner's integration suites, and the unit tests of the runner, the
# cancel token, the interrupt handler and the async supervisor. `helper_threads_run_exactly_when_
# the_fallback_is_in_use` fails this run should the switch not take effect.
process_tests='(binary_id(ka-hooks::it) & test(/^(process|interrupt|cancel|async_hooks)::/))'
process_tests+=' | (binary_id(ka-hooks) & test(/^(process|cancel|interrupt|background)::/))'
KA_HOOKS_PROCESS_FALLBACK=1 cargo nextest run -E "$process_tests" "$@"

# The `tokio` feature's tests (session_async), and the session and watchdog tests on the thread
# fallback too.
cargo nextest run --features tokio -E 'binary_id(ka-hooks::it) & test(/^session(_async)?::/)' "$@"
KA_HOOKS_PROCESS_FALLBACK=1 cargo nextest run --features tokio \
  -E 'binary_id(ka-hooks::it) & test(/^session(_async)?::/)' "$@"

cargo test --doc
