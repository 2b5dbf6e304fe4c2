#!/usr/bin/env bash
# Build the release binaries into dist/, with their SHA-256 sums.
#
#   bash scripts/release.sh [TARGET...]
#
# Default targets: x86_64-unknown-linux-musl and aarch64-unknown-linux-musl, built with the `dist`
# profile (fat LTO, one codegen unit; Cargo.toml). musl links statically, so the binaries run on
# every Linux whatever its libc (glibc 2.17 or 2.40, Alpine), the way ripgrep ships.
#
# - x86_64-unknown-linux-musl: static-pie (rustc's default for this target): position-independent
#   (ET_DYN, address-randomised), full RELRO and BIND_NOW; checked here, and by tests/it/hardening.rs
#   on the same target.
# - aarch64-unknown-linux-musl: cross-linked with rust-lld and the musl start files Rust ships
#   (`rustup target add` brings them; no aarch64 C toolchain is needed). rustc (1.95) does not
#   offer static-pie for this target (its target spec lacks static-position-independent-
#   executables, and stable rustc cannot override that), so this binary is static but not
#   position-independent: the kernel still randomises its stack, heap and mappings, not its
#   code. Checked here to be a static aarch64 executable with a RELRO segment. It is not run here
#   (no aarch64 machine); run `ka-hooks --version` on one before publishing.
#
# Writes dist/ka-hooks-<version>-<target>(.tar.gz) and dist/sha256sum (check with
# `cd dist && sha256sum -c sha256sum`). Installs a missing target with rustup.
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
  printf 'release.sh: %s\n' "$*" >&2
  exit 1
}

targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
[ -n "$version" ] || die "no version in Cargo.toml"
target_dir="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')" ||
  die "cargo metadata"
host="$(rustc -vV | sed -n 's/^host: //p')"

# ELF checks with readelf (binutils), on every target it can read.
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
      grep -q 'Type:.*DYN' <<<"$header" || die "$bin: not position-independent (ET_EXEC)"
      grep -q 'BIND_NOW' <<<"$dynamic" || die "$bin: no BIND_NOW: partial RELRO"
      grep -q 'Flags:.*PIE' <<<"$dynamic" || die "$bin: DT_FLAGS_1 lacks PIE"
      ;;
  esac
}

mkdir -p dist
rm -f dist/sha256sum
built=()
for target in "${targets[@]}"; do
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    rustup target add "$target" || die "rustup target add $target"
  fi
  flags=()
  case "$target" in
    aarch64-unknown-linux-musl)
      # No aarch64 cc here: link with the lld rustup ships, against Rust's self-contained musl.
      [ "${host%%-*}" = aarch64 ] || flags=(--config "target.$target.linker=\"rust-lld\"")
      ;;
  esac
  printf '==> cargo build --profile dist --target %s\n' "$target" >&2
  cargo build --locked --profile dist --target "$target" --bin ka-hooks "${flags[@]}" ||
    die "cargo build --target $target"
  bin="$target_dir/$target/dist/ka-hooks"
  check_elf "$bin" "$target"
  if [ "$target" = "$host" ] || [ "$target" = "${host%-gnu}-musl" ]; then
    "$bin" --version >/dev/null || die "$bin does not run"
  fi
  name="ka-hooks-$version-$target"
  rm -rf "dist/$name"
  mkdir "dist/$name"
  cp "$bin" "dist/$name/ka-hooks"
  cp README.md LICENSE-MIT LICENSE-APACHE CHANGELOG.md "dist/$name/"
  tar -C dist -czf "dist/$name.tar.gz" "$name"
  rm -rf "dist/$name"
  built+=("$name.tar.gz")
  printf '==> dist/%s.tar.gz\n' "$name" >&2
done
(cd dist && sha256sum "${built[@]}" >sha256sum && sha256sum -c --quiet sha256sum) || die "sha256sum"
cat dist/sha256sum
