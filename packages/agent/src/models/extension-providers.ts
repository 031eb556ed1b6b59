/**
 * Providers registered by extensions (pi.registerProvider): their models join the catalog, and a
 * provider that brings its own `streamSimple` is registered with pi-ai under its `api` name.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import { loadPiAi, piAiIfLoaded } from "./pi-ai.js";
import { lastResort, type ModelResolution } from "./resolve.js";

export interface ProviderModelConfig {
  id: string;
  name?: string;
  api?: string;
  baseUrl?: string;
  reasoning?: boolean;
  input?: ("text" | "image")[];
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number };
  contextWindow?: number;
  maxTokens?: number;
  headers?: Record<string, string>;
  /** pi-ai's compatibility switches (models.json `compat`, merged over the provider's). */
  compat?: Record<string, unknown>;
}

export interface ProviderConfig {
  name?: string;
  baseUrl?: string;
  /** A key, or the name of an environment variable holding one (as pi reads it). */
  apiKey?: string;
  api?: string;
  streamSimple?: (...args: never[]) => unknown;
  headers?: Record<string, string>;
  compat?: Record<string, unknown>;
  models?: ProviderModelConfig[];
}

const SOURCE_PREFIX = "parley-extension:";

/**
 * The stream functions extension providers handed pi-ai, by api name. pi-ai's registry is one per
 * process and keeps one function per api; in ACP mode each session's agent registers its
 * extensions' providers, so several may hold the same api. Each holds it under a source id of its
 * own, and when one lets go (its session's ctx.reload() or close), the one registered before it
 * takes over again instead of the api vanishing for every session.
 */
const streamHolders = new Map<string, { source: string; stream: StreamSimple }[]>();
export type StreamSimple = Parameters<typeof import("@mariozechner/pi-ai").registerApiProvider>[0]["streamSimple"];
let sources = 0;

function holdStream(pi: typeof import("@mariozechner/pi-ai"), api: string, source: string, stream: StreamSimple): void {
  const holders = (streamHolders.get(api) ?? []).filter((h) => h.source !== source);
  holders.push({ source, stream });
  streamHolders.set(api, holders);
  pi.registerApiProvider({ api: api as Api, stream: stream as never, streamSimple: stream }, source);
}

function releaseStreams(pi: typeof import("@mariozechner/pi-ai"), source: string): void {
  pi.unregisterApiProviders(source);
  for (const [api, holders] of streamHolders) {
    const rest = holders.filter((h) => h.source !== source);
    if (rest.length === holders.length) continue;
    if (rest.length === 0) {
      streamHolders.delete(api);
      continue;
    }
    streamHolders.set(api, rest);
    const last = rest[rest.length - 1];
    if (last) pi.registerApiProvider({ api: api as Api, stream: last.stream as never, streamSimple: last.stream }, last.source);
  }
}

export interface ExtensionProviders {
  register(name: string, config: ProviderConfig): void;
  unregister(name: string): void;
  /**
   * The stream function this agent's extension gave for the model's provider, if it gave one:
   * requests of this agent go through it rather than through whichever agent registered the api
   * in pi-ai last (ACP mode runs an agent, and an extension instance, per session).
   */
  ownStream(model: Model<Api>): StreamSimple | undefined;
}

/** Wraps a resolution so extension providers' models are found, listed and authorised. */
export function withExtensionProviders(base: ModelResolution): ModelResolution & ExtensionProviders {
  const providers = new Map<string, { models: Model<Api>[]; apiKey: string | undefined; api: string; stream?: StreamSimple }>();
  // This agent's source id in pi-ai's registry, per provider name.
  const serial = ++sources;
  const sourceOf = (name: string): string => `${SOURCE_PREFIX}${name}#${serial}`;
  const extensionModels = (): Model<Api>[] => [...providers.values()].flatMap((p) => p.models);
  const keyOf = (provider: string): string | undefined => {
    const entry = providers.get(provider);
    if (!entry?.apiKey) return undefined;
    return process.env[entry.apiKey] ?? entry.apiKey;
  };

  // As pi's registry: auth.json and the environment first, then the key the provider was given.
  const hasOwnAuth = (model: Model<Api>): boolean => {
    const entry = providers.get(model.provider);
    return entry !== undefined && (entry.stream !== undefined || keyOf(model.provider) !== undefined || base.hasAuth(model));
  };
  // Pattern matching (--model, set_model) and the start-up default see these models too.
  base.setExtraModels({ models: extensionModels, hasAuth: hasOwnAuth });

  return {
    ...base,
    // A getter: the spread above copied its value at this moment.
    get catalogReady() {
      return base.catalogReady;
    },
    // A registered model with a built-in's id replaces it (models.json merges this way).
    // Only models with credentials are offered, as pi's registry offers them.
    availableModels: () => {
      const own = extensionModels();
      const usable = own.filter(hasOwnAuth);
      return lastResort([...base.availableModels().filter((m) => !own.some((o) => o.provider === m.provider && o.id === m.id)), ...usable]);
    },
    findModel: (provider, id) => providers.get(provider)?.models.find((m) => m.id === id) ?? base.findModel(provider, id),
    getApiKey: (provider) => (providers.has(provider) ? (base.getApiKey(provider) ?? keyOf(provider)) : base.getApiKey(provider)),
    hasAuth: (model) => (providers.has(model.provider) ? hasOwnAuth(model) : base.hasAuth(model)),
    register(name, config) {
      const api = config.api ?? `${SOURCE_PREFIX}${name}`;
      const models = (config.models ?? []).map(
        (m): Model<Api> => ({
          id: m.id,
          name: m.name ?? m.id,
          api: (m.api ?? api) as Api,
          provider: name,
          baseUrl: m.baseUrl ?? config.baseUrl ?? "",
          reasoning: m.reasoning ?? false,
          input: m.input ?? ["text"],
          cost: m.cost ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
          contextWindow: m.contextWindow ?? 128_000,
          maxTokens: m.maxTokens ?? 16_384,
          ...((m.headers ?? config.headers) ? { headers: { ...config.headers, ...m.headers } } : {}),
          ...((m.compat ?? config.compat) ? { compat: { ...config.compat, ...m.compat } } : {}),
        }),
      );
      const stream = typeof config.streamSimple === "function" ? (config.streamSimple as unknown as StreamSimple) : undefined;
      const entry = { models, apiKey: config.apiKey, api, ...(stream !== undefined ? { stream } : {}) };
      providers.set(name, entry);
      if (stream !== undefined) {
        const register = (pi: typeof import("@mariozechner/pi-ai")): void => holdStream(pi, api, sourceOf(name), stream);
        const pi = piAiIfLoaded();
        if (pi) register(pi);
        // Still this registration once pi-ai has loaded (not unregistered or replaced meanwhile).
        else void loadPiAi().then((loaded) => providers.get(name) === entry && register(loaded));
      }
    },
    ownStream(model) {
      const entry = providers.get(model.provider);
      return entry?.stream !== undefined && model.api === entry.api ? entry.stream : undefined;
    },
    unregister(name) {
      providers.delete(name);
      const pi = piAiIfLoaded();
      if (pi) releaseStreams(pi, sourceOf(name));
    },
  };
}
