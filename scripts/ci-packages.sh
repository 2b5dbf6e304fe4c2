#!/usr/bin/env bash
# CI for what a user installs: the release build of every target, the npm packages, the install
# script, the Homebrew formula and the crate as `cargo publish` would upload it.
#
#   bash scripts/ci-packages.sh
#
# Meant as a step of .ci/run; not called from it yet.
#
# 1. Installs cargo-zigbuild and zig (PyPI) when missing, then `scripts/release.sh` builds the
#    four release binaries and checks each is the right format and CPU (ELF: readelf; Mach-O:
#    scripts/macho.py), and packs the tarballs, the npm packages, the formula and install.sh.
# 2. The npm packages: their versions are the crate's; installed offline from the packed
#    tarballs (`npm install -g --offline`) into a temporary prefix, then run with a PATH that
#    has node but no cargo and no rustc: `ka-hooks --version`, `ka-hooks claude` with a guard
#    that blocks, and `ka-hooks install claude --write`, whose entry must name the native
#    binary by its absolute path (not node, npx or the launcher), and block when Claude Code
#    would run it. Then `npx ka-hooks install claude` from a registry on loopback
#    (scripts/npm_registry.py), as a user without a global install would.
# 3. The install script: `sh -n`, shellcheck (Debian's package, when apt can install it), and a
#    run against the release as a file:// URL, plus one against a tarball whose sum is wrong.
# 4. The Homebrew formula: `ruby -c` when Ruby is there (apt-get when it can; else skipped,
#    saying so).
# 5. `cargo publish --dry-run` on the committed tree (no --allow-dirty: it refuses local
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

step "tools"
if ! cargo-zigbuild --version >/dev/null 2>&1 || ! python3 -m ziglang version >/dev/null 2>&1; then
  # PyPI's cargo-zigbuild is the crates.io release as a prebuilt wheel: seconds, where
  # `cargo install cargo-zigbuild` compiles for minutes.
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    "cargo-zigbuild==0.24.1" "ziglang==0.17.1"
fi
cargo-zigbuild --version
printf 'zig %s\n' "$(python3 -m ziglang version)"
# Linters from Debian's packages, each optional: a missing one is skipped, loudly.
apt_packages=()
command -v shellcheck >/dev/null 2>&1 || apt_packages+=(shellcheck)
command -v ruby >/dev/null 2>&1 || apt_packages+=(ruby)
if [ "${#apt_packages[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${apt_packages[@]}" >/dev/null) ||
    echo "ci-packages.sh: apt-get install ${apt_packages[*]} failed; skipping what needs them" >&2
fi

step "release build of every target (scripts/release.sh)"
build_started=$(date +%s)
bash scripts/release.sh
build_seconds=$(($(date +%s) - build_started))

step "the release's files"
for target in x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin \
  aarch64-apple-darwin; do
  name="ka-hooks-$version-$target"
  listing="$(tar -tzf "dist/$name.tar.gz")"
  grep -qx "$name/ka-hooks" <<<"$listing" || die "$name.tar.gz: no $name/ka-hooks"
  bin="$scratch/$target"
  tar -xzOf "dist/$name.tar.gz" "$name/ka-hooks" >"$bin"
  if command -v file >/dev/null; then file -b "$bin" | sed "s/^/$target: /"; fi
  case "$target" in
    *-apple-darwin) python3 scripts/macho.py "$bin" "${target%%-*}" ;;
  esac
done
node - "$version" dist/npm <<'EOF' || die "the npm packages' versions"
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
  "dist/npm/ka-hooks-$version.tgz" "dist/npm/ka-hooks-linux-x64-$version.tgz"
bash scripts/ci-npm-check.sh "$prefix/bin" "$scratch/global"

step "npm: npx ka-hooks from a registry on loopback"
registry_log="$scratch/registry.log"
python3 scripts/npm_registry.py dist/npm >"$scratch/registry.port" 2>"$registry_log" &
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
HOME="$home" KA_HOOKS_RELEASE_URL="file://$PWD/dist" PATH=/usr/bin:/bin sh dist/install.sh
"$home/.local/bin/ka-hooks" --version | grep -qx "ka-hooks $version" ||
  die "install.sh: ~/.local/bin/ka-hooks is not $version"
cmp "$home/.local/bin/ka-hooks" "$scratch/x86_64-unknown-linux-musl" ||
  die "install.sh installed another binary than the release's"
# A tarball that is not the one published: refused, nothing installed.
bad="$scratch/bad-release"
mkdir -p "$bad"
cp "dist/ka-hooks-$version-x86_64-unknown-linux-musl.tar.gz" "$bad/"
printf '%064d  ka-hooks-%s-x86_64-unknown-linux-musl.tar.gz\n' 0 "$version" \
  >"$bad/ka-hooks-$version-x86_64-unknown-linux-musl.tar.gz.sha256"
if KA_HOOKS_RELEASE_URL="file://$bad" sh dist/install.sh --to "$scratch/bad-bin" 2>"$scratch/bad.err"; then
  die "install.sh installed a tarball whose SHA-256 differs from the published one"
fi
grep -q 'SHA-256' "$scratch/bad.err" || die "install.sh: $(cat "$scratch/bad.err")"
[ ! -e "$scratch/bad-bin/ka-hooks" ] || die "install.sh left a binary after a failed check"
echo "install.sh: installs the release from file://, refuses a wrong SHA-256"

step "the Homebrew formula"
if command -v ruby >/dev/null; then
  ruby -c packaging/homebrew/ka-hooks.rb
  ruby -c dist/homebrew/ka-hooks.rb
else
  echo "ci-packages.sh: SKIPPED ruby -c on the formula (no ruby, and apt-get could not install it)" >&2
fi
for target in x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin \
  aarch64-apple-darwin; do
  sum="$(cut -d' ' -f1 "dist/ka-hooks-$version-$target.tar.gz.sha256")"
  if ! grep -q "ka-hooks-$version-$target.tar.gz\"" dist/homebrew/ka-hooks.rb ||
    ! grep -q "sha256 \"$sum\"" dist/homebrew/ka-hooks.rb; then
    die "dist/homebrew/ka-hooks.rb: no url or sha256 for $target"
  fi
done
echo "dist/homebrew/ka-hooks.rb: a url and its sha256 for each of the four targets"

step "cargo publish --dry-run"
cargo publish --dry-run --locked

printf '\nci-packages.sh: done in %ss (release build %ss)\n' \
  "$(($(date +%s) - started))" "$build_seconds" >&2
