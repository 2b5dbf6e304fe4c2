#!/usr/bin/env bash
# The test command: every test of the crate, as CI runs them.
#
#   bash scripts/test.sh [NEXTEST ARGS...]
#
# Installs cargo-nextest first when it is missing (a fresh rustup toolchain has only cargo), then
# runs the suite with it (each test in a process of its own: the runner's tests send signals and
# set process-wide state), then the process tests a second time on the runner's thread fallback
# (KA_HOOKS_PROCESS_FALLBACK=1: the path macOS takes, which Linux would not pick), then the three
# slow tests, which a plain `cargo nextest run` skips (they are #[ignore]d, each with its reason),
# and the rustdoc examples (the crate docs and docs/library.md), which nextest does not run.
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

# The slow tests: ignored by default so that the run above stays quick, run here explicitly.
slow_tests='test(/^readme::/) | test(the_musl_build_is_static_pie_with_full_relro) | test(/^demo::demo_finds/)'
echo "scripts/test.sh: now the three slow tests; the last two build ka-hooks twice more:" >&2
echo "  demo::demo_finds_the_binary_in_cargo_target_dir_and_every_step_exits_as_expected runs" >&2
echo "    examples/demo.sh, the README's first command, with --keep;" >&2
echo "  readme::the_quick_start_runs_as_written runs the README's quick start, a real" >&2
echo "    'cargo install --path . --locked': a release build into this target dir, so your own" >&2
echo "    'cargo install --path . --locked' (same CARGO_TARGET_DIR, or none) then only copies it;" >&2
echo "  hardening::the_musl_build_is_static_pie_with_full_relro builds the musl binary the release" >&2
echo "    ships. Later runs reuse both builds; the README gives their times. 'SLOW' is not a hang." >&2
cargo nextest run --run-ignored only -E "$slow_tests" "$@"

cargo test --doc
