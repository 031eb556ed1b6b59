#!/usr/bin/env node
// The package's "./rpc-entry" export, as in the newest pi's package: `node <this file> [flags]`
// (or importing it) runs parley in RPC mode with the remaining arguments, without `--mode rpc`,
// from the same code-cached bundle as bin/parley.js. The process is named as pi names its own
// (`<app>-rpc`). A `--mode` among the arguments wins, as it does in pi.
"use strict";
process.title = "parley-rpc";
require("./run-bundle.js")(["--mode", "rpc", ...process.argv.slice(2)]);
