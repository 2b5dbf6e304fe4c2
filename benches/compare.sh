#!/usr/bin/env bash
# Whole-process comparison in ONE hyperfine run, every command as a ratio to a C floor
# (benches/floor.c: posix_spawn `/bin/sh -c true` on three pipes, write the 1 KB payload, poll,
# waitpid): `sh -c true`, `ka-hooks run` with no matching hook and with one trivial hook,
# `ka-hooks claude` with one hook (a Claude Code PreToolUse payload on stdin), and lefthook.
#
#   bash benches/compare.sh
#
# Installs what it needs itself: lefthook from the npm registry into a temp dir, and hyperfine with
# apt-get (the only global install, and only when hyperfine is missing). A hyperfine without
# `--input` (Debian 12 has 1.15) is complemented by `cargo install hyperfine` into the target dir,
# cached there. Builds the floor with `cc -O2`, and ka-hooks in release twice: as
# `cargo build --release` makes it (PIE), and static-pie (`-C target-feature=+crt-static`, see
# benches/README.md) on a *-linux-gnu host. After the hyperfine run, a cross-check: the floor and
# the ka-hooks rows again, interleaved round by round (benches/interleave.c), which a drifting
# machine cannot skew between commands. Works as root, with CI=true and without stdin. Exits
# non-zero only when the setup or a measurement fails; missed targets are reported, not fatal.
#
# Environment:
#   LEFTHOOK_VERSION   npm version of lefthook to install (default 2.2.1)
#   HYPERFINE_VERSION  crates.io version of hyperfine to build when the installed one has no
#                      --input (default 1.20.0)
#   KEEP_TMP=1         keep the scratch dir (its path is printed)
#   HYPERFINE_ARGS     extra hyperfine arguments (e.g. "--min-runs 200")
#   INTERLEAVE_ROUNDS  rounds of the interleaved cross-check (default 300; 0 skips it)
set -euo pipefail
exec </dev/null

LEFTHOOK_VERSION="${LEFTHOOK_VERSION:-2.2.1}"
rounds="${INTERLEAVE_ROUNDS:-300}"
case "$rounds" in
  0 | [1-9][0-9] | [1-9][0-9][0-9] | [1-9][0-9][0-9][0-9] | [1-9][0-9][0-9][0-9][0-9]) ;;
  *) printf 'compare.sh: INTERLEAVE_ROUNDS must be 0 (skip) or 10 to 99999, not %s\n' "$rounds" >&2; exit 1 ;;
esac
HYPERFINE_VERSION="${HYPERFINE_VERSION:-1.20.0}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

say() { printf '==> %s\n' "$*" >&2; }
die() {
  printf 'compare.sh: setup failed: %s\n' "$*" >&2
  exit 1
}

for tool in cargo rustc cc python3 npm git; do
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

target_dir="$(cd "$repo" && cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')" ||
  die "cargo metadata"

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
hyperfine=hyperfine
# `--input FILE` (hyperfine >= 1.16) feeds the Claude payload to `ka-hooks claude` on stdin.
if ! hyperfine --help 2>/dev/null | grep -q -- "--input"; then
  hyperfine="$target_dir/compare-tools/bin/hyperfine"
  if ! "$hyperfine" --help 2>/dev/null | grep -q -- "--input"; then
    say "$(hyperfine --version) has no --input:" \
      "cargo install hyperfine@$HYPERFINE_VERSION into $target_dir/compare-tools"
    cargo install --quiet --locked --version "$HYPERFINE_VERSION" \
      --root "$target_dir/compare-tools" hyperfine >"$tmp/hyperfine-install.log" 2>&1 || {
      cat "$tmp/hyperfine-install.log" >&2
      die "cargo install hyperfine@$HYPERFINE_VERSION"
    }
  fi
fi
say "$("$hyperfine" --version)"

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

# --- the floor (cc -O2) ----------------------------------------------------------------------
floor="$tmp/floor"
cc -O2 -o "$floor" "$repo/benches/floor.c" >"$tmp/cc.log" 2>&1 || {
  cat "$tmp/cc.log" >&2
  die "cc -O2 benches/floor.c"
}
say "floor: $(cc --version | head -n 1), -O2 benches/floor.c"
interleave="$tmp/interleave"
cc -O2 -o "$interleave" "$repo/benches/interleave.c" >"$tmp/cc.log" 2>&1 || {
  cat "$tmp/cc.log" >&2
  die "cc -O2 benches/interleave.c"
}

