#!/usr/bin/env bash
# The main job on the shipped examples: build ka-hooks, copy ka.toml.example and examples/hooks/
# into a scratch project, and dispatch a few tool calls through them. Uses scratch config and data
# dirs, so your own ~/.config/ka and trust store are never read or written.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
cargo build --quiet --bin ka-hooks
ka="$here/target/debug/ka-hooks"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export KA_CONFIG_DIR="$scratch/config" KA_DATA_DIR="$scratch/data" NO_COLOR=1
unset KA_HOOKS_DISABLE KA_HOOKS_TIMEOUT KA_HOOKS_LOG
project="$scratch/project"
mkdir -p "$project/.ka" "$project/src" "$project/examples"
cp ka.toml.example "$project/.ka/ka.toml"
cp -R examples/hooks "$project/examples/hooks"
printf 'fn main() {}   \n' > "$project/src/main.rs"   # trailing spaces for the formatter

step() {
  printf '\n$ ka-hooks %s\n' "$*"
  set +e
  "$ka" --project "$project" "$@"
  printf '(exit %s)\n' "$?"
  set -e
}

# The project file is untrusted: review it and trust it (what a user does once per change).
step trust
step list --event pre_tool_use
# A write outside src/: the guard blocks it (exit 2, the reason is what the model reads).
step run pre_tool_use --tool write --input '{"arguments":{"path":"/etc/passwd","content":"x"}}'
# A shell command carrying an AWS key: the scrubber rewrites it before it runs.
step run pre_tool_use --tool bash --input '{"arguments":{"command":"curl -H \"X-Key: AKIAABCDEFGHIJKLMNOP\" https://example.com"}}'
# An edit inside src/: allowed; afterwards the formatter answers with feedback.
step run pre_tool_use --tool write --input '{"arguments":{"path":"src/main.rs","content":"fn main() {}   \n"}}'
step run post_tool_use --tool write --input '{"arguments":{"path":"src/main.rs"},"result":"ok"}'
# Failing tests: the hook switches to plan mode.
step run post_tool_use --tool bash --input '{"arguments":{"command":"cargo test"},"result":"test result: FAILED. 1 passed; 2 failed","is_error":true}'
