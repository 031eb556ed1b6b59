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

export interface ExtensionProviders {
  register(name: string, config: ProviderConfig): void;
  unregister(name: string): void;
}

/** Wraps a resolution so extension providers' models are found, listed and authorised. */
export function withExtensionProviders(base: ModelResolution): ModelResolution & ExtensionProviders {
  const providers = new Map<string, { models: Model<Api>[]; apiKey: string | undefined; ownStream: boolean }>();
  const extensionModels = (): Model<Api>[] => [...providers.values()].flatMap((p) => p.models);
  const keyOf = (provider: string): string | undefined => {
    const entry = providers.get(provider);
    if (!entry?.apiKey) return undefined;
    return process.env[entry.apiKey] ?? entry.apiKey;
  };

  // As pi's registry: auth.json and the environment first, then the key the provider was given.
  const hasOwnAuth = (model: Model<Api>): boolean => {
    const entry = providers.get(model.provider);
    return entry !== undefined && (entry.ownStream || keyOf(model.provider) !== undefined || base.hasAuth(model));
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
      providers.set(name, { models, apiKey: config.apiKey, ownStream: typeof config.streamSimple === "function" });
      if (typeof config.streamSimple === "function") {
        const stream = config.streamSimple as unknown as Parameters<typeof import("@mariozechner/pi-ai").registerApiProvider>[0]["streamSimple"];
        const register = (pi: typeof import("@mariozechner/pi-ai")): void =>
          pi.registerApiProvider({ api: api as Api, stream: stream as never, streamSimple: stream }, `${SOURCE_PREFIX}${name}`);
        const pi = piAiIfLoaded();
        if (pi) register(pi);
        else void loadPiAi().then(register);
      }
    },
    unregister(name) {
      providers.delete(name);
      piAiIfLoaded()?.unregisterApiProviders(`${SOURCE_PREFIX}${name}`);
    },
  };
}
