#!/usr/bin/env node
// The `devtools-mcp` command of the npm package: runs the native server from the platform
// package npm installed beside this one (chosen by the `os`/`cpu`/`libc` fields of the
// packages named in optionalDependencies), with stdio inherited, and exits as it exited.
// Nothing is downloaded here, nothing runs at install time.
"use strict";

const { spawn } = require("node:child_process");
const { optionalDependencies = {}, version } = require("../package.json");

const OTHER_WAYS = [
  "  uvx devtools-mcp   (or: pipx install devtools-mcp)",
  "  the release archive devtools-mcp-<version>-<target>.tar.gz, or the .mcpb bundle",
  "  cargo install devtools-mcp (or cargo binstall devtools-mcp)",
].join("\n");

/** linux-x64-gnu, linux-x64-musl, darwin-arm64, win32-x64...: the platform packages' suffix. */
function currentPlatform() {
  let name = `${process.platform}-${process.arch}`;
  if (process.platform === "linux") {
    const report = process.report && process.report.getReport();
    const glibc = report && report.header && report.header.glibcVersionRuntime;
    name += glibc ? "-gnu" : "-musl";
  }
  return name;
}

function fail(message) {
  process.stderr.write(`devtools-mcp: ${message}\n`);
  process.exit(1);
}

function findBinary() {
  const override = process.env.DEVTOOLS_MCP_BINARY;
  if (override) return override;
  const platform = currentPlatform();
  const packages = Object.keys(optionalDependencies);
  const wanted = packages.find((name) => name.endsWith(`/${platform}`));
  const platforms = packages.map((name) => name.slice(name.indexOf("/") + 1)).join(", ");
  if (!wanted) {
    fail(
      `there is no npm package of devtools-mcp ${version} for this platform (${platform}); ` +
        `there is one for: ${platforms}.\nOther ways to install it:\n${OTHER_WAYS}`,
    );
  }
  const binary = process.platform === "win32" ? "devtools-mcp.exe" : "devtools-mcp";
  try {
    return require.resolve(`${wanted}/bin/${binary}`);
  } catch {
    fail(
      `the package ${wanted}@${version}, which holds the server for this platform, is not ` +
        `installed: npm skips optional dependencies with --omit=optional or --no-optional, ` +
        `and when the platform fields did not match. Install it again without those flags ` +
        `(npm install devtools-mcp), or ${wanted}@${version} directly.\n` +
        `Other ways to install it:\n${OTHER_WAYS}`,
    );
  }
}

const binary = findBinary();
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
// A client stops its server with a signal: pass it on, so the server closes its browser.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
for (const signal of forwarded) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => fail(`cannot run ${binary}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    for (const forwardedSignal of forwarded) process.removeAllListeners(forwardedSignal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
