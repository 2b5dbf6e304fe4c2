#!/usr/bin/env node
// The `ka-hooks` command of the npm package: starts the native binary of this platform's package
// (@ka-hooks/<os>-<cpu>, an optional dependency that npm installs only where `os` and `cpu`
// match) with the same arguments, stdin, stdout and stderr, and exits as it exited: its code, or
// its signal raised again here. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this process are
// passed on to it. `ka-hooks install <agent>` writes the native binary's own path into the
// agent's settings, so hook events never start Node.
"use strict";

const { spawn } = require("child_process");
const path = require("path");

const PLATFORMS = {
  "linux x64": "@ka-hooks/linux-x64",
  "linux arm64": "@ka-hooks/linux-arm64",
  "darwin x64": "@ka-hooks/darwin-x64",
  "darwin arm64": "@ka-hooks/darwin-arm64",
};

function fail(message) {
  process.stderr.write(`ka-hooks: ${message}\n`);
  process.exit(1);
}

function nativeBinary() {
  const pkg = PLATFORMS[`${process.platform} ${process.arch}`];
  if (!pkg) {
    fail(
      `no prebuilt binary for ${process.platform}-${process.arch} (there are: ` +
        `${Object.values(PLATFORMS).join(", ")}); build it from source: ` +
        "cargo install --locked ka-hooks"
    );
  }
  let manifest;
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch (e) {
    fail(
      `${pkg}, the package holding the binary for this platform, is not installed. npm ` +
        "skips optional dependencies under --omit=optional (or --no-optional): install " +
        "again without it (npm install -g ka-hooks)"
    );
  }
  return path.join(path.dirname(manifest), "bin", "ka-hooks");
}

const binary = nativeBinary();
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
const forward = (signal) => child.kill(signal);
for (const signal of forwarded) {
  process.on(signal, forward);
}
child.on("error", (e) => fail(`cannot run ${binary}: ${e.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so that our parent sees what the binary did.
    for (const s of forwarded) {
      process.removeListener(s, forward);
    }
    process.kill(process.pid, signal);
    // A signal whose default is not to end the process (or one that is ignored here).
    process.exit(128 + (require("os").constants.signals[signal] || 0));
  }
  process.exit(code);
});