# --- ka-hooks (release: PIE, and static-pie) ------------------------------------------------
say "cargo build --release --bin ka-hooks"
(cd "$repo" && cargo build --release --quiet --bin ka-hooks) || die "cargo build --release"
ka_pie="$target_dir/release/ka-hooks"
[ -x "$ka_pie" ] || die "no binary at $ka_pie"
host="$(rustc -vV | sed -n 's/^host: //p')"
ka="$ka_pie"
ka_label="ka-hooks"
case "$host" in
  *-linux-gnu)
    # crt-static for the target only: with --target, RUSTFLAGS stay off build scripts and
    # proc-macros, which cannot be static. A first build compiles every dependency again.
    say "cargo build --release --target $host, -C target-feature=+crt-static (static-pie)"
    (cd "$repo" && RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
      cargo build --release --quiet --target "$host" --bin ka-hooks) ||
      die "cargo build --release --target $host (crt-static)"
    ka="$target_dir/$host/release/ka-hooks"
    [ -x "$ka" ] || die "no binary at $ka"
    ka_label="ka-hooks static-pie"
    ;;
  *) say "host $host is not *-linux-gnu: timing the PIE build only" ;;
esac

# Both binaries keep the hardening that tests/hardening.rs checks on the debug build: ET_DYN
# (PIE), PT_GNU_RELRO, BIND_NOW.
python3 - "$ka_pie" "$ka" <<'EOF' || die "a ka-hooks binary lacks PIE or full RELRO"
import struct, sys
for path in dict.fromkeys(sys.argv[1:]):
    data = open(path, "rb").read()
    assert data[:4] == b"\x7fELF" and data[4:6] == b"\x02\x01", f"{path}: not a 64-bit LE ELF"
    (e_type,) = struct.unpack_from("<H", data, 16)
    (phoff,) = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    kinds, dynamic = [], {}
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        kinds.append(p_type)
        for at in range(p_offset, p_offset + p_filesz, 16) if p_type == 2 else ():
            tag, val = struct.unpack_from("<qQ", data, at)
            if tag == 0:
                break
            dynamic[tag] = val
    now = dynamic.get(30, 0) & 0x8 or dynamic.get(0x6FFFFFFB, 0) & 0x1 or 24 in dynamic
    assert e_type == 3, f"{path}: ELF type {e_type}, not ET_DYN: no PIE"
    assert 0x6474E552 in kinds, f"{path}: no PT_GNU_RELRO"
    assert now, f"{path}: no BIND_NOW: partial RELRO"
    print(f"==> {path}: ET_DYN, PT_GNU_RELRO, BIND_NOW", file=sys.stderr)
EOF

# --- scratch project -------------------------------------------------------------------------
# shellcheck source=benches/support/scratch.sh
. "$repo/benches/support/scratch.sh"
unset LEFTHOOK LEFTHOOK_EXCLUDE LEFTHOOK_CONFIG 2>/dev/null || true
scratch_setup "$tmp" || die "writing the scratch project and payloads"
cat >"$tmp/project/lefthook.yml" <<'EOF'
pre-commit:
  commands:
    trivial:
      run: "true"
EOF
cd "$tmp/project"

# Check each command once before timing it: it must succeed and do what its label says.
"$floor" "$input" || die "the floor failed"
for bin in "$ka" "$ka_pie"; do
  "$bin" run pre_tool_use --tool read --input "$input" --json >"$tmp/none.json" ||
    die "$bin run (no matching hook) failed"
  "$bin" run pre_tool_use --tool write --input "$input" --json >"$tmp/one.json" ||
    die "$bin run (one hook) failed"
  rm -f "$tmp/claude.log"
  "$bin" --log "$tmp/claude.log" claude <"$tmp/claude.json" >"$tmp/claude.out" 2>&1 ||
    die "$bin claude failed: $(cat "$tmp/claude.out")"
  python3 - "$tmp/none.json" "$tmp/one.json" "$tmp/claude.log" <<'EOF' ||
import json, sys
none, one = (json.load(open(p)) for p in sys.argv[1:3])
assert none["hooks"] == [], none
assert [h["status"] for h in one["hooks"]] == ["ok"], one
log = [json.loads(line) for line in open(sys.argv[3])]
assert [(r["hook"], r["status"]) for r in log if r["kind"] == "hook"] == [("trivial", "ok")], log
EOF
    die "$bin did not run the expected hooks"
done
"$lefthook" run pre-commit >"$tmp/lefthook.out" 2>&1 || {
  cat "$tmp/lefthook.out" >&2
  die "lefthook run pre-commit failed"
}

