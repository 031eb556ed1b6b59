#!/usr/bin/env node
// Writes packages/protocol/json-schema/*.json from the built schemas.
// Build first:  npx tsc -p packages/protocol
// Then:         node packages/protocol/scripts/generate-json-schema.mjs
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { buildJsonSchemaFiles } from "./json-schema-files.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.resolve(here, "../json-schema");

let schemas;
try {
  schemas = await import("../dist/schema/index.js");
} catch (err) {
  console.error("Cannot load ../dist/schema/index.js: run `npx tsc -p packages/protocol` first.");
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}

const files = buildJsonSchemaFiles(schemas);
await mkdir(outDir, { recursive: true });
for (const name of await readdir(outDir)) {
  if (name.endsWith(".json") && !Object.hasOwn(files, name)) await rm(path.join(outDir, name));
}
for (const [name, text] of Object.entries(files)) {
  await writeFile(path.join(outDir, name), text);
  console.log(`wrote ${path.relative(process.cwd(), path.join(outDir, name))} (${text.length} bytes)`);
}
