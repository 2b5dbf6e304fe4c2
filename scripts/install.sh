#!/bin/sh
# Install ka-hooks from a release: download the tarball for this machine, check it against its
# published SHA-256, and put the `ka-hooks` binary in ~/.local/bin. POSIX sh; needs curl or wget,
# tar, gzip, and sha256sum or shasum.
#
#   curl -fsSL https://github.com/ka-agent/ka-hooks/releases/latest/download/install.sh | sh
#   sh install.sh [--version VERSION] [--to DIR]
#
# Settings (the options win over the variables):
#   KA_HOOKS_VERSION      the release to install (default: the one this script comes with)
#   KA_HOOKS_INSTALL_DIR  where to put the binary (default: ~/.local/bin)
#   KA_HOOKS_RELEASE_URL  the folder holding ka-hooks-<version>-<target>.tar.gz and its .sha256
#                         (default: the GitHub release v<version>; https:// or file:///path)
#
# Linux (x86_64, aarch64: static musl binaries, any distribution) and macOS (Intel, Apple
# silicon). The binary is replaced atomically, so a running ka-hooks is not disturbed.
set -eu

default_version=0.1.0
repository=https://github.com/ka-agent/ka-hooks

say() { printf 'install.sh: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}

version="${KA_HOOKS_VERSION:-$default_version}"
dir="${KA_HOOKS_INSTALL_DIR:-}"
while [ "$#" -gt 0 ]; do
  case "$1" in
    --version)
      [ "$#" -ge 2 ] || die "--version needs a value"
      version="$2"
      shift 2
      ;;
    --to)
      [ "$#" -ge 2 ] || die "--to needs a folder"
      dir="$2"
      shift 2
      ;;
    -h | --help)
      sed -n '2,16s/^# \{0,1\}//p' "$0" 2>/dev/null || true
      exit 0
      ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
if [ -z "$dir" ]; then
  [ -n "${HOME:-}" ] || die "HOME is not set: give the folder with --to DIR"
  dir="$HOME/.local/bin"
fi
case "$version" in
  v*) version="${version#v}" ;;
esac
base="${KA_HOOKS_RELEASE_URL:-$repository/releases/download/v$version}"
base="${base%/}"
case "$base" in
  https://* | file:///*) ;;
  *) die "KA_HOOKS_RELEASE_URL: $base: give an https:// or file:///absolute/path URL" ;;
esac

# This machine's release target.
os="$(uname -s)"
cpu="$(uname -m)"
case "$cpu" in
  x86_64 | amd64) cpu=x86_64 ;;
  aarch64 | arm64) cpu=aarch64 ;;
  *) die "no release binary for the CPU $cpu: build from source (cargo install --locked ka-hooks)" ;;
esac
case "$os" in
  Linux) target="$cpu-unknown-linux-musl" ;;
  Darwin)
    # A shell under Rosetta 2 reports x86_64 on Apple silicon: take the native binary.
    if [ "$cpu" = x86_64 ] && [ "$(sysctl -n hw.optional.arm64 2>/dev/null || true)" = 1 ]; then
      cpu=aarch64
    fi
    target="$cpu-apple-darwin"
    ;;
  *) die "no release binary for $os: build from source (cargo install --locked ka-hooks)" ;;
esac

# fetch URL FILE
fetch() {
  case "$1" in
    file://*)
      cp "${1#file://}" "$2" || die "cannot read $1"
      return
      ;;
  esac
  if command -v curl >/dev/null 2>&1; then
    curl --proto '=https' --tlsv1.2 -fsSL -o "$2" "$1" || die "download failed: $1"
  elif command -v wget >/dev/null 2>&1; then
    wget --https-only -q -O "$2" "$1" || die "download failed: $1"
  else
    die "neither curl nor wget is installed: install one, or download $1 yourself"
  fi
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    die "neither sha256sum nor shasum is installed: cannot check the download"
  fi
}

name="ka-hooks-$version-$target"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/ka-hooks-install.XXXXXX")" || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "downloading $base/$name.tar.gz"
fetch "$base/$name.tar.gz" "$tmp/$name.tar.gz"
fetch "$base/$name.tar.gz.sha256" "$tmp/$name.tar.gz.sha256"
want="$(cut -d ' ' -f 1 "$tmp/$name.tar.gz.sha256")"
got="$(sha256_of "$tmp/$name.tar.gz")"
case "$want" in
  *[!0-9a-f]* | "") die "$name.tar.gz.sha256 holds no SHA-256 sum" ;;
esac
[ "${#want}" -eq 64 ] || die "$name.tar.gz.sha256 holds no SHA-256 sum"
[ "$got" = "$want" ] ||
  die "$name.tar.gz: SHA-256 $got, but the release publishes $want: not installed"

mkdir "$tmp/unpacked"
(cd "$tmp/unpacked" && gzip -dc "../$name.tar.gz" | tar -xf -) || die "cannot unpack $name.tar.gz"
binary="$tmp/unpacked/$name/ka-hooks"
[ -f "$binary" ] || die "$name.tar.gz holds no $name/ka-hooks"

mkdir -p "$dir" || die "cannot create $dir"
# Copy next to the target, then rename over it: atomic, and a running ka-hooks keeps its file.
cp "$binary" "$dir/.ka-hooks.new.$$" || die "cannot write to $dir"
chmod 755 "$dir/.ka-hooks.new.$$"
mv -f "$dir/.ka-hooks.new.$$" "$dir/ka-hooks" || die "cannot write $dir/ka-hooks"
installed="$("$dir/ka-hooks" --version)" || die "$dir/ka-hooks does not run on this machine"
say "installed $installed as $dir/ka-hooks"

case ":${PATH:-}:" in
  *":$dir:"*) ;;
  *) say "$dir is not on PATH: add it in your shell's profile (export PATH=\"$dir:\$PATH\")" ;;
esac
say "next, in a project: ka-hooks install claude --write"