# --- one hyperfine run -----------------------------------------------------------------------
# `--shell=none` runs the commands directly, without a shell in between. `--input` applies to every
# command: each gets the Claude payload on stdin, and only `ka-hooks claude` reads it (`run` takes
# its payload from `--input`, the floor from its argument).
q() { printf "'%s'" "$1"; } # single-quote for hyperfine's shell-words splitting
names=() cmds=()
add() { names+=("$1") cmds+=("$2"); }
add "floor (C)" "$(q "$floor") $(q "$input")"
add "sh -c true" "sh -c true"
add "$ka_label no matching hook" "$(q "$ka") run pre_tool_use --tool read --input $(q "$input")"
add "$ka_label one hook" "$(q "$ka") run pre_tool_use --tool write --input $(q "$input")"
add "$ka_label claude" "$(q "$ka") claude"
if [ "$ka" != "$ka_pie" ]; then
  add "ka-hooks PIE no matching hook" "$(q "$ka_pie") run pre_tool_use --tool read --input $(q "$input")"
  add "ka-hooks PIE one hook" "$(q "$ka_pie") run pre_tool_use --tool write --input $(q "$input")"
  add "ka-hooks PIE claude" "$(q "$ka_pie") claude"
fi
add "lefthook run pre-commit" "$(q "$lefthook") run pre-commit"
hf=("$hyperfine" --warmup 20 --shell=none --input "$tmp/claude.json" --style basic
  --export-json "$tmp/hyperfine.json")
for i in "${!cmds[@]}"; do
  hf+=(-n "${names[$i]}" "${cmds[$i]}")
done
# shellcheck disable=SC2206 # HYPERFINE_ARGS is split on purpose
hf+=(${HYPERFINE_ARGS:-})
say "hyperfine (the 1 KB payload is elided from its report)"
"${hf[@]}" >"$tmp/hyperfine.out" 2>&1 || {
  cat "$tmp/hyperfine.out" >&2
  die "hyperfine failed"
}
# The commands carry the 1 KB payload: show hyperfine's own report without it.
sed -e "s/--input '[^']*'/--input <1KB>/g" -e "s/--input {[^ ]*/--input <1KB>/g" \
  -e "s/floor '[^']*'/floor <1KB>/g" -e "s/floor {[^ ]*/floor <1KB>/g" "$tmp/hyperfine.out"

# --- table -----------------------------------------------------------------------------------
python3 - "$tmp/hyperfine.json" "$ka_label" <<'EOF'
import json, sys

results = json.load(open(sys.argv[1]))["results"]
ka = sys.argv[2]
by = {r["command"]: r for r in results}
floor = by["floor (C)"]

print()
print(f"{'command':<32} {'mean':>10} {'± σ':>9} {'median':>10} {'min':>10} {'mean ×floor':>12} {'median ×floor':>14}")
for r in results:
    print(
        f"{r['command']:<32} {r['mean'] * 1e3:8.3f}ms {r['stddev'] * 1e3:7.3f}ms "
        f"{r['median'] * 1e3:8.3f}ms {r['min'] * 1e3:8.3f}ms {r['mean'] / floor['mean']:11.2f}× "
        f"{r['median'] / floor['median']:13.2f}×"
    )
print()

targets = [(f"{ka} one hook", 1.25), (f"{ka} no matching hook", 0.85), (f"{ka} claude", 1.30)]
print("targets, × the C floor (a shared machine inflates means: read the medians too):")
for name, limit in targets:
    mean = by[name]["mean"] / floor["mean"]
    median = by[name]["median"] / floor["median"]
    verdict = "met" if mean <= limit else "met on the median only" if median <= limit else "MISSED"
    print(f"  {name + ' <= ' + format(limit, '.2f') + '×':<44} mean {mean:5.2f}×  median {median:5.2f}×  {verdict}")
EOF

# --- cross-check: the same commands interleaved ------------------------------------------------
if [ "$rounds" != 0 ]; then
  say "cross-check: the floor and the $ka_label rows interleaved, $rounds rounds (benches/interleave.c)"
  "$interleave" "$rounds" "$tmp/claude.json" "floor (C)" "$floor" "$input" \
    ::: "$ka_label no matching hook" "$ka" run pre_tool_use --tool read --input "$input" \
    ::: "$ka_label one hook" "$ka" run pre_tool_use --tool write --input "$input" \
    ::: "$ka_label claude" "$ka" claude >"$tmp/interleave.tsv" || die "benches/interleave.c failed"
  echo
  echo "interleaved (medians of $rounds rounds; the targets are judged on the hyperfine run above):"
  while IFS=$'\t' read -r label median p10 p90 ratio; do
    LC_ALL=C printf '  %-40s median %6.3fms  p10 %6.3fms  p90 %6.3fms  %5.2f× the floor\n' \
      "$label" "$median" "$p10" "$p90" "$ratio"
  done <"$tmp/interleave.tsv"
fi
