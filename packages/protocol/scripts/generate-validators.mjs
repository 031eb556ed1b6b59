// Writes src/generated/command-checks.ts from the built schemas (run `npx tsc -p packages/protocol` first).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildValidatorModule } from "./validator-code.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const schemas = await import(join(root, "dist/schema/index.js"));
const target = join(root, "src/generated/command-checks.ts");
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, buildValidatorModule(schemas));
console.log(`wrote ${target}`);
