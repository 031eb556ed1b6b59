/**
 * ctx.modelRegistry over the agent's models: pi 0.73.1's ModelRegistry (pi's own example
 * extensions call getApiKeyAndHeaders before a call of their own) and the newest pi's request
 * methods, which resolve credentials when the request is made and route a virtual model first
 * (reason "direct", as pi routes a request made outside the agent loop).
 */
import type { Api, AssistantMessageEventStream, Context, Model, ModelType, ModelTypeMap, SimpleStreamOptions } from "@earendil-works/pi-ai";
import { relayStream } from "../models/error-response.js";
import type { ExtensionProviders, ModelResolution } from "../models/index.js";
import { lastResort } from "../models/resolve.js";
import { type PiAi, loadPiAiNow, piAiIfLoaded } from "../models/pi-ai.js";
import { registerParleyProviders } from "../models/register.js";
import { builtinModelsOfType, classifyWith, generateImagesWith, type TypedCallHost } from "../models/typed-models.js";
import { withRequestAuth } from "../models/request-auth.js";
import { isVirtualModel } from "../models/virtual-models.js";
import type { ExtensionModelRegistry } from "./types.js";

export interface ModelRegistryHost {
  readonly models: ModelResolution & ExtensionProviders;
  registerProvider(nameOrProvider: unknown, config?: unknown): void;
  unregisterProvider(name: string): void;
  registerVirtualModel(model: unknown): void;
  unregisterVirtualModel(provider: string, id: string): void;
}

/** pi-ai, which the registry's streams need at once (returned synchronously, as pi's are). */
function piAiNow(): PiAi {
  const pi = piAiIfLoaded() ?? loadPiAiNow();
  if (!pi) throw new Error("ctx.modelRegistry: pi-ai is not loaded yet; import it in the extension, or call this once the session has started");
  return pi;
}

