#!/usr/bin/env bash
# The shipped examples at work: build ka-hooks, copy ka.toml.example and examples/hooks/ into a
# scratch project, and dispatch a few tool calls through them. Uses scratch config and data dirs,
# so your own ~/.config/ka and trust store are never read or written.
#
# Usage: bash examples/demo.sh [--keep]
#   --keep   keep the scratch project afterwards (its path is printed) to look around in it.
#
# Each step states the exit code it expects; the demo exits 1 when any step differs, 0 otherwise.
# Needs: the Rust toolchain (cargo), bash, and python3 (the example hooks parse JSON with it).
set -euo pipefail

keep=0
for arg in "$@"; do
  case $arg in
    --keep) keep=1 ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo.sh: unknown argument '$arg' (try --help)" >&2; exit 64 ;;
  esac
done

here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"

# Build, and take the binary's path from cargo itself: it lands wherever CARGO_TARGET_DIR, a
# .cargo/config.toml or a workspace puts it, not necessarily in ./target.
ka="$(cargo build --bin ka-hooks --message-format=json-render-diagnostics \
  | grep '"reason":"compiler-artifact"' \
  | grep '"kind":\["bin"\]' \
  | grep '"name":"ka-hooks"' \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' \
  | tail -n 1)"
if [ -z "$ka" ] || [ ! -x "$ka" ]; then
  echo "demo.sh: cargo build did not report the ka-hooks executable" >&2
  exit 1
fi

scratch="$(mktemp -d)"
if [ "$keep" = 1 ]; then
  kept() {
    echo
    echo "kept the scratch project: $scratch/project (config: $scratch/config, data: $scratch/data)"
    echo "to use it, in a shell (its hooks are trusted in that data dir only):"
    printf '  cd %q && export KA_CONFIG_DIR=%q KA_DATA_DIR=%q\n' \
      "$scratch/project" "$scratch/config" "$scratch/data"
    printf '  %q list\n' "$scratch/ka-hooks"
  }
  trap kept EXIT
else
  trap 'rm -rf "$scratch"' EXIT
fi
# A copy of its own: a build running meanwhile (another checkout sharing the target dir) cannot
# swap the binary between two steps.
cp "$ka" "$scratch/ka-hooks"
echo "using $ka"
ka="$scratch/ka-hooks"
export KA_CONFIG_DIR="$scratch/config" KA_DATA_DIR="$scratch/data" NO_COLOR=1
unset KA_HOOKS_DISABLE KA_HOOKS_TIMEOUT KA_HOOKS_LOG
project="$scratch/project"
mkdir -p "$project/.ka" "$project/src" "$project/examples"
cp ka.toml.example "$project/.ka/ka.toml"
cp -R examples/hooks "$project/examples/hooks"
cp -R examples/tests "$project/.ka/tests"    # the golden cases of the example hooks
printf 'fn main() {}\n' > "$project/src/main.rs"
printf '# Notes   \n' > "$project/src/NOTES.md"   # trailing spaces for the checker

failed=0
# step EXPECTED_EXIT ARGS...: run `ka-hooks --project <scratch> ARGS...` and check its exit code.
step() {
  local expected=$1 code
  shift
  printf '\n$ ka-hooks %s\n' "$*"
  set +e
  "$ka" --project "$project" "$@"
  code=$?
  set -e
  if [ "$code" = "$expected" ]; then
    printf '(exit %s, as expected)\n' "$code"
  else
    printf '(exit %s, EXPECTED %s)\n' "$code" "$expected"
    failed=$((failed + 1))
  fi
}

# The project file is untrusted: review it and trust it (what a user does once per change).
# `--yes` records the trust without a terminal to confirm at.
step 0 trust --yes
step 0 list --event pre_tool_use
# A write outside src/: the guard blocks it (exit 2, the reason is what the model reads).
step 2 run pre_tool_use --tool write --input '{"arguments":{"path":"/etc/passwd","content":"x"}}'
# A patch that moves a file out of src/: blocked too, every file a writing tool touches counts.
step 2 run pre_tool_use --tool apply_patch --input '{"arguments":{"patch":"*** Begin Patch\n*** Update File: src/main.rs\n*** Move to: main.rs\n*** End Patch\n"}}'
# A shell command carrying an AWS key: the scrubber rewrites it before it runs.
step 0 run pre_tool_use --tool bash --input '{"arguments":{"command":"curl -H \"X-Key: AKIAABCDEFGHIJKLMNOP\" https://example.com"}}'
# An edit inside src/: allowed; afterwards the whitespace checker answers with feedback (its
# `paths` filter takes Markdown; rustfmt, the one-line formatter hook, takes Rust files).
step 0 run pre_tool_use --tool write --input '{"arguments":{"path":"src/NOTES.md","content":"# Notes   \n"}}'
step 0 run post_tool_use --tool write --input '{"arguments":{"path":"src/NOTES.md"},"result":"ok"}'
step 0 run post_tool_use --tool write --input '{"arguments":{"path":"src/main.rs"},"result":"ok"}'
# Failing tests: the hook switches to plan mode.
step 0 run post_tool_use --tool bash --input '{"arguments":{"command":"cargo test"},"result":"test result: FAILED. 1 passed; 2 failed","is_error":true}'
# The example hooks' golden cases (.ka/tests/*.toml): what each hook must decide, checked at once.
step 0 test

echo
if [ "$failed" -ne 0 ]; then
  echo "demo.sh: $failed step(s) did not exit as expected" >&2
  exit 1
fi
echo "demo.sh: every step exited as expected"
