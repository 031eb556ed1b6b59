/**
 * pi's `<agent dir>/models.json`: custom providers and their models,
 * `{ "providers": { "<name>": { baseUrl, api, apiKey, headers, compat, models: [{ id, … }], modelOverrides } } }`.
 * Each provider with models joins the catalogue as an extension provider would (a model with a
 * built-in's id replaces it, others are added). What an entry says about a built-in provider
 * (`baseUrl`, `headers`, `compat`, `apiKey`, `modelOverrides`) adjusts its built-in models, with
 * pi's merge rules: see `adjustBuiltIn` and `providerKey`.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Api, Model } from "@earendil-works/pi-ai";
import type { PromptCache, ProviderConfig, ProviderModelConfig } from "../models/extension-providers.js";
import { resolveConfigTemplate } from "./config-value.js";

/** A per-model override of a built-in model (pi's `modelOverrides` fields). */
interface ModelOverride {
  name?: string;
  reasoning?: boolean;
  input?: ("text" | "image")[];
  cost?: Partial<Record<"input" | "output" | "cacheRead" | "cacheWrite", number>>;
  contextWindow?: number;
  maxTokens?: number;
  headers?: Record<string, string>;
  compat?: Record<string, unknown>;
  promptCache?: PromptCache;
}

interface ProviderOverride {
  baseUrl?: string;
  headers?: Record<string, string>;
  compat?: Record<string, unknown>;
  apiKey?: string;
  models: Map<string, ModelOverride>;
}

export interface ModelsFile {
  providers: { name: string; config: ProviderConfig }[];
  /** What the file says about each provider it names, for built-in models. */
  overrides: Map<string, ProviderOverride>;
  warnings: string[];
}

const mergeCompat = (base: unknown, over: Record<string, unknown> | undefined): Record<string, unknown> | undefined =>
  over === undefined ? (isObject(base) ? base : undefined) : { ...(isObject(base) ? base : {}), ...over };

/**
 * A built-in model as pi's registry adjusts it: the provider's `baseUrl` and `compat`, its headers
 * (provider's, then the model override's, over the model's own), then the per-model override.
 */
export function adjustBuiltIn(file: ModelsFile, model: Model<Api>): Model<Api> {
  const o = file.overrides.get(model.provider);
  if (!o) return model;
  const m = o.models.get(model.id);
  const out: Model<Api> = { ...model };
  if (o.baseUrl !== undefined) out.baseUrl = o.baseUrl;
  const compat = mergeCompat(mergeCompat(model.compat, o.compat), m?.compat);
  if (compat !== undefined) (out as { compat?: unknown }).compat = compat;
  if (o.headers || m?.headers) out.headers = { ...model.headers, ...o.headers, ...m?.headers };
  if (m) {
    if (m.name !== undefined) out.name = m.name;
    if (m.reasoning !== undefined) out.reasoning = m.reasoning;
    if (m.input !== undefined) out.input = m.input;
    if (m.contextWindow !== undefined) out.contextWindow = m.contextWindow;
    if (m.maxTokens !== undefined) out.maxTokens = m.maxTokens;
    if (m.cost) out.cost = { ...model.cost, ...m.cost };
    if (m.promptCache) out.promptCache = { ...model.promptCache, ...m.promptCache };
  }
  return out;
}

/**
 * A built-in image or classifier model as pi 1.6's registry adjusts it: models.json's `models` and
 * `modelOverrides` are for chat models only, but the provider's `baseUrl` moves these too, and a
 * classifier takes the provider's `compat` over its own (how a System One service takes images).
 */
export function adjustBuiltInTyped<M extends { provider: string; type: string; baseUrl: string; compat?: unknown }>(file: ModelsFile, model: M): M {
  const o = file.overrides.get(model.provider);
  if (!o || (o.baseUrl === undefined && (o.compat === undefined || model.type !== "classifier"))) return model;
  const out: M = { ...model };
  if (o.baseUrl !== undefined) out.baseUrl = o.baseUrl;
  if (o.compat !== undefined && model.type === "classifier") out.compat = { ...(isObject(model.compat) ? model.compat : {}), ...o.compat };
  return out;
}

/** The headers models.json gives a provider (resolved), which pi 1.6 adds to each of its requests' auth. */
export function providerHeaders(file: ModelsFile, provider: string): Record<string, string> | undefined {
  return file.overrides.get(provider)?.headers;
}

/**
 * The key models.json gives a provider, read as pi 1.6 reads it (`$VAR`/`${VAR}`, `!command`, else
 * the text itself; undefined while a variable it names is unset). pi uses it after auth.json and
 * before the environment.
 */
export function providerKey(file: ModelsFile, provider: string): string | undefined {
  const raw = file.overrides.get(provider)?.apiKey;
  return raw === undefined ? undefined : resolveConfigTemplate(raw);
}

