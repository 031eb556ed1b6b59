#!/usr/bin/env node
// Runs the CLI bundle (built by `npm run build`, which `npm ci` runs) from its V8 code cache: one
// file, compiled code ready, for a fast start. The compiled modules in dist/ are the same code.
// CommonJS (bin/package.json says so), as is the launcher: a start that loads no ES module never
// starts Node's ES module loader.
"use strict";
require("./run-bundle.js")(process.argv.slice(2));
