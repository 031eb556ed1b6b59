/**
 * Where pi-ai's own module files are. The package exports only its root, and parley loads some
 * of its modules directly (the API-key lookup, the provider registry, the model catalogue) to
 * start without the root's TypeBox and provider registrations.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { resolveModule } from "../startup/module-loader.js";

let piAiRoot: Promise<string> | undefined;

/** The file URL of a module in pi-ai's dist folder, e.g. "api-registry.js". */
export async function piAiFile(name: string): Promise<string> {
  piAiRoot ??= findPiAiDist();
  return pathToFileURL(join(await piAiRoot, name)).href;
}

/**
 * pi-ai's dist folder. Node's own lookup order (node_modules folders upward from this file) finds
 * it with a few stat calls; resolving the package as an ES module would find the same folder but
 * costs ~2 ms of start-up (it reads and interprets package.json files), so it stays the fallback
 * for installs without node_modules folders.
 */
async function findPiAiDist(): Promise<string> {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", "@earendil-works", "pi-ai", "dist");
    if (existsSync(join(candidate, "models.js"))) return candidate;
    if (dirname(dir) === dir) break;
  }
  return dirname(fileURLToPath(await resolveModule("@earendil-works/pi-ai")));
}
