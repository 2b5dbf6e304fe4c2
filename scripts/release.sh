#!/usr/bin/env bash
# Build a release into dist/: the binaries, their tarballs and SHA-256 sums, the npm packages,
# the Homebrew formula and the install script.
#
#   bash scripts/release.sh [TARGET...]
#
# Default targets, all built on this Linux machine with the `dist` profile (fat LTO, one codegen
# unit; Cargo.toml):
# - x86_64-unknown-linux-musl: static-pie (rustc's default for this target): position-independent
#   (ET_DYN, address-randomised), full RELRO and BIND_NOW; checked here, and by tests/it/hardening.rs
#   on the same target. It runs on every Linux whatever its libc (glibc 2.17 or 2.40, Alpine).
# - aarch64-unknown-linux-musl: cross-linked with rust-lld and the musl start files Rust ships
#   (`rustup target add` brings them; no aarch64 C toolchain is needed). rustc (1.95) does not
#   offer static-pie for this target (its target spec lacks static-position-independent-
#   executables, and stable rustc cannot override that), so this binary is static but not
#   position-independent: the kernel still randomises its stack, heap and mappings, not its
#   code. Checked here to be a static aarch64 executable with a RELRO segment. It is not run here
#   (no aarch64 machine); run `ka-hooks --version` on one before publishing.
# - x86_64-apple-darwin, aarch64-apple-darwin: cross-built with cargo-zigbuild, zig as the linker
#   (its macOS libSystem stubs stand in for Apple's SDK). Checked here to be Mach-O executables of
#   the right CPU, position-independent, the arm64 one with the ad-hoc code signature Apple
#   silicon requires. Not run here; docs/platforms.md says what has run on a Mac.
#   Needs `cargo zigbuild` and zig: `pip install cargo-zigbuild ziglang` brings both.
#
# Writes to dist/:
# - ka-hooks-<version>-<target>.tar.gz (a folder of that name holding `ka-hooks`, the README, the
#   licences and the changelog), its `.sha256` (`sha256sum` format), and `sha256sum` for all.
# - With all four targets: npm/*.tgz, the npm packages (`ka-hooks` and `@ka-hooks/<os>-<cpu>`,
#   npm/README.md), homebrew/ka-hooks.rb (packaging/homebrew/ka-hooks.rb with this version's URLs
#   and SHA-256 sums), and install.sh (scripts/install.sh installing this version).
# Every version is the crate's (Cargo.toml). The download URLs are those of the GitHub release
# `v<version>`; KA_HOOKS_RELEASE_URL sets another folder (a mirror, or file:// for a test).
# KA_HOOKS_OUT writes to another folder than dist/; KA_HOOKS_PROFILE builds with another cargo
# profile than `dist` (scripts/ci-packages.sh: `package-check`, which compiles in a fraction of
# the time; such a build is a check of the packaging, not a release).
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
  printf 'release.sh: %s\n' "$*" >&2
  exit 1
}

all_targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin
  aarch64-apple-darwin)
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=("${all_targets[@]}")
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
[ -n "$version" ] || die "no version in Cargo.toml"
repository="$(sed -n 's/^repository = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
release_url="${KA_HOOKS_RELEASE_URL:-$repository/releases/download/v$version}"
out="${KA_HOOKS_OUT:-dist}"
out="${out%/}"
[ -n "$out" ] || die "KA_HOOKS_OUT is /"
profile="${KA_HOOKS_PROFILE:-dist}"
# The folder cargo writes a profile's binaries to.
profile_dir="$profile"
case "$profile" in
  dev) profile_dir=debug ;;
  release | dist | package-check) ;;
  *) die "KA_HOOKS_PROFILE=$profile: not a profile of Cargo.toml (dist, package-check, release, dev)" ;;
esac
target_dir="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')" ||
  die "cargo metadata"
host="$(rustc -vV | sed -n 's/^host: //p')"

# ELF checks with readelf (binutils).
check_elf() {
  local bin="$1" target="$2" header dynamic segments
  header="$(readelf -h "$bin")" || die "$bin: not an ELF file"
  segments="$(readelf -l "$bin")"
  dynamic="$(readelf -d "$bin")"
  if grep -q 'INTERP' <<<"$segments"; then
    die "$bin: has a program interpreter: not static"
  fi
  grep -q 'GNU_RELRO' <<<"$segments" || die "$bin: no RELRO segment"
  case "$target" in
    aarch64-*)
      grep -q 'Machine:.*AArch64' <<<"$header" || die "$bin: not an AArch64 binary"
      ;;
    *)
      grep -q 'Machine:.*X86-64' <<<"$header" || die "$bin: not an x86-64 binary"
      grep -q 'Type:.*DYN' <<<"$header" || die "$bin: not position-independent (ET_EXEC)"
      grep -q 'BIND_NOW' <<<"$dynamic" || die "$bin: no BIND_NOW: partial RELRO"
      grep -q 'Flags:.*PIE' <<<"$dynamic" || die "$bin: DT_FLAGS_1 lacks PIE"
      ;;
  esac
}

check_binary() {
  case "$2" in
    *-linux-*) check_elf "$@" ;;
    *-apple-darwin) python3 scripts/macho.py "$1" "${2%%-*}" || die "$1: see above" ;;
    *) die "$2: no check for this target" ;;
  esac
}