function modelOverride(raw: Record<string, unknown>): ModelOverride {
  const out: ModelOverride = {};
  if (typeof raw["name"] === "string") out.name = raw["name"];
  if (typeof raw["reasoning"] === "boolean") out.reasoning = raw["reasoning"];
  if (Array.isArray(raw["input"])) out.input = raw["input"].filter((i): i is "text" | "image" => i === "text" || i === "image");
  const contextWindow = num(raw["contextWindow"]);
  if (contextWindow !== undefined) out.contextWindow = contextWindow;
  const maxTokens = num(raw["maxTokens"]);
  if (maxTokens !== undefined) out.maxTokens = maxTokens;
  if (isObject(raw["cost"])) {
    const cost: ModelOverride["cost"] = {};
    for (const k of ["input", "output", "cacheRead", "cacheWrite"] as const) {
      const v = num(raw["cost"][k]);
      if (v !== undefined) cost[k] = v;
    }
    out.cost = cost;
  }
  const headers = stringRecord(raw["headers"]);
  if (headers) out.headers = headers;
  if (isObject(raw["compat"])) out.compat = raw["compat"];
  const cache = promptCache(raw["promptCache"]);
  if (cache) out.promptCache = cache;
  return out;
}

/** `promptCache`: seconds a provider keeps a prompt cache entry, per retention tier (`short`, `long`). */
function promptCache(v: unknown): PromptCache | undefined {
  if (!isObject(v)) return undefined;
  const out: PromptCache = {};
  for (const tier of ["short", "long"] as const) {
    const seconds = num(v[tier]);
    if (seconds !== undefined && seconds > 0) out[tier] = seconds;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function stringRecord(v: unknown): Record<string, string> | undefined {
  if (!isObject(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(v)) {
    if (typeof value !== "string") continue;
    // Read as the apiKey is; a header whose variable is unset is left out rather than sent as written.
    const resolved = resolveConfigTemplate(value);
    if (resolved !== undefined) out[k] = resolved;
  }
  return out;
}

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function modelConfig(m: Record<string, unknown>): ProviderModelConfig {
  const input = Array.isArray(m["input"]) ? m["input"].filter((i): i is "text" | "image" => i === "text" || i === "image") : undefined;
  const cost = isObject(m["cost"]) ? m["cost"] : undefined;
  const headers = stringRecord(m["headers"]);
  const out: ProviderModelConfig = { id: String(m["id"]) };
  if (typeof m["name"] === "string") out.name = m["name"];
  if (typeof m["api"] === "string") out.api = m["api"];
  if (typeof m["baseUrl"] === "string") out.baseUrl = m["baseUrl"];
  if (typeof m["reasoning"] === "boolean") out.reasoning = m["reasoning"];
  if (input && input.length > 0) out.input = input;
  const contextWindow = num(m["contextWindow"]);
  if (contextWindow !== undefined) out.contextWindow = contextWindow;
  const maxTokens = num(m["maxTokens"]);
  if (maxTokens !== undefined) out.maxTokens = maxTokens;
  if (cost)
    out.cost = {
      input: num(cost["input"]) ?? 0,
      output: num(cost["output"]) ?? 0,
      cacheRead: num(cost["cacheRead"]) ?? 0,
      cacheWrite: num(cost["cacheWrite"]) ?? 0,
    };
  if (headers) out.headers = headers;
  if (isObject(m["compat"])) out.compat = m["compat"];
  const cache = promptCache(m["promptCache"]);
  if (cache) out.promptCache = cache;
  return out;
}

export function loadModelsFile(agentDir: string): ModelsFile {
  const file = join(agentDir, "models.json");
  const out: ModelsFile = { providers: [], overrides: new Map(), warnings: [] };
  if (!existsSync(file)) return out;
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    out.warnings.push(`${file}: ${error instanceof Error ? error.message : String(error)}; ignored`);
    return out;
  }
  const providers = isObject(data) ? data["providers"] : undefined;
  if (!isObject(providers)) {
    out.warnings.push(`${file}: expected { "providers": { … } }; ignored`);
    return out;
  }
  for (const [name, raw] of Object.entries(providers)) {
    if (!isObject(raw)) continue;
    const models = Array.isArray(raw["models"]) ? raw["models"].filter((m): m is Record<string, unknown> => isObject(m) && typeof m["id"] === "string") : [];
    const headers = stringRecord(raw["headers"]);
    // Kept as written: read when a request needs it (providerKey, and the registration's key for custom models).
    const apiKey = typeof raw["apiKey"] === "string" ? raw["apiKey"] : undefined;
    const perModel = new Map<string, ModelOverride>();
    if (isObject(raw["modelOverrides"])) {
      for (const [id, o] of Object.entries(raw["modelOverrides"])) if (isObject(o)) perModel.set(id, modelOverride(o));
    }
    out.overrides.set(name, {
      ...(typeof raw["baseUrl"] === "string" ? { baseUrl: raw["baseUrl"] } : {}),
      ...(headers ? { headers } : {}),
      ...(isObject(raw["compat"]) ? { compat: raw["compat"] } : {}),
      ...(apiKey !== undefined ? { apiKey } : {}),
      models: perModel,
    });
    // Only adjusting a built-in provider: its models stay the built-in ones.
    if (models.length === 0) continue;
    out.providers.push({
      name,
      config: {
        ...(typeof raw["baseUrl"] === "string" ? { baseUrl: raw["baseUrl"] } : {}),
        ...(typeof raw["api"] === "string" ? { api: raw["api"] } : {}),
        ...(apiKey !== undefined ? { apiKey } : {}),
        ...(headers ? { headers } : {}),
        ...(isObject(raw["compat"]) ? { compat: raw["compat"] } : {}),
        models: models.map(modelConfig),
      },
    });
  }
  return out;
}
