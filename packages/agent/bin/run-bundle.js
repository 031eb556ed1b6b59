// Shared by bin/parley.js and bin/rpc-entry.js: runs the CLI bundle (built by `npm run build`,
// which `npm ci` runs) from its V8 code cache, through the CommonJS launcher, with `argv`.
"use strict";
const { existsSync } = require("node:fs");
const { join } = require("node:path");
const { nodeVersionProblem } = require("./node-version.js");

module.exports = function runBundle(argv) {
  // SIGUSR1 would open Node's inspector on 127.0.0.1:9229, letting anyone who can signal parley
  // attach to it and run code. A listener of our own takes the signal over, first thing, so it
  // does nothing (Node's --disable-sigusr1 is not in every Node parley runs on).
  process.on("SIGUSR1", () => {});
  const problem = nodeVersionProblem(process.versions.node);
  if (problem) {
    process.stderr.write(`${problem}\n`);
    process.exit(1);
  }
  const launcher = join(__dirname, "../dist/bundle/launch.cjs");
  if (!existsSync(launcher)) {
    process.stderr.write(`parley: ${launcher} is missing: parley is not built. Run \`npm run build\` (\`npm ci\` runs it).\n`);
    process.exit(1);
  }
  require(launcher).launchCli(argv, join(__dirname, "../dist/bundle/parley-cli.js"));
};
