#!/usr/bin/env bash
# CI for what a user installs: every release target, the npm packages, the install script, the
# Homebrew formula and the crate as `cargo publish` would upload it. A step of .ci/run.
#
#   bash scripts/ci-packages.sh
#
# 1. Installs what it needs when missing, into ~/.cache/ka-hooks-ci (kept for the next run):
#    zig from the PyPI package `ziglang`, `cargo-zigbuild` from crates.io (`cargo install
#    --locked --debug`: a wrapper, compiled unoptimised in half the time), shellcheck and ruby
#    from Debian's packages (optional: a missing one is skipped, loudly).
# 2. `scripts/release.sh` builds the four targets into a scratch folder with the `package-check`
#    profile (Cargo.toml: unoptimised, so the check costs minutes, not the `dist` build's quarter
#    hour; a release is built with `dist`), checks each binary is the right format and CPU (ELF:
#    readelf; Mach-O: scripts/macho.py), and packs the tarballs, the npm packages, the formula
#    and install.sh exactly as for a release.
# 3. The npm packages: their versions are the crate's; installed offline from the packed
#    tarballs (`npm install -g --offline`) into a temporary prefix, then run with a PATH that
#    has node but no cargo and no rustc: `ka-hooks --version`, `ka-hooks claude` with a guard
#    that blocks, and `ka-hooks install claude --write`, whose entry must name the native
#    binary by its absolute path (not node, npx or the launcher), and block when Claude Code
#    would run it. Then `npx ka-hooks install claude` from a registry on loopback
#    (scripts/npm_registry.py), as a user without a global install would.
# 4. The install script: `sh -n`, shellcheck, and a run against the release as a file:// URL,
#    plus one against a tarball whose sum is wrong.
# 5. The Homebrew formula: `ruby -c`.
# 6. `cargo publish --dry-run` on the committed tree (no --allow-dirty: it refuses local
#    changes), which builds the crate from the packaged files.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> ci-packages: %s (%s)\n' "$*" "$(date -u +%T)" >&2; }
die() {
  printf 'ci-packages.sh: %s\n' "$*" >&2
  exit 1
}
started=$(date +%s)
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/ka-ci-packages.XXXXXX")"
registry_pid=
cleanup() {
  [ -z "$registry_pid" ] || kill "$registry_pid" 2>/dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT

# apt_install PACKAGE: Debian's package, when this runs as root with apt-get (CI does).
apt_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$1" >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends "$1" >/dev/null; } ||
    { echo "ci-packages.sh: apt-get install $1 failed" >&2 && return 1; }
}

step "tools"
tools="${XDG_CACHE_HOME:-$HOME/.cache}/ka-hooks-ci"
zig_version=0.17.1 zigbuild_version=0.24.1
zig_dir="$tools/ziglang-$zig_version"
if ! [ -x "$zig_dir/ziglang/zig" ]; then
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
  # --target: a folder of its own, which Debian's "externally managed" Python allows.
  python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --root-user-action=ignore \
    --target "$zig_dir" "ziglang==$zig_version" || die "pip install ziglang==$zig_version"
fi
# cargo-zigbuild runs `python3 -m ziglang` first: this one.
export PYTHONPATH="$zig_dir${PYTHONPATH:+:$PYTHONPATH}"
zigbuild_root="$tools/cargo-zigbuild-$zigbuild_version"
if ! "$zigbuild_root/bin/cargo-zigbuild" --version >/dev/null 2>&1; then
  CARGO_TARGET_DIR="$scratch/cargo-install" cargo install --quiet --locked --debug \
    --root "$zigbuild_root" --version "$zigbuild_version" cargo-zigbuild ||
    die "cargo install cargo-zigbuild@$zigbuild_version"
fi
export PATH="$zigbuild_root/bin:$PATH"
cargo-zigbuild --version
printf 'zig %s (%s)\n' "$(python3 -m ziglang version)" "$zig_dir"
# Linters from Debian's packages, each optional: a missing one is skipped, loudly.
for tool in shellcheck ruby; do
  command -v "$tool" >/dev/null 2>&1 || apt_install "$tool" || true
done

step "every release target, profile package-check (scripts/release.sh)"
build_started=$(date +%s)
dist="$scratch/dist"
KA_HOOKS_OUT="$dist" KA_HOOKS_PROFILE=package-check bash scripts/release.sh
export KA_HOOKS_OUT="$dist"
build_seconds=$(($(date +%s) - build_started))

step "the release's files"
for target in x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin \
  aarch64-apple-darwin; do
  name="ka-hooks-$version-$target"
  listing="$(tar -tzf "$dist/$name.tar.gz")"
  grep -qx "$name/ka-hooks" <<<"$listing" || die "$name.tar.gz: no $name/ka-hooks"
  bin="$scratch/$target"
  tar -xzOf "$dist/$name.tar.gz" "$name/ka-hooks" >"$bin"
  if command -v file >/dev/null; then file -b "$bin" | sed "s/^/$target: /"; fi
  case "$target" in
    *-apple-darwin) python3 scripts/macho.py "$bin" "${target%%-*}" ;;
  esac
done
node - "$version" "$dist/npm" <<'EOF' || die "the npm packages' versions"
// Each packed package's version, and every optional dependency of ka-hooks, is the crate's.
const { execFileSync } = require("child_process");
const fs = require("fs");
const [version, dir] = process.argv.slice(2);
const want = ["ka-hooks", "@ka-hooks/darwin-arm64", "@ka-hooks/darwin-x64",
  "@ka-hooks/linux-arm64", "@ka-hooks/linux-x64"];
