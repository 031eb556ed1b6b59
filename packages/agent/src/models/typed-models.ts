/**
 * pi 1.6's non-chat models: image and classifier models, listed and called as pi 1.6's
 * ModelRegistry lists and calls them (`getModelsOfType`, `classify`, `generateImages`). The
 * models and the code that calls them are pi-ai 1.6's built-in providers; the request's auth is
 * resolved as a prompt's is (an OAuth login's whole resolved auth, else the stored or environment
 * key), and every failure is an error result, never a rejection, with pi's messages.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type {
  AssistantImages,
  ClassifierApi,
  ClassifierContext,
  ClassifierModel,
  ClassifierResult,
  ImageApi,
  ImageModel,
  ImagesContext,
  ModelsClassifierOptions,
  ModelsImagesOptions,
  ModelType,
  Provider,
} from "@earendil-works/pi-ai";
import type { RequestAuth } from "../config/oauth-tokens.js";
import type { TypedCalls, TypedModel } from "./extension-providers.js";

type ProvidersModule = typeof import("@earendil-works/pi-ai/providers/all");
type OperationsModule = typeof import("@earendil-works/pi-ai/utils/model-operations");

/** The types a registry lists besides chat models. */
export type TypedModelType = Exclude<ModelType, "chat">;
export type { TypedModel };

interface BuiltIns {
  providers: Map<string, Provider>;
  operations: OperationsModule;
  ofType: { image: readonly ImageModel<ImageApi>[]; classifier: readonly ClassifierModel<ClassifierApi>[] };
}

let builtIns: BuiltIns | undefined;

/**
 * pi-ai's built-in providers, loaded on first need. Synchronously (Node's require of an ES
 * module), because pi's registry lists models synchronously; start-up never pays for it.
 */
function loadBuiltIns(): BuiltIns {
  if (builtIns) return builtIns;
  const all = requirePiAiFile<ProvidersModule>("providers/all.js");
  const operations = requirePiAiFile<OperationsModule>("utils/model-operations.js");
  const providers = new Map(all.builtinProviders().map((p) => [p.id, p] as const));
  const ids = all.getBuiltinProviders();
  builtIns = {
    providers,
    operations,
    ofType: {
      image: ids.flatMap((id) => all.getBuiltinImageModels(id)),
      classifier: ids.flatMap((id) => all.getBuiltinClassifierModels(id)),
    },
  };
  return builtIns;
}

/**
 * A module of the installed pi-ai, by its file: pi-ai exports its modules for `import` only, so
 * `require` cannot name them; the file itself, found where Node would look, can be required.
 */
function requirePiAiFile<T>(file: string): T {
  const require = createRequire(import.meta.url);
  for (const dir of require.resolve.paths("@earendil-works/pi-ai") ?? []) {
    const path = join(dir, "@earendil-works", "pi-ai", "dist", file);
    if (existsSync(path)) return require(path) as T;
  }
  throw new Error(`@earendil-works/pi-ai's ${file} was not found next to parley`);
}

/** pi-ai's built-in models of a type, optionally of one provider. */
export function builtinModelsOfType<T extends TypedModelType>(
  type: T,
  provider?: string,
): readonly (T extends "image" ? ImageModel<ImageApi> : ClassifierModel<ClassifierApi>)[] {
  const list: readonly TypedModel[] = loadBuiltIns().ofType[type];
  const picked = provider === undefined ? list : list.filter((m) => m.provider === provider);
  return picked as readonly (T extends "image" ? ImageModel<ImageApi> : ClassifierModel<ClassifierApi>)[];
}

/** pi-ai's built-in image and classifier models of one provider. */
export function builtinTypedModels(provider: string): TypedModel[] {
  return [...builtinModelsOfType("image", provider), ...builtinModelsOfType("classifier", provider)];
}

/** What a typed call needs of parley's models. */
export interface TypedCallHost {
  /** Whether parley knows the provider at all (built-in, models.json or an extension's). */
  knowsProvider(provider: string): boolean;
  /** The provider's request auth, as a prompt resolves it. */
  getRequestAuth(provider: string): Promise<RequestAuth | undefined>;
  /** What an extension's provider of that name brings for these models (it answers before pi-ai's built-ins). */
  typedCalls(provider: string): TypedCalls | undefined;
}

/** pi's error for a request that cannot be made; its message is the result's `errorMessage`. */
class ModelCallError extends Error {}

/** Who answers a typed call: an extension's provider, else pi-ai's built-in one. */
type Answerer = Pick<Provider, "classify" | "generateImages"> | TypedCalls;

