/**
 * pi's `<agent dir>/models.json`: custom providers and their models,
 * `{ "providers": { "<name>": { baseUrl, api, apiKey, headers, models: [{ id, … }] } } }`.
 * Each provider with models joins the catalogue as an extension provider would; entries that only
 * adjust a built-in provider (no models) are not supported and are reported.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ProviderConfig, ProviderModelConfig } from "../models/extension-providers.js";
import { resolveConfigValue } from "./config-value.js";

export interface ModelsFile {
  providers: { name: string; config: ProviderConfig }[];
  warnings: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function stringRecord(v: unknown): Record<string, string> | undefined {
  if (!isObject(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(v)) if (typeof value === "string") out[k] = resolveConfigValue(value) ?? value;
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
  return out;
}

export function loadModelsFile(agentDir: string): ModelsFile {
  const file = join(agentDir, "models.json");
  const out: ModelsFile = { providers: [], warnings: [] };
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
    if (models.length === 0) {
      out.warnings.push(`${file}: provider "${name}" lists no models; parley supports custom providers with models only`);
      continue;
    }
    const headers = stringRecord(raw["headers"]);
    const apiKey = typeof raw["apiKey"] === "string" ? resolveConfigValue(raw["apiKey"]) : undefined;
    out.providers.push({
      name,
      config: {
        ...(typeof raw["baseUrl"] === "string" ? { baseUrl: raw["baseUrl"] } : {}),
        ...(typeof raw["api"] === "string" ? { api: raw["api"] } : {}),
        ...(apiKey !== undefined ? { apiKey } : {}),
        ...(headers ? { headers } : {}),
        models: models.map(modelConfig),
      },
    });
  }
  return out;
}
