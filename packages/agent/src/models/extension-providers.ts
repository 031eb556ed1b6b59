/**
 * Providers registered by extensions (pi.registerProvider): their models join the catalog, and a
 * provider that brings its own `streamSimple` is registered with pi-ai under its `api` name.
 */
import type {
  Api,
  AssistantMessage,
  ClassifierApi,
  ClassifierModel,
  ImageApi,
  ImageModel,
  Model,
  ProviderClassifier,
  ProviderImages,
} from "@earendil-works/pi-ai";
import { resolveConfigTemplate } from "../config/config-value.js";
import { type ExtensionOAuthConfig, extensionOAuthFlow, type OAuthFlow, registerOAuthFlow } from "../config/oauth-tokens.js";
import { loadPiAi, piAiIfLoaded } from "./pi-ai.js";
import { lastResort, type ModelResolution } from "./resolve.js";
import { PARLEY_PROVIDER } from "./script-model.js";
import { isVirtualModel, type Route, type RouteRequest, routeRequest, type VirtualModelDefinition, VirtualModels } from "./virtual-models.js";

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
  /** The provider's prompt cache lifetimes in seconds, per retention tier (what cache warming needs). */
  promptCache?: PromptCache;
  /** "image" or "classifier" for pi 1.6's typed models; a chat model when absent. */
  type?: string;
}

export type PromptCache = NonNullable<Model<Api>["promptCache"]>;

/** A model of a type other than chat (pi 1.6). */
export type TypedModel = ImageModel<ImageApi> | ClassifierModel<ClassifierApi>;

/**
 * What an extension's provider brings for image and classifier models (pi 1.6): its models of
 * those types, and the code that calls them, a provider object's own `classify`/`generateImages`
 * or a registration's `images`/`classifiers` implementations keyed by the model's api.
 */
