#!/usr/bin/env node
import { main } from "../dist/cli/main.js";

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`parley: fatal: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
