#!/usr/bin/env bash
# Whole-process comparison: `ka-hooks run` vs a bare `sh -c true` vs lefthook, in ONE hyperfine run.
#
#   bash benches/compare.sh
#
# Installs what it needs itself: lefthook from the npm registry into a temp dir, and hyperfine with
# apt-get (the only global install, and only when hyperfine is missing). Builds ka-hooks in release.
# Works as root, with CI=true and without stdin. Exits non-zero only when the setup fails; missed
# targets are reported, not fatal.
#
# Environment:
#   LEFTHOOK_VERSION   npm version of lefthook to install (default 2.2.1)
#   KEEP_TMP=1         keep the scratch dir (its path is printed)
#   HYPERFINE_ARGS     extra hyperfine arguments (e.g. "--min-runs 200")
set -euo pipefail
exec </dev/null

LEFTHOOK_VERSION="${LEFTHOOK_VERSION:-2.2.1}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

say() { printf '==> %s\n' "$*" >&2; }
die() {
  printf 'compare.sh: setup failed: %s\n' "$*" >&2
  exit 1
}

for tool in cargo python3 npm git; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is required"
done

tmp="$(mktemp -d "${TMPDIR:-/tmp}/ka-hooks-compare.XXXXXX")" || die "mktemp"
cleanup() {
  if [ "${KEEP_TMP:-0}" = 1 ]; then
    say "kept $tmp"
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT

# --- hyperfine ------------------------------------------------------------------------------
if ! command -v hyperfine >/dev/null 2>&1; then
  say "installing hyperfine with apt-get"
  command -v apt-get >/dev/null 2>&1 || die "hyperfine is missing and there is no apt-get"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q hyperfine >"$tmp/apt.log" 2>&1; then
    apt-get update -q >>"$tmp/apt.log" 2>&1 || true
    apt-get install -y -q hyperfine >>"$tmp/apt.log" 2>&1 || {
      cat "$tmp/apt.log" >&2
      die "apt-get install hyperfine"
    }
  fi
fi
hyperfine --version >/dev/null 2>&1 || die "hyperfine does not run"
say "$(hyperfine --version)"

# --- lefthook (npm, into the temp dir) -------------------------------------------------------
say "installing lefthook@$LEFTHOOK_VERSION from npm into $tmp/npm"
# --ignore-scripts: the package's postinstall would run `lefthook install`; the binary comes from
# the platform package (lefthook-linux-x64, ...) that npm picks as an optional dependency.
if ! npm install --prefix "$tmp/npm" --no-audit --no-fund --no-save --ignore-scripts \
  --loglevel=error -E "lefthook@$LEFTHOOK_VERSION" >"$tmp/npm.log" 2>&1; then
  cat "$tmp/npm.log" >&2
  die "npm install lefthook@$LEFTHOOK_VERSION"
fi
lefthook=""
for candidate in "$tmp"/npm/node_modules/lefthook-*/bin/lefthook \
  "$tmp"/npm/node_modules/@evilmartians/lefthook*/bin/lefthook; do
  if [ -f "$candidate" ]; then
    lefthook="$candidate"
    break
  fi
done
[ -n "$lefthook" ] || die "no lefthook binary under $tmp/npm/node_modules: $(
  find "$tmp/npm/node_modules" -maxdepth 1 -mindepth 1 -printf '%f ' 2>/dev/null
)"
chmod +x "$lefthook"
lefthook_version="$("$lefthook" version 2>&1)" || die "\`$lefthook version\` failed: $lefthook_version"
say "lefthook $lefthook_version ($lefthook)"

# --- ka-hooks (release) ----------------------------------------------------------------------
say "cargo build --release"
(cd "$repo" && cargo build --release --quiet) || die "cargo build --release"
target_dir="$(cd "$repo" && cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')" ||
  die "cargo metadata"
ka="$target_dir/release/ka-hooks"
[ -x "$ka" ] || die "no binary at $ka"

# --- scratch project -------------------------------------------------------------------------
# The ka hook lives in the user layer (KA_CONFIG_DIR), which needs no trust.
export KA_CONFIG_DIR="$tmp/ka-config" KA_DATA_DIR="$tmp/ka-data"
unset KA_HOOKS_DISABLE KA_HOOKS_TIMEOUT KA_HOOKS_LOG LEFTHOOK LEFTHOOK_EXCLUDE LEFTHOOK_CONFIG 2>/dev/null || true
mkdir -p "$KA_CONFIG_DIR" "$KA_DATA_DIR" "$tmp/project"
cat >"$KA_CONFIG_DIR/ka.toml" <<'EOF'
[[hooks]]
name = "trivial"
event = "pre_tool_use"
tool = "write"
command = "true"
EOF
cat >"$tmp/project/lefthook.yml" <<'EOF'
pre-commit:
  commands:
    trivial:
      run: "true"
EOF
cd "$tmp/project"
git init -q . || die "git init"