export interface TypedCalls {
  models: TypedModel[];
  classify?: ProviderClassifier["classify"];
  generateImages?: ProviderImages["generateImages"];
  classifiers?: Record<string, ProviderClassifier>;
  images?: Record<string, ProviderImages>;
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
  /** A login of the provider's own: its tokens are refreshed and saved as pi does (config/oauth-tokens.ts). */
  oauth?: ExtensionOAuthConfig;
  /** A provider object's OAuth (pi-ai 1.6's `OAuthAuth`): its refresh and its resolved auth, used as they are. */
  oauthFlow?: OAuthFlow;
  /** A provider object's key, resolved before each request (native-provider.ts). */
  resolveApiKey?: () => Promise<string | undefined>;
  /** A provider object's own calls of its image and classifier models (pi-ai 1.6's Provider). */
  classify?: ProviderClassifier["classify"];
  generateImages?: ProviderImages["generateImages"];
  /** A registration's image and classifier implementations, keyed by model api (pi 1.6's `images`/`classifiers`). */
  images?: Record<string, ProviderImages>;
  classifiers?: Record<string, ProviderClassifier>;
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
export type StreamSimple = Parameters<typeof import("@earendil-works/pi-ai/compat").registerApiProvider>[0]["streamSimple"];
let sources = 0;

function holdStream(pi: typeof import("@earendil-works/pi-ai/compat"), api: string, source: string, stream: StreamSimple): void {
  const holders = (streamHolders.get(api) ?? []).filter((h) => h.source !== source);
  holders.push({ source, stream });
  streamHolders.set(api, holders);
  pi.registerApiProvider({ api: api as Api, stream: stream as never, streamSimple: stream }, source);
}

function releaseStreams(pi: typeof import("@earendil-works/pi-ai/compat"), source: string): void {
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
  /** pi.registerVirtualModel: replaces one of the same provider and id; throws when a physical model has that id. */
  registerVirtual(definition: VirtualModelDefinition): void;
  unregisterVirtual(provider: string, id: string): void;
  /** Whether any virtual model is registered. */
  hasVirtualModels(): boolean;
  /** A registered virtual model (found without the catalogue). */
  virtualModel(provider: string, id: string): Model<Api> | undefined;
  /** A physical model known now: never a virtual one. */
  physicalModel(provider: string, id: string): Model<Api> | undefined;
  /** One request's physical model and level, from a virtual model's router (see routeRequest). */
  route(model: Model<Api>, request: Omit<RouteRequest, "model" | "previous" | "failed"> & { failed?: AssistantMessage }): Promise<Route>;
  /** An extension provider's image and classifier models and calls, if it brought any. */
  typedCalls(provider: string): TypedCalls | undefined;
  /** Every extension provider's image and classifier models. */
  typedModels(): TypedModel[];
}

const isTypedConfig = (m: ProviderModelConfig): boolean => m.type === "image" || m.type === "classifier";

/** A registration's image and classifier models and calls; undefined when it brings none. */
function typedCallsOf(name: string, api: string, config: ProviderConfig): TypedCalls | undefined {
  const models = (config.models ?? []).filter(isTypedConfig).map(
    (m) =>
      // An extension's model entry, its type checked above; the rest is the extension's to get right, as in pi.
      ({
        ...m,
        name: m.name ?? m.id,
        api: m.api ?? api,
        provider: name,
        baseUrl: m.baseUrl ?? config.baseUrl ?? "",
        input: m.input ?? ["text"],
        cost: m.cost ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      }) as TypedModel,
  );
  const calls: TypedCalls = {
    models,
    ...(config.classify ? { classify: config.classify } : {}),
    ...(config.generateImages ? { generateImages: config.generateImages } : {}),
    ...(config.classifiers ? { classifiers: config.classifiers } : {}),
    ...(config.images ? { images: config.images } : {}),
  };
  return models.length > 0 || Object.keys(calls).length > 1 ? calls : undefined;
}

/** Wraps a resolution so extension providers' models are found, listed and authorised. */
export function withExtensionProviders(base: ModelResolution): ModelResolution & ExtensionProviders {
  const providers = new Map<
    string,
    {
      models: Model<Api>[];
      apiKey: string | undefined;
      api: string;
      stream?: StreamSimple;
      dropOAuth?: () => void;
      resolveApiKey?: () => Promise<string | undefined>;
      typed?: TypedCalls;
    }
  >();
  // This agent's source id in pi-ai's registry, per provider name.
  const serial = ++sources;
  const sourceOf = (name: string): string => `${SOURCE_PREFIX}${name}#${serial}`;
  const virtual = new VirtualModels();
  // A virtual model hides a physical one of the same provider and id (one a catalogue refresh added later, in pi).
  const extensionModels = (): Model<Api>[] => {
    const own = [...providers.values()].flatMap((p) => p.models);
    return virtual.size === 0 ? own : [...own.filter((m) => !virtual.find(m.provider, m.id)), ...virtual.models()];
  };
  /** A physical model known now (extension providers', parley's own, the catalogue's once loaded). */
  const physical = (provider: string, id: string): Model<Api> | undefined => {
    const own = providers.get(provider)?.models.find((m) => m.id === id);
    if (own) return own;
    if (provider !== PARLEY_PROVIDER && !base.catalogNow()) return undefined;
    const found = base.findModel(provider, id);
    return found && !isVirtualModel(found) ? found : undefined;
  };
  // As pi 1.6 reads a provider's apiKey: `$VAR`/`${VAR}` from the environment, `!command`'s output, otherwise the text itself.
  const keyOf = (provider: string): string | undefined => {
    const entry = providers.get(provider);
    if (!entry?.apiKey) return undefined;
    return resolveConfigTemplate(entry.apiKey);
  };

  // As pi's registry: auth.json and the environment first, then the key the provider was given.
  const providerAuth = (model: Model<Api>): boolean => {
    const entry = providers.get(model.provider);
    return entry !== undefined && (entry.stream !== undefined || keyOf(model.provider) !== undefined || base.hasAuth(model));
  };
  // As pi: a virtual model under a provider with physical models is usable when that provider
  // has credentials; under a provider id nothing else uses, always.
  const virtualAuth = (model: Model<Api>): boolean => {
    if (providers.has(model.provider)) return providerAuth(model);
    const others = base.catalogNow() ? base.allModels().filter((m) => m.provider === model.provider && !isVirtualModel(m)) : [];
    return others.length === 0 || base.hasAuth(model);
  };
  const hasOwnAuth = (model: Model<Api>): boolean =>
    isVirtualModel(model) ? virtualAuth(model) : providers.has(model.provider) ? providerAuth(model) : base.hasAuth(model);
  // Pattern matching (--model, set_model) and the start-up default see these models too.
  base.setExtraModels({ models: extensionModels, hasAuth: hasOwnAuth, configuredKey: keyOf });

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
      // Built-in models an extension provider's model or a virtual model replaces are left out.
      return lastResort([...base.availableModels().filter((m) => !own.some((o) => o.provider === m.provider && o.id === m.id)), ...usable]);
    },
    findModel: (provider, id) => virtual.find(provider, id) ?? providers.get(provider)?.models.find((m) => m.id === id) ?? base.findModel(provider, id),
    // The registered key sits in the base's lookup (after auth.json, before the environment); a native provider's own resolution comes last.
    getApiKey: (provider) => base.getApiKey(provider),
    getRequestKey: async (provider) => {
      const entry = providers.get(provider);
      return (await base.getRequestKey(provider)) ?? (await entry?.resolveApiKey?.());
    },
    getRequestAuth: async (provider) => {
      const entry = providers.get(provider);
      const auth = await base.getRequestAuth(provider);
      if (!entry?.resolveApiKey || auth?.apiKey !== undefined) return auth;
      const apiKey = await entry.resolveApiKey();
      return apiKey !== undefined ? { ...auth, apiKey } : auth;
    },
    hasAuth: hasOwnAuth,
    register(name, config) {
      const api = config.api ?? `${SOURCE_PREFIX}${name}`;
      const typed = typedCallsOf(name, api, config);
      const models = (config.models ?? [])
        .filter((m) => !isTypedConfig(m))
        .map(
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
            ...(m.promptCache ? { promptCache: m.promptCache } : {}),
          }),
        );
      const stream = typeof config.streamSimple === "function" ? (config.streamSimple as unknown as StreamSimple) : undefined;
      const oauth = config.oauth;
      const usableOAuth = typeof oauth?.refreshToken === "function" && typeof oauth.getApiKey === "function";
      const flow = config.oauthFlow ?? (usableOAuth ? extensionOAuthFlow(oauth) : undefined);
      const dropOAuth = flow ? registerOAuthFlow(name, flow) : undefined;
      const entry = {
        models,
        apiKey: config.apiKey,
        api,
        ...(stream !== undefined ? { stream } : {}),
        ...(dropOAuth ? { dropOAuth } : {}),
        ...(config.resolveApiKey ? { resolveApiKey: config.resolveApiKey } : {}),
        ...(typed ? { typed } : {}),
      };
      providers.get(name)?.dropOAuth?.();
      providers.set(name, entry);
      if (stream !== undefined) {
        const register = (pi: typeof import("@earendil-works/pi-ai/compat")): void => holdStream(pi, api, sourceOf(name), stream);
        const pi = piAiIfLoaded();
        if (pi) register(pi);
        // Still this registration once pi-ai has loaded (not unregistered or replaced meanwhile).
        else void loadPiAi().then((loaded) => providers.get(name) === entry && register(loaded));
      }
    },
    typedCalls: (provider) => providers.get(provider)?.typed,
    typedModels: () => [...providers.values()].flatMap((p) => p.typed?.models ?? []),
    ownStream(model) {
      const entry = providers.get(model.provider);
      return entry?.stream !== undefined && model.api === entry.api ? entry.stream : undefined;
    },
    registerVirtual(definition) {
      const existing = physical(definition.provider, definition.id);
      if (existing) throw new Error(`Virtual model ${definition.provider}/${definition.id} conflicts with a physical model.`);
      virtual.register(definition);
    },
    unregisterVirtual(provider, id) {
      virtual.unregister(provider, id);
    },
    hasVirtualModels: () => virtual.size > 0,
    virtualModel: (provider, id) => virtual.find(provider, id),
    physicalModel: physical,
    route(model, request) {
      const catalog = { physical, hasAuth: hasOwnAuth, clamp: base.clampThinkingLevel };
      return routeRequest(virtual.get(model.provider, model.id), model, catalog, request);
    },
    unregister(name) {
      providers.get(name)?.dropOAuth?.();
      providers.delete(name);
      const pi = piAiIfLoaded();
      if (pi) releaseStreams(pi, sourceOf(name));
    },
  };
}