# Each target once in `rustup target list --installed`.
for target in "${targets[@]}"; do
  case " ${all_targets[*]} " in
    *" $target "*) ;;
    *) die "$target: not a release target (${all_targets[*]})" ;;
  esac
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    rustup target add "$target" || die "rustup target add $target"
  fi
done

# One cargo invocation per linker, each for all its targets: cargo interleaves their builds, so
# one target's single-threaded LTO step overlaps the other's compiling.
linux=() apple=()
for target in "${targets[@]}"; do
  case "$target" in
    *-apple-darwin) apple+=(--target "$target") ;;
    *) linux+=(--target "$target") ;;
  esac
done
build=(--locked --profile "$profile" --bin ka-hooks)
if [ "${#linux[@]}" -gt 0 ]; then
  flags=()
  # No aarch64 cc here: link with the lld rustup ships, against Rust's self-contained musl.
  [ "${host%%-*}" = aarch64 ] ||
    flags=(--config 'target.aarch64-unknown-linux-musl.linker="rust-lld"')
  printf '==> cargo build --profile %s %s\n' "$profile" "${linux[*]}" >&2
  cargo build "${build[@]}" "${linux[@]}" "${flags[@]}" || die "cargo build ${linux[*]}"
fi
if [ "${#apple[@]}" -gt 0 ]; then
  cargo-zigbuild --version >/dev/null 2>&1 ||
    die "cargo zigbuild is missing: cargo install --locked cargo-zigbuild, and zig (pip install ziglang); it builds the macOS binaries"
fi
for ((i = 1; i < ${#apple[@]}; i += 2)); do
  target="${apple[$i]}"
  # The oldest macOS each binary runs on: rustc's own default for the target (zig's linker
  # would otherwise stamp its newest, and dyld refuses a binary newer than the system).
  case "$target" in
    x86_64-*) minimum=10.12 ;;
    *) minimum=11.0 ;;
  esac
  printf '==> cargo zigbuild --profile %s --target %s (macOS %s)\n' "$profile" "$target" "$minimum" >&2
  MACOSX_DEPLOYMENT_TARGET="$minimum" cargo zigbuild "${build[@]}" --target "$target" ||
    die "cargo zigbuild --target $target"
done

mkdir -p "$out"
rm -f "$out/sha256sum"
epoch="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
declare -A binaries=()
for target in "${targets[@]}"; do
  bin="$target_dir/$target/$profile_dir/ka-hooks"
  check_binary "$bin" "$target"
  if [ "$target" = "$host" ] || [ "$target" = "${host%-gnu}-musl" ]; then
    "$bin" --version >/dev/null || die "$bin does not run"
  fi
  binaries[$target]="$bin"
  name="ka-hooks-$version-$target"
  rm -rf "${out:?}/$name"
  mkdir "$out/$name"
  cp "$bin" "$out/$name/ka-hooks"
  cp README.md LICENSE-MIT LICENSE-APACHE CHANGELOG.md "$out/$name/"
  # Same bytes for the same binary: sorted names, no owner, the commit's time.
  tar -C "$out" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    -cf - "$name" | gzip -n >"$out/$name.tar.gz"
  rm -rf "${out:?}/$name"
  (cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
  cat "$out/$name.tar.gz.sha256" >>"$out/sha256sum"
  printf '==> %s/%s.tar.gz\n' "$out" "$name" >&2
done
(cd "$out" && sha256sum -c --quiet sha256sum) || die "sha256sum"

if [ "${#targets[@]}" -lt "${#all_targets[@]}" ]; then
  printf '==> not every target built: no npm packages, formula or install script\n' >&2
  cat "$out/sha256sum"
  exit 0
fi

# The npm packages, from the binaries just checked.
rm -rf "$out/npm"
pairs=()
for target in "${targets[@]}"; do
  pairs+=("$target=${binaries[$target]}")
done
node npm/stage.js "$out/npm/staged" "$version" "${pairs[@]}" || die "npm/stage.js"
for dir in "$out"/npm/staged/*/; do
  (cd "$out/npm" && npm pack --silent "./staged/$(basename "$dir")" >/dev/null) ||
    die "npm pack $dir"
done
rm -rf "$out/npm/staged"
printf '==> %s/npm/%s\n' "$out" "$(cd "$out/npm" && ls)" >&2

# The Homebrew formula and the install script, naming this version's tarballs.
mkdir -p "$out/homebrew"
substitute=(-e "s|@VERSION@|$version|g" -e "s|@RELEASE_URL@|$release_url|g")
for target in "${targets[@]}"; do
  sum="$(cut -d' ' -f1 "$out/ka-hooks-$version-$target.tar.gz.sha256")"
  substitute+=(-e "s|@SHA256_$target@|$sum|g")
done
sed "${substitute[@]}" packaging/homebrew/ka-hooks.rb >"$out/homebrew/ka-hooks.rb"
if grep -n '@[A-Z0-9_a-z-]*@' "$out/homebrew/ka-hooks.rb" >&2; then
  die "$out/homebrew/ka-hooks.rb: a placeholder is left (above)"
fi
sed "s|^default_version=.*|default_version=$version|" scripts/install.sh >"$out/install.sh"
grep -qx "default_version=$version" "$out/install.sh" || die "$out/install.sh: no default_version"
printf '==> %s/homebrew/ka-hooks.rb, %s/install.sh\n' "$out" "$out" >&2
cat "$out/sha256sum"
