#!/usr/bin/env node
// Runs the CLI bundle (built by `npm run build`, which `npm ci` runs) from its V8 code cache: one
// file, compiled code ready, for a fast start. The compiled modules in dist/ are the same code.
import { launchCli } from "../dist/cli/launch-bundle.js";

launchCli(process.argv.slice(2));