export function createModelRegistry(host: ModelRegistryHost): ExtensionModelRegistry {
  const { models } = host;
  // pi's registry answers synchronously: the catalogue loads on first need where it can (the
  // CLI bundle); elsewhere, until it is loaded, only the models known without it are listed.
  const known = (): Model<Api>[] => models.modelsWithoutCatalog();
  const find = (provider: string, id: string): Model<Api> | undefined =>
    models.catalogNow() ? models.findModel(provider, id) : known().find((m) => m.provider === provider && m.id === id);

  /** The physical model and options a request is sent with: a virtual model routed, the key looked up when not given. */
  async function prepare(model: Model<Api>, context: Context, options: SimpleStreamOptions = {}): Promise<{ model: Model<Api>; options: SimpleStreamOptions }> {
    await registerParleyProviders();
    let target = model;
    let sent = options;
    if (isVirtualModel(model)) {
      const route = await models.route(model, {
        reason: "direct",
        thinkingLevel: options.reasoning ?? "off",
        messages: context.messages,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      target = route.model;
      // The caller's credentials were for the virtual model's provider: never sent to another.
      const { apiKey: _key, headers: _headers, reasoning: _level, maxTokens, ...rest } = options;
      const capped = maxTokens !== undefined && target.maxTokens > 0 ? Math.min(maxTokens, target.maxTokens) : maxTokens;
      sent = { ...rest, ...(capped !== undefined ? { maxTokens: capped } : {}), ...(route.thinkingLevel !== "off" ? { reasoning: route.thinkingLevel } : {}) };
    }
    // The provider's resolved auth, as the prompt's (an OAuth login's base URL and headers too); a key the caller gave wins.
    const auth = await models.getRequestAuth(target.provider);
    return withRequestAuth(target, sent, sent.apiKey !== undefined ? { ...auth, apiKey: sent.apiKey } : auth);
  }

  const streamSimple = (model: Model<Api>, context: Context, options?: SimpleStreamOptions): AssistantMessageEventStream => {
    const pi = piAiNow();
    return relayStream(pi, model, async () => {
      const request = await prepare(model, context, options);
      const own = models.ownStream(request.model);
      return own ? own(request.model, pi.normalizeContext(context), request.options) : pi.streamSimple(request.model, context, request.options);
    });
  };

  const all = (): Model<Api>[] => (models.catalogNow() ? models.allModels() : known());
  // Image and classifier models are pi-ai's built-in ones; their calls resolve auth as a prompt does.
  const typedHost: TypedCallHost = {
    knowsProvider: (provider) => all().some((m) => m.provider === provider) || models.typedCalls(provider) !== undefined,
    typedCalls: (provider) => models.typedCalls(provider),
    // models.json's provider headers join the auth (under a login's own), as pi 1.6 adds them to each request's.
    getRequestAuth: async (provider) => {
      await registerParleyProviders();
      const auth = await models.getRequestAuth(provider);
      const configured = models.configuredHeaders(provider);
      return configured && auth ? { ...auth, headers: { ...configured, ...auth.headers } } : auth;
    },
  };
  // pi-ai's built-in ones, with models.json's adjustments of their provider.
  const builtInOfType = <T extends "image" | "classifier">(type: T, provider?: string) =>
    builtinModelsOfType(type, provider).map((m) => models.adjustTypedModel(m));
  // An extension provider's models of a type replace a built-in provider's of the same name, as its registration does.
  const ownOfType = <T extends "image" | "classifier">(type: T, provider?: string): ModelTypeMap[T][] =>
    models.typedModels().filter((m): m is ModelTypeMap[T] => m.type === type && (provider === undefined || m.provider === provider));
  const withOwn = <M extends { provider: string }>(builtIn: readonly M[], own: M[]): readonly M[] => {
    if (own.length === 0) return builtIn;
    const replaced = new Set(own.map((m) => m.provider));
    return [...builtIn.filter((m) => !replaced.has(m.provider)), ...own];
  };
  const typed: { [T in ModelType]: (provider?: string) => readonly ModelTypeMap[T][] } = {
    chat: (provider) => all().filter((m) => provider === undefined || m.provider === provider),
    image: (provider) => withOwn(builtInOfType("image", provider), ownOfType("image", provider)),
    classifier: (provider) => withOwn(builtInOfType("classifier", provider), ownOfType("classifier", provider)),
  };
  // An unknown type lists nothing, as pi's catalogue has no models of it.
  const modelsOfType = <T extends ModelType>(type: T, provider?: string): readonly ModelTypeMap[T][] => typed[type]?.(provider) ?? [];
  const modelOfType = <T extends ModelType>(type: T, provider: string, id: string): ModelTypeMap[T] | undefined =>
    type === "chat" ? (find(provider, id) as ModelTypeMap[T] | undefined) : modelsOfType(type, provider).find((m) => m.id === id);

  return {
    refresh: async () => {},
    getAll: () => (models.catalogNow() ? models.allModels() : known()),
    getAvailable: () => (models.catalogNow() ? models.availableModels() : lastResort(known().filter((m) => models.hasAuth(m)))),
    find,
    findOfType: modelOfType,
    getModelOfType: modelOfType,
    getModelsOfType: (type, provider) => [...modelsOfType(type, provider)],
    getAvailableOfType: async (type, provider) => {
      await registerParleyProviders();
      return modelsOfType(type, provider).filter((m) => models.getApiKey(m.provider) !== undefined);
    },
    classify: (model, context, options) => classifyWith(typedHost, model, context, options),
    generateImages: (model, context, options) => generateImagesWith(typedHost, model, context, options),
    hasConfiguredAuth: (model) => models.hasAuth(model),
    getApiKeyAndHeaders: async (model) => {
      const auth = await models.getRequestAuth(model.provider);
      const merged = { ...model.headers, ...auth?.headers };
      const headers = Object.keys(merged).length > 0 ? merged : undefined;
      return {
        ok: true,
        ...(auth?.apiKey !== undefined ? { apiKey: auth.apiKey } : {}),
        ...(headers ? { headers } : {}),
        ...(auth?.baseUrl ? { baseUrl: auth.baseUrl } : {}),
      };
    },
    getProviderAuthStatus: (provider) => ({ configured: models.getApiKey(provider) !== undefined }),
    getApiKeyForProvider: async (provider) => models.getRequestKey(provider),
    getProviderAuth: async (provider) => {
      const auth = await models.getRequestAuth(provider);
      return auth === undefined || Object.keys(auth).length === 0 ? undefined : { auth };
    },
    isUsingOAuth: () => false,
    getError: () => undefined,
    getProviderDisplayName: (provider) => provider,
    stream: (model, context, options) => {
      const pi = piAiNow();
      return relayStream(pi, model, async () => {
        const request = await prepare(model, context, options);
        return pi.stream(request.model, context, { ...request.options });
      });
    },
    streamSimple,
    complete: (model, context, options) => streamSimple(model, context, options).result(),
    registerProvider: (nameOrProvider, config) => host.registerProvider(nameOrProvider, config),
    unregisterProvider: (name) => host.unregisterProvider(name),
    registerVirtualModel: (model) => host.registerVirtualModel(model),
    unregisterVirtualModel: (provider, id) => host.unregisterVirtualModel(provider, id),
  };
}