interface Prepared<M> {
  provider: Answerer;
  model: M;
}

/** As pi 1.6's request preparation: the provider, its auth (the caller's key first), a login's base URL and headers. */
async function prepare<M extends TypedModel, O extends { apiKey?: string; headers?: Record<string, string | null> }>(
  host: TypedCallHost,
  model: M,
  options: O | undefined,
): Promise<Prepared<M> & { options: O }> {
  const provider: Answerer | undefined = host.typedCalls(model.provider) ?? loadBuiltIns().providers.get(model.provider);
  if (!provider && !host.knowsProvider(model.provider)) throw new ModelCallError(`Unknown provider: ${model.provider}`);
  const auth = options?.apiKey !== undefined ? { apiKey: options.apiKey } : await host.getRequestAuth(model.provider);
  if (!auth || (auth.apiKey === undefined && auth.headers === undefined)) throw new ModelCallError(`Provider is not configured: ${model.provider}`);
  if (!provider) throw new ModelCallError("");
  const headers = auth.headers || options?.headers ? { ...auth.headers, ...options?.headers } : undefined;
  const sent = { ...options, ...(auth.apiKey !== undefined ? { apiKey: options?.apiKey ?? auth.apiKey } : {}), ...(headers ? { headers } : {}) } as O;
  return { provider, model: auth.baseUrl ? { ...model, baseUrl: auth.baseUrl } : model, options: sent };
}

/** `ctx.modelRegistry.classify`: never rejects; a failure is a result with `stopReason: "error"`. */
export async function classifyWith(
  host: TypedCallHost,
  model: ClassifierModel<ClassifierApi>,
  context: ClassifierContext,
  options?: ModelsClassifierOptions,
): Promise<ClassifierResult> {
  let operations: OperationsModule | undefined;
  try {
    const ops: OperationsModule = loadBuiltIns().operations;
    operations = ops;
    ops.assertClassifierModel(model);
    ops.assertClassifierInputSupported(model, context);
    const prepared = await prepare(host, model, options);
    const own = "classifiers" in prepared.provider ? prepared.provider.classifiers : undefined;
    const implementation = own?.[model.api];
    if (implementation) return await implementation.classify(prepared.model, context, prepared.options);
    if (!prepared.provider.classify) {
      if (own) throw new ModelCallError(`Provider ${model.provider} has no classifier implementation for "${model.api}"`);
      throw new ModelCallError(`Provider ${model.provider} does not support classification`);
    }
    return await prepared.provider.classify(prepared.model, context, prepared.options);
  } catch (error) {
    const problem = unsupported(error, `Provider ${model.provider} does not support classification`);
    if (operations) return operations.classifierErrorResult(model, problem, options?.signal?.aborted);
    return {
      api: model.api,
      provider: model.provider,
      model: model.id,
      answers: {},
      stopReason: "error",
      errorMessage: messageOf(problem),
      timestamp: Date.now(),
    };
  }
}

/** `ctx.modelRegistry.generateImages`: never rejects; a failure is a result with `stopReason: "error"`. */
export async function generateImagesWith(
  host: TypedCallHost,
  model: ImageModel<ImageApi>,
  context: ImagesContext,
  options?: ModelsImagesOptions,
): Promise<AssistantImages> {
  let operations: OperationsModule | undefined;
  try {
    const ops: OperationsModule = loadBuiltIns().operations;
    operations = ops;
    ops.assertImageModel(model);
    const prepared = await prepare(host, model, options);
    const own = "images" in prepared.provider ? prepared.provider.images : undefined;
    const implementation = own?.[model.api];
    if (implementation) return await implementation.generateImages(prepared.model, context, prepared.options);
    if (!prepared.provider.generateImages) {
      if (own) throw new ModelCallError(`Provider ${model.provider} has no image implementation for "${model.api}"`);
      throw new ModelCallError(`Provider ${model.provider} does not support image generation`);
    }
    return await prepared.provider.generateImages(prepared.model, context, prepared.options);
  } catch (error) {
    const problem = unsupported(error, `Provider ${model.provider} does not support image generation`);
    if (operations) return operations.imageErrorResult(model, problem, options?.signal?.aborted);
    return {
      api: model.api,
      provider: model.provider,
      model: model.id,
      output: [],
      stopReason: "error",
      errorMessage: messageOf(problem),
      timestamp: Date.now(),
    };
  }
}

/** A provider parley knows but pi-ai has no built-in code for supports neither call (an empty ModelCallError marks it). */
function unsupported(error: unknown, message: string): unknown {
  return error instanceof ModelCallError && error.message === "" ? new ModelCallError(message) : error;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
