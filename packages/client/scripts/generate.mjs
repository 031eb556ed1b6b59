// Writes src/generated/command-methods.ts from the protocol's command table (built: run the
// protocol's generate.mjs first; `npm run generate` at the repository root runs both).
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildCommandMethodsModule } from "./command-methods-code.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** `schemas`: the protocol's built schema module; defaults to the built package's. */
export async function generateClient(schemas) {
  const source = schemas ?? (await import(pathToFileURL(path.join(root, "../protocol/dist/schema/index.js")).href));
  const file = path.join(root, "src/generated/command-methods.ts");
  const text = buildCommandMethodsModule(source);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  console.log(`wrote ${path.relative(process.cwd(), file)} (${text.length} bytes)`);
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-b", root], { stdio: "inherit" });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await generateClient();
