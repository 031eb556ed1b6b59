/**
 * Lazy access to `@mariozechner/pi-ai`.
 *
 * Importing pi-ai's root module is not free. Measured on the development machine (Node 20,
 * cold process, `await import("@mariozechner/pi-ai")`): 250–380 ms, of which ~200 ms is
 * `typebox` and ~130 ms is `typebox/compile` (pulled in by pi-ai's tool-argument validation),
 * ~15 ms is the generated model table; the provider SDKs themselves are already loaded on first
 * use by pi-ai 0.73.1. A plain `import("node:fs")` takes ~5 ms for comparison. The package only
 * exports its root (no deep imports), so the whole cost is paid on the first import.
 *
 * The files in this folder therefore import pi-ai with `import type` only, and load the runtime
 * through `loadPiAi()` when a model is resolved or a stream is created. That keeps `--help`,
 * `--version`, usage errors and `--model-script` validation errors fast, and lets the CLI overlap
 * the import with other start-up work (call `loadPiAi()` early without awaiting it).
 */
import { importModule } from "../module-loader.js";
import { piAiFile } from "./pi-ai-files.js";
import { loadPiAiEnvKeys } from "./pi-ai-env-keys.js";

export type PiAi = typeof import("@mariozechner/pi-ai");

let loading: Promise<PiAi> | undefined;
let loaded: PiAi | undefined;

/** Import pi-ai once; later calls share the same promise. */
export function loadPiAi(): Promise<PiAi> {
  loading ??= importModule<PiAi>("@mariozechner/pi-ai").then((mod) => {
    loaded = mod;
    return mod;
  });
  return loading;
}

/** The pi-ai module if `loadPiAi()` has already finished, else undefined. */
export function piAiIfLoaded(): PiAi | undefined {
  return loaded;
}

/** The part of pi-ai that model resolution and parley's local models need. */
export type PiAiCore = Pick<
  PiAi,
  | "getProviders"
  | "getModels"
  | "calculateCost"
  | "getSupportedThinkingLevels"
  | "clampThinkingLevel"
  | "getEnvApiKey"
  | "findEnvKeys"
  | "registerApiProvider"
  | "getApiProvider"
  | "unregisterApiProviders"
  | "createAssistantMessageEventStream"
>;

type PiAiCatalog = Pick<PiAi, "getProviders" | "getModels" | "calculateCost" | "getSupportedThinkingLevels" | "clampThinkingLevel">;

let loadingCore: Promise<PiAiCore> | undefined;
let loadingCatalog: Promise<void> | undefined;
let catalog: PiAiCatalog | undefined;

/** Functions of pi-ai's model catalogue module, usable once `loadPiAiCatalog()` has finished. */
function catalogued<K extends keyof PiAiCatalog>(name: K): PiAiCatalog[K] {
  return ((...args: unknown[]) => {
    // pi-ai's root re-exports the same module: once it is loaded, so is the catalogue.
    catalog ??= loaded;
    if (!catalog) throw new Error(`pi-ai's model catalogue is not loaded yet (${name}): await loadPiAiCatalog() first`);
    return (catalog[name] as (...a: unknown[]) => unknown)(...args);
  }) as PiAiCatalog[K];
}

/**
 * The same functions as pi-ai's root exports, from the plain modules that define them (no
 * TypeBox, no provider registrations). They are the very module instances the root re-exports
 * (same files), so a provider registered here is the one pi-ai's streamSimple finds. The package
 * exports only its root, hence the file URLs.
 *
 * The model catalogue (`models.js`, ~550 KB of generated tables, ~10 ms to load) is not loaded
 * here: start-up with the offline or a scripted model never needs it. Its functions work once
 * `loadPiAiCatalog()` has finished (model resolution, `ensureCore` and the commands that list or
 * pick models await it).
 */
export function loadPiAiCore(): Promise<PiAiCore> {
  loadingCore ??= (async () => {
    const [resolution, registry, events] = await Promise.all([
      loadPiAiForResolution(),
      piAiFile("api-registry.js").then((file) => importModule<Pick<PiAi, "registerApiProvider" | "getApiProvider" | "unregisterApiProviders">>(file)),
      piAiFile("utils/event-stream.js").then((file) => importModule<Pick<PiAi, "createAssistantMessageEventStream">>(file)),
    ]);
    return {
      ...resolution,
      calculateCost: catalogued("calculateCost"),
      registerApiProvider: registry.registerApiProvider,
      getApiProvider: registry.getApiProvider,
      unregisterApiProviders: registry.unregisterApiProviders,
      createAssistantMessageEventStream: events.createAssistantMessageEventStream,
    };
  })();
  return loadingCore;
}

/** What choosing a model needs: API-key lookup, and the catalogue's functions (usable once it is loaded). */
export type PiAiResolution = Pick<PiAiCore, "getProviders" | "getModels" | "getSupportedThinkingLevels" | "clampThinkingLevel" | "getEnvApiKey" | "findEnvKeys">;

let loadingResolution: Promise<PiAiResolution> | undefined;

/** Only pi-ai's API-key module: start-up decides on a model with it and nothing else of pi-ai. */
export function loadPiAiForResolution(): Promise<PiAiResolution> {
  loadingResolution ??= loadPiAiEnvKeys().then((keys) => ({
    getProviders: catalogued("getProviders"),
    getModels: catalogued("getModels"),
    getSupportedThinkingLevels: catalogued("getSupportedThinkingLevels"),
    clampThinkingLevel: catalogued("clampThinkingLevel"),
    getEnvApiKey: keys.getEnvApiKey,
    findEnvKeys: keys.findEnvKeys,
  }));
  return loadingResolution;
}

/** Load pi-ai's model catalogue once; later calls share the same promise. */
export function loadPiAiCatalog(): Promise<void> {
  loadingCatalog ??= piAiFile("models.js").then((file) => importModule<PiAiCatalog>(file)).then((mod) => {
    catalog = mod;
  });
  return loadingCatalog;
}

/** Whether the model catalogue's functions can be called. */
export function piAiCatalogLoaded(): boolean {
  catalog ??= loaded;
  return catalog !== undefined;
}
