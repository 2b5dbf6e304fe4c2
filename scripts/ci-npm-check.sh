#!/usr/bin/env bash
# Runs ka-hooks as an npm user gets it, with a PATH that has node but no cargo and no rustc.
#
#   bash scripts/ci-npm-check.sh BIN_DIR SCRATCH          # the `ka-hooks` an `npm install -g` put in BIN_DIR
#   bash scripts/ci-npm-check.sh --npx REGISTRY SCRATCH   # `npx ka-hooks`, fetched from REGISTRY
#
# Checks, with HOME, KA_CONFIG_DIR and KA_DATA_DIR in SCRATCH (made fresh):
# - `ka-hooks --version` prints the crate's version;
# - `ka-hooks claude` with a PreToolUse payload and a guard that blocks answers exit 2 with the
#   guard's reason;
# - `ka-hooks install claude --write` writes an entry whose program is the absolute path of the
#   native binary (an ELF file identical to the release's x86_64 binary; not node, npx or the
#   JavaScript launcher), and that entry, run by `sh -c` as Claude Code runs it with a PATH
#   holding neither node nor ka-hooks, blocks the same call.
# Called by scripts/ci-packages.sh after scripts/release.sh, which wrote to $KA_HOOKS_OUT (else dist/).
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
  printf 'ci-npm-check.sh: %s\n' "$*" >&2
  exit 1
}

npx_registry='' bin_dir=''
if [ "${1:-}" = --npx ] && [ "$#" -eq 3 ]; then
  npx_registry="$2" scratch="$3"
elif [ "$#" -eq 2 ]; then
  bin_dir="$1" scratch="$2"
else
  die "usage: ci-npm-check.sh BIN_DIR SCRATCH | --npx REGISTRY SCRATCH"
fi
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
release_binary="$(mktemp)"
trap 'rm -f "$release_binary"' EXIT
name="ka-hooks-$version-x86_64-unknown-linux-musl"
tar -xzOf "${KA_HOOKS_OUT:-dist}/$name.tar.gz" "$name/ka-hooks" >"$release_binary"

rm -rf "$scratch"
mkdir -p "$scratch/home" "$scratch/config" "$scratch/data" "$scratch/project"
scratch="$(cd "$scratch" && pwd -P)"
project="$scratch/project"
node_dir="$(dirname "$(command -v node)")"
path="$node_dir:/usr/bin:/bin"
[ -n "$npx_registry" ] || path="$bin_dir:$path"
for tool in cargo rustc rustup; do
  if PATH="$path" command -v "$tool" >/dev/null; then
    die "$tool is on the test's PATH ($path): it must hold no Rust"
  fi
done

# The environment of every command: nothing inherited but what is set here.
run_env=(env -i "HOME=$scratch/home" "PATH=$path" "KA_CONFIG_DIR=$scratch/config"
  "KA_DATA_DIR=$scratch/data" "npm_config_cache=$scratch/npm-cache"
  npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false)
if [ -n "$npx_registry" ]; then
  ka_hooks=("${run_env[@]}" "npm_config_registry=$npx_registry" npx --yes ka-hooks)
else
  ka_hooks=("${run_env[@]}" ka-hooks)
fi

out="$(cd "$project" && "${ka_hooks[@]}" --version)" || die "ka-hooks --version failed"
[ "$out" = "ka-hooks $version" ] || die "ka-hooks --version: '$out', want 'ka-hooks $version'"
echo "ka-hooks --version: $out"

cat >"$scratch/config/ka.toml" <<'EOF'
[[hooks]]
name = "no-rm-rf"
event = "pre_tool_use"
command = "if grep -q 'rm -rf'; then echo 'rm -rf is not allowed here' >&2; exit 2; fi"
EOF
payload="$(printf '{"session_id":"ci","transcript_path":"/dev/null","cwd":"%s",%s}' "$project" \
  '"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf build"}')"

# check_blocks WHAT COMMAND...: the payload on stdin, exit 2 with the guard's reason.
check_blocks() {
  local what="$1" code=0
  shift
  (cd "$project" && "$@" <<<"$payload" >"$scratch/out" 2>"$scratch/err") || code=$?
  if [ "$code" != 2 ] || ! grep -q 'rm -rf is not allowed here' "$scratch/err"; then
    die "$what: exit $code, want 2 with the guard's reason; stdout: $(cat "$scratch/out"); stderr: $(cat "$scratch/err")"
  fi
  echo "$what: blocked (exit 2: $(head -c 200 "$scratch/err"))"
}
check_blocks "ka-hooks claude" "${ka_hooks[@]}" claude

(cd "$project" && "${ka_hooks[@]}" install claude --write) || die "ka-hooks install claude --write"
settings="$project/.claude/settings.json"
command="$(node -e '
  const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(s.hooks.PreToolUse[0].hooks[0].command);' "$settings")" ||
  die "$settings: no PreToolUse entry: $(cat "$settings")"
echo "registered: $command"
# The words of the command as sh reads them: the program, then `claude`.
program="$(python3 -c '
import shlex, sys
words = shlex.split(sys.argv[1])
sys.exit(1) if words[1:] != ["claude"] else print(words[0])' "$command")" ||
  die "the entry is not '<binary> claude': $command"
case "$program" in
  /*) ;;
  *) die "the entry's program is not an absolute path: $program" ;;
esac
[ "$(basename "$program")" = ka-hooks ] || die "the entry runs $program, not a ka-hooks binary"
[ "$(head -c 4 "$program" | od -An -c | tr -d ' ')" = '177ELF' ] ||
  die "$program is not the native binary (not an ELF file): $(head -c 60 "$program")"
cmp -s "$program" "$release_binary" || die "$program is not the release's x86_64 binary"
# As Claude Code runs it: `sh -c` with the payload on stdin; no node, no ka-hooks on PATH.
check_blocks "the registered command" env -i "HOME=$scratch/home" PATH=/usr/bin:/bin \
  "KA_CONFIG_DIR=$scratch/config" "KA_DATA_DIR=$scratch/data" sh -c "$command"