# A ~1 KB payload without single quotes, so it can be single-quoted in hyperfine's command line.
input="$(python3 -c '
import json
content = ("fn main() { println!(\"hello\"); }\n" * 40)[:1024]
print(json.dumps({"arguments": {"path": "src/lib.rs", "content": content}}, separators=(",", ":")))
')"
case "$input" in *"'"*) die "payload contains a single quote" ;; esac

# Check each command once before timing it: it must succeed and do what its label says.
"$ka" run pre_tool_use --tool read --input "$input" --json >"$tmp/none.json" ||
  die "ka-hooks run (no matching hook) failed"
"$ka" run pre_tool_use --tool write --input "$input" --json >"$tmp/one.json" ||
  die "ka-hooks run (one hook) failed"
python3 - "$tmp/none.json" "$tmp/one.json" <<'EOF' || die "ka-hooks did not run the expected hooks"
import json, sys
none, one = (json.load(open(p)) for p in sys.argv[1:3])
assert none["hooks"] == [], none
assert [h["status"] for h in one["hooks"]] == ["ok"], one
EOF
"$lefthook" run pre-commit >"$tmp/lefthook.out" 2>&1 || {
  cat "$tmp/lefthook.out" >&2
  die "lefthook run pre-commit failed"
}

# --- one hyperfine run -----------------------------------------------------------------------
shell_args=()
# `--shell=none` (hyperfine >= 1.13) runs the commands directly, without a shell in between.
if hyperfine --help 2>/dev/null | grep -q -- "--shell=none"; then
  shell_args=(--shell=none)
else
  say "this hyperfine has no --shell=none: timing through a shell (hyperfine subtracts its cost)"
fi
q() { printf "'%s'" "$1"; } # single-quote for hyperfine's shell-words splitting
names=("sh -c true" "ka-hooks no matching hook" "ka-hooks one hook" "lefthook run pre-commit")
cmds=(
  "sh -c true"
  "$(q "$ka") run pre_tool_use --tool read --input $(q "$input")"
  "$(q "$ka") run pre_tool_use --tool write --input $(q "$input")"
  "$(q "$lefthook") run pre-commit"
)
hf=(hyperfine --warmup 20 "${shell_args[@]}" --style basic --export-json "$tmp/hyperfine.json")
for i in "${!cmds[@]}"; do
  hf+=(-n "${names[$i]}" "${cmds[$i]}")
done
# shellcheck disable=SC2206 # HYPERFINE_ARGS is split on purpose
hf+=(${HYPERFINE_ARGS:-})
say "hyperfine (the 1 KB --input is elided from its report)"
"${hf[@]}" >"$tmp/hyperfine.out" 2>&1 || {
  cat "$tmp/hyperfine.out" >&2
  die "hyperfine failed"
}
# The commands carry the 1 KB payload: show hyperfine's own report without it.
sed -e "s/--input '[^']*'/--input <1KB>/g" -e "s/--input {[^ ]*/--input <1KB>/g" "$tmp/hyperfine.out"

# --- table -----------------------------------------------------------------------------------
python3 - "$tmp/hyperfine.json" <<'EOF'
import json, sys

results = json.load(open(sys.argv[1]))["results"]
by = {r["command"]: r for r in results}
base = by["sh -c true"]["mean"]
none = by["ka-hooks no matching hook"]["mean"]
one = by["ka-hooks one hook"]["mean"]
lefthook = by["lefthook run pre-commit"]["mean"]

print()
print(f"{'command':<28} {'mean':>10} {'± σ':>9} {'median':>10} {'min':>10} {'mean ×sh':>9} {'median ×sh':>11}")
base_median = by["sh -c true"]["median"]
for r in results:
    print(
        f"{r['command']:<28} {r['mean'] * 1e3:8.3f}ms {r['stddev'] * 1e3:7.3f}ms "
        f"{r['median'] * 1e3:8.3f}ms {r['min'] * 1e3:8.3f}ms {r['mean'] / base:8.2f}× "
        f"{r['median'] / base_median:10.2f}×"
    )
one_median = by["ka-hooks one hook"]["median"]
lefthook_median = by["lefthook run pre-commit"]["median"]
print(
    f"{'lefthook / ka one hook':<28} {lefthook / one:8.2f}× (means), "
    f"{lefthook_median / one_median:.2f}× (medians)"
)
print()

def verdict(ok):
    return "met" if ok else "MISSED"

targets = [
    ("ka one hook <= 2.8x sh -c true", one / base, one / base <= 2.8),
    ("ka no matching hook <= 1.5x sh -c true", none / base, none / base <= 1.5),
    ("ka one hook >= 6x faster than lefthook", lefthook / one, lefthook / one >= 6.0),
]
print("targets (on means; a shared machine inflates means, see the median columns):")
for name, value, ok in targets:
    print(f"  {name:<42} {value:6.2f}  {verdict(ok)}")
EOF
