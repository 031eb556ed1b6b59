/**
 * pi-ai's API-key module (`env-api-keys.js`: which environment variable holds which provider's
 * key), the only part of pi-ai that start-up needs. Run from the compiled files, this loads
 * pi-ai's own file. The CLI bundle swaps this module for that file compiled into the bundle
 * (packages/agent/src/startup/build-bundle.mjs), so a plain start loads no ES module, and Node's ES module loader
 * never starts (~13 ms of start-up). Keep the export's name and shape: the swap provides it.
 */
import { importModule } from "../startup/module-loader.js";
import { piAiFile } from "./pi-ai-files.js";

export type PiAiEnvKeys = Pick<typeof import("@earendil-works/pi-ai/compat"), "getEnvApiKey" | "findEnvKeys">;

export async function loadPiAiEnvKeys(): Promise<PiAiEnvKeys> {
  return importModule<PiAiEnvKeys>(await piAiFile("env-api-keys.js"));
}
