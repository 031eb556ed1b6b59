#!/usr/bin/env node
// Runs the bundle (built by `npm run build`, which `npm ci` runs): one file to load instead of
// dozens, for a fast start. The compiled modules in dist/ are the same code, unbundled.
import { main } from "../dist/bundle/cli/main.js";

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`parley: fatal: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