const seen = [];
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".tgz"))) {
  const pkg = JSON.parse(execFileSync("tar", ["-xzOf", `${dir}/${file}`, "package/package.json"]));
  const listing = execFileSync("tar", ["-tvzf", `${dir}/${file}`]).toString();
  if (pkg.version !== version) throw new Error(`${file}: version ${pkg.version}, crate ${version}`);
  for (const [dep, v] of Object.entries(pkg.optionalDependencies || {})) {
    if (v !== version) throw new Error(`${file}: ${dep}@${v}, crate ${version}`);
  }
  const bin = pkg.name === "ka-hooks" ? "package/bin/ka-hooks.js" : "package/bin/ka-hooks";
  const line = listing.split("\n").find((l) => l.endsWith(` ${bin}`));
  if (!line || !/^-rwx/.test(line)) throw new Error(`${file}: ${bin} missing or not executable`);
  console.log(`${file}: ${pkg.name}@${pkg.version}, ${line.split(/\s+/)[0]} ${bin}`);
  seen.push(pkg.name);
}
if (seen.sort().join() !== want.sort().join()) throw new Error(`packages: ${seen}, want ${want}`);
EOF
node --check npm/ka-hooks/bin/ka-hooks.js
grep -qx "default_version=$version" scripts/install.sh ||
  die "scripts/install.sh: default_version is not the crate's $version; set it"

step "npm: install offline from the packed tarballs, run without Rust"
prefix="$scratch/prefix"
npm_env=(env "npm_config_cache=$scratch/npm-cache" npm_config_update_notifier=false
  npm_config_fund=false npm_config_audit=false)
"${npm_env[@]}" npm install -g --prefix "$prefix" --offline --no-audit --no-fund \
  "$dist/npm/ka-hooks-$version.tgz" "$dist/npm/ka-hooks-linux-x64-$version.tgz"
bash scripts/ci-npm-check.sh "$prefix/bin" "$scratch/global"

step "npm: npx ka-hooks from a registry on loopback"
registry_log="$scratch/registry.log"
python3 scripts/npm_registry.py "$dist/npm" >"$scratch/registry.port" 2>"$registry_log" &
registry_pid=$!
for _ in $(seq 100); do [ -s "$scratch/registry.port" ] && break; sleep 0.1; done
port="$(head -n 1 "$scratch/registry.port")"
[ -n "$port" ] || die "scripts/npm_registry.py did not start: $(cat "$registry_log")"
bash scripts/ci-npm-check.sh --npx "http://127.0.0.1:$port/" "$scratch/npx"
kill "$registry_pid"
registry_pid=

step "the install script"
sh -n scripts/install.sh
if command -v shellcheck >/dev/null; then
  shellcheck --shell=sh scripts/install.sh
  shellcheck scripts/release.sh scripts/ci-packages.sh scripts/ci-npm-check.sh
else
  echo "ci-packages.sh: SKIPPED shellcheck (not installed, and apt-get could not install it)" >&2
fi
home="$scratch/script-home"
mkdir -p "$home"
HOME="$home" KA_HOOKS_RELEASE_URL="file://$dist" PATH=/usr/bin:/bin sh "$dist/install.sh"
"$home/.local/bin/ka-hooks" --version | grep -qx "ka-hooks $version" ||
  die "install.sh: ~/.local/bin/ka-hooks is not $version"
cmp "$home/.local/bin/ka-hooks" "$scratch/x86_64-unknown-linux-musl" ||
  die "install.sh installed another binary than the release's"
# A tarball that is not the one published: refused, nothing installed.
bad="$scratch/bad-release"
mkdir -p "$bad"
cp "$dist/ka-hooks-$version-x86_64-unknown-linux-musl.tar.gz" "$bad/"
printf '%064d  ka-hooks-%s-x86_64-unknown-linux-musl.tar.gz\n' 0 "$version" \
  >"$bad/ka-hooks-$version-x86_64-unknown-linux-musl.tar.gz.sha256"
if KA_HOOKS_RELEASE_URL="file://$bad" sh "$dist/install.sh" --to "$scratch/bad-bin" 2>"$scratch/bad.err"; then
  die "install.sh installed a tarball whose SHA-256 differs from the published one"
fi
grep -q 'SHA-256' "$scratch/bad.err" || die "install.sh: $(cat "$scratch/bad.err")"
[ ! -e "$scratch/bad-bin/ka-hooks" ] || die "install.sh left a binary after a failed check"
echo "install.sh: installs the release from file://, refuses a wrong SHA-256"

step "the Homebrew formula"
if command -v ruby >/dev/null; then
  ruby -c packaging/homebrew/ka-hooks.rb
  ruby -c "$dist/homebrew/ka-hooks.rb"
else
  echo "ci-packages.sh: SKIPPED ruby -c on the formula (no ruby, and apt-get could not install it)" >&2
fi
for target in x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin \
  aarch64-apple-darwin; do
  sum="$(cut -d' ' -f1 "$dist/ka-hooks-$version-$target.tar.gz.sha256")"
  if ! grep -q "ka-hooks-$version-$target.tar.gz\"" "$dist/homebrew/ka-hooks.rb" ||
    ! grep -q "sha256 \"$sum\"" "$dist/homebrew/ka-hooks.rb"; then
    die "$dist/homebrew/ka-hooks.rb: no url or sha256 for $target"
  fi
done
echo "$dist/homebrew/ka-hooks.rb: a url and its sha256 for each of the four targets"

step "cargo publish --dry-run"
cargo publish --dry-run --locked

printf '\nci-packages.sh: done in %ss (release build %ss)\n' \
  "$(($(date +%s) - started))" "$build_seconds" >&2
