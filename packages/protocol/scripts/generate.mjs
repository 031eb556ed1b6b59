// Writes every generated file of @parley/protocol from the command table and the schemas:
//   src/generated/command-aliases.ts  the named exports of each command (PromptCommand, …)
//   src/generated/command-checks.ts   the standalone command validators (no TypeBox at start-up)
//   json-schema/*.json                the published JSON Schema files
// Run through `npm run generate` at the repository root (which also writes the client's methods);
// the package's tests fail while any of these files is stale.
import { execFileSync } from "node:child_process";
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildAliasModule } from "./alias-code.mjs";
import { buildJsonSchemaFiles } from "./json-schema-files.mjs";
import { buildValidatorModule } from "./validator-code.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const aliasFile = path.join(root, "src/generated/command-aliases.ts");
const STUB = "// Placeholder while `npm run generate` runs: the aliases are written from the built table.\nexport {};\n";

function build() {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-b", root], { stdio: "inherit" });
}

async function write(file, text) {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  console.log(`wrote ${path.relative(process.cwd(), file)} (${text.length} bytes)`);
}

/** Builds the package, writes its generated files, builds again; returns the built schema module. */
export async function generateProtocol() {
  // The aliases name every declared command, so stale ones may not compile (a command removed):
  // build from the table alone first.
  await write(aliasFile, STUB);
  build();
  const schemas = await import(`${pathToFileURL(path.join(root, "dist/schema/index.js")).href}?generate=${Date.now()}`);

  await write(aliasFile, buildAliasModule(schemas));
  await write(path.join(root, "src/generated/command-checks.ts"), buildValidatorModule(schemas));

  const outDir = path.join(root, "json-schema");
  const files = buildJsonSchemaFiles(schemas);
  await mkdir(outDir, { recursive: true });
  for (const name of await readdir(outDir)) {
    if (name.endsWith(".json") && !Object.hasOwn(files, name)) await rm(path.join(outDir, name));
  }
  for (const [name, text] of Object.entries(files)) await write(path.join(outDir, name), text);

  build();
  return schemas;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await generateProtocol();
