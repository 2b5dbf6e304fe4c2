#!/usr/bin/env bash
# Regenerate link/hot-text.ld, the linker script that lays out the code ka-hooks runs at start-up
# together (build.rs passes it to the linker for the binary).
#
#   bash scripts/hot-layout.sh
#
# Why: a run is mostly start-up, and start-up is mostly page faults (about 2 µs each here). The
# kernel maps a file's pages 16 at a time around a fault (fault-around, 64 KB), but the code one
# run executes was spread over the whole 4.4 MB of `.text`: 43 faults on code per one-hook run.
# Laid out together it fills about a dozen 64 KB windows. Figures: benches/README.md.
#
# How: build the static-pie release binary (the one benches/compare.sh times), run the commands
# compare.sh times (no matching hook, one hook, `claude`) under callgrind, and write every
# function they executed into one output section (scripts/hot_layout.py). Needs valgrind, python3,
# nm and glibc's static libraries (libc.a, Debian's libc6-dev). A developer tool: nothing else runs
# it, and a layout gone stale only costs speed (names that no longer exist match nothing). Rerun it
# after a change to the hot path, a dependency update or a new toolchain; the figures in
# benches/README.md say what it is worth.
set -euo pipefail
exec </dev/null
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() {
  printf 'hot-layout.sh: %s\n' "$*" >&2
  exit 1
}
for tool in cargo rustc valgrind python3 nm git cc; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is required"
done
host="$(rustc -vV | sed -n 's/^host: //p')"
case "$host" in
  x86_64-*-linux-gnu) ;;
  *) die "the layout is made for the x86_64 glibc static-pie build; this host is $host" ;;
esac
# The static C libraries a static-pie ka-hooks links (which member defines each C function).
archives=""
for lib in libc.a libm.a libgcc_eh.a libgcc.a; do
  path="$(cc -print-file-name="$lib")"
  [ -f "$path" ] || die "no $lib (install glibc's static library, e.g. libc6-dev)"
  archives="${archives:+$archives,}$path"
done

target_dir="$(cd "$repo" && cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
(cd "$repo" && RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
  cargo build --release --quiet --target "$host" --bin ka-hooks) || die "cargo build (static-pie)"
ka="$target_dir/$host/release/ka-hooks"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/ka-hooks-layout.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=benches/support/scratch.sh
. "$repo/benches/support/scratch.sh"
scratch_setup "$tmp" || die "writing the scratch project and payloads"
cd "$tmp/project"
profile() {
  local name="$1"
  shift
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$tmp/$name.out" "$@" \
    >"$tmp/$name.log" 2>&1 || die "callgrind $name failed: $(tail -n 5 "$tmp/$name.log")"
}
profile none "$ka" run pre_tool_use --tool read --input "$input"
profile one "$ka" run pre_tool_use --tool write --input "$input"
profile claude "$ka" claude <"$tmp/claude.json"
python3 "$repo/scripts/hot_layout.py" "$ka" "$archives" "$tmp/none.out" "$tmp/one.out" \
  "$tmp/claude.out" >"$tmp/hot-text.ld" || die "hot_layout.py failed"
mv "$tmp/hot-text.ld" "$repo/link/hot-text.ld"
printf 'hot-layout.sh: wrote link/hot-text.ld (%s patterns); rebuild to use it\n' \
  "$(grep -c '^    \*' "$repo/link/hot-text.ld")" >&2
