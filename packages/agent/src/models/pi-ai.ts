/**
 * Lazy access to `@earendil-works/pi-ai`.
 *
 * Loading pi-ai's root is not free (its model catalogue, TypeBox, provider registrations): tens of
 * milliseconds from the CLI bundle's code cache, hundreds as plain ES modules. Start-up with the
 * offline or a scripted model needs none of it, so these files import pi-ai with `import type`
 * only and load the runtime when a model is resolved or a stream is created. The one part
 * start-up needs, the API-key lookup, is its own small module (pi-ai-env-keys.ts).
 */
import { requirePiAiModule } from "../startup/module-loader.js";
import { loadPiAiEnvKeys } from "./pi-ai-env-keys.js";

export type PiAi = typeof import("@earendil-works/pi-ai/compat");

let loading: Promise<PiAi> | undefined;
let loaded: PiAi | undefined;

/** Import pi-ai once; later calls share the same promise. */
export function loadPiAi(): Promise<PiAi> {
  // A literal import(): the CLI bundle compiles pi-ai in and turns this into a lazy initialiser.
  loading ??= import("@earendil-works/pi-ai/compat").then((mod) => {
    loaded = mod;
    return mod;
  });
  return loading;
}

/**
 * pi-ai now, for a synchronous caller (an extension's `ctx.modelRegistry.getAll()`): loaded on the
 * spot where the bundle allows it; undefined where it can only be imported and is not yet.
 */
export function loadPiAiNow(): PiAi | undefined {
  if (loaded === undefined) {
    loaded = requirePiAiModule();
    if (loaded !== undefined) loading ??= Promise.resolve(loaded);
  }
  return loaded;
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
 * What parley's own models and providers need of pi-ai. The model catalogue's functions are
 * usable once `loadPiAiCatalog()` has finished (model resolution, `ensureCore` and the commands
 * that list or pick models await it).
 */
export function loadPiAiCore(): Promise<PiAiCore> {
  loadingCore ??= Promise.all([loadPiAiForResolution(), loadPiAi()]).then(([resolution, pi]) => ({
    ...resolution,
    calculateCost: catalogued("calculateCost"),
    registerApiProvider: pi.registerApiProvider,
    getApiProvider: pi.getApiProvider,
    unregisterApiProviders: pi.unregisterApiProviders,
    createAssistantMessageEventStream: pi.createAssistantMessageEventStream,
  }));
  return loadingCore;
}

/** What choosing a model needs: API-key lookup, and the catalogue's functions (usable once it is loaded). */
export type PiAiResolution = Pick<
  PiAiCore,
  "getProviders" | "getModels" | "getSupportedThinkingLevels" | "clampThinkingLevel" | "getEnvApiKey" | "findEnvKeys"
>;

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
  loadingCatalog ??= loadPiAi().then((mod) => {
    catalog = mod;
  });
  return loadingCatalog;
}

/** Whether the model catalogue's functions can be called. */
export function piAiCatalogLoaded(): boolean {
  catalog ??= loaded;
  return catalog !== undefined;
}
