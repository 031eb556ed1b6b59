#!/usr/bin/env node
// Runs the CLI bundle (built by `npm run build`, which `npm ci` runs) from its V8 code cache: one
// file, compiled code ready, for a fast start. The compiled modules in dist/ are the same code.
// CommonJS (bin/package.json says so), as is the launcher: a start that loads no ES module never
// starts Node's ES module loader.
"use strict";
const { existsSync } = require("node:fs");
const { join } = require("node:path");

const launcher = join(__dirname, "../dist/bundle/launch.cjs");
if (!existsSync(launcher)) {
  process.stderr.write(`parley: ${launcher} is missing: parley is not built. Run \`npm run build\` (\`npm ci\` runs it).\n`);
  process.exit(1);
}
require(launcher).launchCli(process.argv.slice(2), join(__dirname, "../dist/bundle/parley-cli.js"));
