#!/usr/bin/env node
// Lays out the npm packages of a release, ready for `npm pack` or `npm publish`:
//
//   node npm/stage.js OUT_DIR VERSION TARGET=BINARY...
//
// OUT_DIR/ka-hooks is npm/ka-hooks with VERSION written into its version and its optional
// dependencies; OUT_DIR/<os>-<cpu> is the package @ka-hooks/<os>-<cpu>, with `os` and `cpu`
// fields and BINARY as bin/ka-hooks, for each Rust TARGET given (scripts/release.sh passes the
// binaries it built). Every platform the launcher knows must be given: a release without one
// would install a ka-hooks whose launcher finds nothing on that platform.
"use strict";

const fs = require("fs");
const path = require("path");

const ROOT = path.join(__dirname, "..");
// Rust target -> npm platform package. The launcher (ka-hooks/bin/ka-hooks.js) maps Node's
// process.platform and process.arch the same way.
const TARGETS = {
  "x86_64-unknown-linux-musl": { os: "linux", cpu: "x64" },
  "aarch64-unknown-linux-musl": { os: "linux", cpu: "arm64" },
  "x86_64-apple-darwin": { os: "darwin", cpu: "x64" },
  "aarch64-apple-darwin": { os: "darwin", cpu: "arm64" },
};
const LICENSES = ["LICENSE-MIT", "LICENSE-APACHE"];

function die(message) {
  process.stderr.write(`npm/stage.js: ${message}\n`);
  process.exit(1);
}

function writeJson(file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + "\n");
}

function copyLicenses(dir) {
  for (const name of LICENSES) {
    fs.copyFileSync(path.join(ROOT, name), path.join(dir, name));
  }
}

function stageMain(out, version) {
  const template = JSON.parse(fs.readFileSync(path.join(__dirname, "ka-hooks", "package.json")));
  const dir = path.join(out, "ka-hooks");
  fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
  const launcher = path.join(dir, "bin", "ka-hooks.js");
  fs.copyFileSync(path.join(__dirname, "ka-hooks", "bin", "ka-hooks.js"), launcher);
  fs.chmodSync(launcher, 0o755);
  fs.copyFileSync(path.join(__dirname, "ka-hooks", "README.md"), path.join(dir, "README.md"));
  copyLicenses(dir);
  const optional = {};
  for (const name of Object.keys(template.optionalDependencies).sort()) {
    optional[name] = version;
  }
  writeJson(path.join(dir, "package.json"), {
    ...template,
    version,
    optionalDependencies: optional,
  });
  return Object.keys(optional);
}

function stagePlatform(out, version, target, binary, main) {
  const { os, cpu } = TARGETS[target];
  const name = `@ka-hooks/${os}-${cpu}`;
  const dir = path.join(out, `${os}-${cpu}`);
  fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
  fs.copyFileSync(binary, path.join(dir, "bin", "ka-hooks"));
  fs.chmodSync(path.join(dir, "bin", "ka-hooks"), 0o755);
  copyLicenses(dir);
  fs.writeFileSync(
    path.join(dir, "README.md"),
    `# ${name}\n\nThe \`ka-hooks\` binary for ${os} on ${cpu} (Rust target \`${target}\`). ` +
      "Install the `ka-hooks` package, which depends on this one: `npm install -g ka-hooks`.\n"
  );
  writeJson(path.join(dir, "package.json"), {
    name,
    version,
    description: `The ka-hooks binary for ${os}-${cpu}`,
    homepage: main.homepage,
    repository: main.repository,
    license: main.license,
    os: [os],
    cpu: [cpu],
    files: ["bin/ka-hooks", ...LICENSES],
    preferUnplugged: true,
  });
  return name;
}

function main() {
  const [out, version, ...pairs] = process.argv.slice(2);
  if (!out || !version || pairs.length === 0) {
    die("usage: node npm/stage.js OUT_DIR VERSION TARGET=BINARY...");
  }
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
    die(`${version}: not a version (want MAJOR.MINOR.PATCH, as in Cargo.toml)`);
  }
  const template = JSON.parse(fs.readFileSync(path.join(__dirname, "ka-hooks", "package.json")));
  const wanted = stageMain(out, version);
  const staged = [];
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    const [target, binary] = [pair.slice(0, at), pair.slice(at + 1)];
    if (at < 1 || !TARGETS[target]) {
      die(`${pair}: want TARGET=BINARY, TARGET one of ${Object.keys(TARGETS).join(", ")}`);
    }
    if (!fs.statSync(binary, { throwIfNoEntry: false })?.isFile()) {
      die(`${binary}: no such file (the ${target} binary)`);
    }
    staged.push(stagePlatform(out, version, target, binary, template));
  }
  const missing = wanted.filter((name) => !staged.includes(name));
  if (missing.length > 0) {
    die(`no binary given for ${missing.join(", ")}: the launcher would find none there`);
  }
}

main();
