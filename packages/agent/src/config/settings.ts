/**
 * pi's settings: `<agent dir>/settings.json`, overridden by the project's `.pi/settings.json`
 * (nested objects merge at every depth, as in the newest pi). Only the keys that have an effect in pi's RPC
 * mode are read (terminal-UI keys are not); a value of the wrong type is ignored with a warning,
 * and parley never writes these files.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expandTilde, PROJECT_DIR_NAME } from "./agent-dir.js";
import type { PackageEntry, PackageFilter } from "../resources/package-sources.js";
import type { ResourceLists } from "../resources/resource-resolver.js";
import { mergeDefaultTools } from "../agent/tool-selection.js";

export type QueueModeSetting = "all" | "one-at-a-time";
/** pi-ai's preferred transport for providers that have several (the Codex provider's WebSocket). */
export type TransportSetting = "sse" | "websocket" | "websocket-cached" | "auto";
/** Thinking budgets (tokens) per level, for providers that take a budget rather than an effort. */
export interface ThinkingBudgetsSetting {
  minimal?: number;
  low?: number;
  medium?: number;
  high?: number;
}
/** `retry.provider`: the provider SDK's own request timeout and retries. */
export interface ProviderRetrySetting {
  timeoutMs?: number;
  maxRetries?: number;
  maxRetryDelayMs?: number;
}

export interface Settings {
  defaultProvider?: string;
  defaultModel?: string;
  defaultThinkingLevel?: string;
  /** The newest pi's `defaultTools`, the user's and the project's merged (a list of only `+name`/`-name` entries adds to the user's). */
  defaultTools?: string[];
  /** The newest pi's per-model default levels, keyed "provider/modelId". */
  modelThinkingLevels?: Record<string, string>;
  steeringMode?: QueueModeSetting;
  followUpMode?: QueueModeSetting;
  compaction?: {
    enabled?: boolean;
    reserveTokens?: number;
    keepRecentTokens?: number;
    /** Token settings for one model, keyed by its exact `provider/modelId`, over the ordinary ones. */
    modelOverrides?: Record<string, { reserveTokens?: number; keepRecentTokens?: number }>;
  };
  retry?: { enabled?: boolean; maxRetries?: number; baseDelayMs?: number; maxAgentDelayMs?: number; provider?: ProviderRetrySetting };
  thinkingBudgets?: ThinkingBudgetsSetting;
  transport?: TransportSetting;
  /** HTTP idle timeout (ms; 0 disables it): the provider request's timeout unless `retry.provider.timeoutMs` is set. */
  httpIdleTimeoutMs?: number;
  /** Prompt-cache warming (global file only, as in pi): "idle" (pi's default) also warms between runs, "streaming" only during them. */
  cacheWarming?: CacheWarmingMode;
  /** Global file only, as in pi: becomes HTTP_PROXY / HTTPS_PROXY unless those are set. */
  httpProxy?: string;
  images?: { autoResize?: boolean; blockImages?: boolean };
  branchSummary?: { reserveTokens?: number; skipPrompt?: boolean };
  shellPath?: string;
  shellCommandPrefix?: string;
  sessionDir?: string;
  enabledModels?: string[];
  /** "always" | "never" | "ask": what a project with `.pi/` resources gets when nothing else decides (global file only). */
  defaultProjectTrust?: string;
  /** false: `/skill:name` is not offered in pi's terminal UI (RPC mode lists and expands skills anyway, as pi does). */
  enableSkillCommands?: boolean;
  /** The package manager whose global folder holds the user's packages (`["pnpm"]`, `["bun"]`); npm when absent. */
  npmCommand?: string[];
}

export interface LoadedSettings {
  settings: Settings;
  /**
   * Each file's `extensions`, `skills`, `prompts` and `packages`, as written (they do not merge
   * like other keys: resources/resource-resolver.ts reads both). `project` is undefined when the
   * project's file was not read (an untrusted project).
   */
  resources: { user: ResourceLists; project: ResourceLists | undefined };
  warnings: string[];
  /** The files read, global first. */
  files: string[];
  /** Both files merged as written (project over global, objects at every depth): pi.getSettings(). */
  merged: Record<string, unknown>;
}

type Raw = Record<string, unknown>;

function readJson(file: string, warnings: string[]): Raw | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const value: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Raw;
    warnings.push(`${file}: settings must be a JSON object; ignored`);
  } catch (error) {
    warnings.push(`${file}: ${error instanceof Error ? error.message : String(error)}; ignored`);
  }
  return undefined;
}

const isObject = (v: unknown): v is Raw => v !== null && typeof v === "object" && !Array.isArray(v);

/** pi's merge: the project's value wins; objects merge their keys at every depth (the newest pi; 0.73.1 merged one level). */
function merge(base: Raw, override: Raw): Raw {
  const out: Raw = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue;
    const prior = out[key];
    out[key] = isObject(value) && isObject(prior) ? merge(prior, value) : value;
  }
  return out;
}

const isString = (v: unknown): v is string => typeof v === "string";
const isBool = (v: unknown): v is boolean => typeof v === "boolean";
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;
const isQueueMode = (v: unknown): v is QueueModeSetting => v === "all" || v === "one-at-a-time";
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
const isStringRecord = (v: unknown): v is Record<string, string> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.values(v).every(isString);
export type CacheWarmingMode = "off" | "streaming" | "idle";
const isCacheWarming = (v: unknown): v is CacheWarmingMode => v === "off" || v === "streaming" || v === "idle";
const isTransport = (v: unknown): v is TransportSetting => v === "sse" || v === "websocket" || v === "websocket-cached" || v === "auto";

/** pi's timeout values: a count of ms, the same as a numeric string, or "disabled" (0). */
function timeoutMs(value: unknown): number | undefined {
  if (typeof value === "string") {
    const text = value.trim();
    if (text.toLowerCase() === "disabled") return 0;
    return text === "" ? undefined : timeoutMs(Number(text));
  }
  return isCount(value) ? Math.floor(value) : undefined;
}
const isTimeout = (v: unknown): v is number | string => timeoutMs(v) !== undefined;

/** pi's migrations of older keys, applied to each file before the merge (as pi applies them when it reads a file). */
function migrate(raw: Raw): Raw {
  const out: Raw = migrateSkills(raw);
  if ("queueMode" in out && !("steeringMode" in out)) out["steeringMode"] = out["queueMode"];
  if (!("transport" in out) && typeof out["websockets"] === "boolean") out["transport"] = out["websockets"] ? "websocket" : "sse";
  const retry = out["retry"];
  if (retry !== null && typeof retry === "object" && !Array.isArray(retry) && typeof (retry as Raw)["maxDelayMs"] === "number") {
    const { maxDelayMs, ...rest } = retry as Raw;
    const provider = rest["provider"] !== null && typeof rest["provider"] === "object" ? (rest["provider"] as Raw) : {};
    out["retry"] = { ...rest, provider: { ...provider, maxRetryDelayMs: provider["maxRetryDelayMs"] ?? maxDelayMs } };
  }
  return out;
}

/** Copies `raw[key]` when `check` accepts it; a present value it refuses is reported. */
function pick<T>(raw: Raw, key: string, check: (v: unknown) => v is T, warnings: string[], where: string): T | undefined {
  const value = raw[key];
  if (value === undefined) return undefined;
  if (check(value)) return value;
  warnings.push(`settings: "${where}${key}" has an unexpected value (${JSON.stringify(value)}); ignored`);
  return undefined;
}

function section<K extends string>(
  raw: Raw,
  key: string,
  fields: Record<K, (v: unknown) => boolean>,
  warnings: string[],
  where = "",
): Partial<Record<K, unknown>> | undefined {
  const value = raw[key];
  if (value === undefined) return undefined;
  if (!isObject(value)) {
    warnings.push(`settings: "${where}${key}" must be an object; ignored`);
    return undefined;
  }
  const out: Partial<Record<K, unknown>> = {};
  for (const field of Object.keys(fields) as K[]) {
    const v = pick(value, field, fields[field] as (v: unknown) => v is unknown, warnings, `${where}${key}.`);
    if (v !== undefined) out[field] = v;
  }
  return out;
}

/** pi's older `skills: { enableSkillCommands, customDirectories }` form, read as pi migrates it. */
function migrateSkills(data: Raw): Raw {
  const skills = data["skills"];
  if (skills === null || typeof skills !== "object" || Array.isArray(skills)) return data;
  const old = skills as Raw;
  const out: Raw = { ...data };
  if (old["enableSkillCommands"] !== undefined && out["enableSkillCommands"] === undefined) out["enableSkillCommands"] = old["enableSkillCommands"];
  if (Array.isArray(old["customDirectories"]) && old["customDirectories"].length > 0) out["skills"] = old["customDirectories"];
  else delete out["skills"];
  return out;
}

function filterList(raw: Raw, key: string, where: string, warnings: string[]): string[] | undefined {
  const value = raw[key];
  if (value === undefined) return undefined;
  if (isStrings(value)) return value;
  warnings.push(`${where}"${key}" must be an array of strings; ignored`);
  return undefined;
}

/** `packages`: sources, or `{ source, extensions?, skills?, prompts?, themes?, autoload? }`. */
function packageEntries(value: unknown, file: string, warnings: string[]): PackageEntry[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    warnings.push(`${file}: "packages" must be an array; ignored`);
    return undefined;
  }
  const entries: PackageEntry[] = [];
  for (const item of value) {
    if (typeof item === "string") {
      entries.push({ source: item });
      continue;
    }
    if (item !== null && typeof item === "object" && !Array.isArray(item) && typeof (item as Raw)["source"] === "string") {
      const object = item as Raw;
      const filter: PackageFilter = {};
      for (const key of ["extensions", "skills", "prompts"] as const) {
        const list = filterList(object, key, `${file}: "packages" entry ${String(object["source"])}: `, warnings);
        if (list !== undefined) filter[key] = list;
      }
      if (typeof object["autoload"] === "boolean") filter.autoload = object["autoload"];
      entries.push({ source: String(object["source"]), filter });
      continue;
    }
    warnings.push(`${file}: a "packages" entry must be a source or an object with a "source"; ignored (${JSON.stringify(item)})`);
  }
  return entries;
}

function resourceLists(data: Raw, file: string, warnings: string[]): ResourceLists {
  const lists: ResourceLists = {};
  for (const key of ["extensions", "skills", "prompts"] as const) {
    const list = filterList(data, key, `${file}: `, warnings);
    if (list !== undefined) lists[key] = list;
  }
  const packages = packageEntries(data["packages"], file, warnings);
  if (packages !== undefined) lists.packages = packages;
  return lists;
}

export function loadSettings(options: { cwd: string; agentDir: string; home?: string; projectTrusted?: boolean }): LoadedSettings {
  const warnings: string[] = [];
  const files: string[] = [];
  let raw: Raw = {};
  const resources: LoadedSettings["resources"] = { user: {}, project: undefined };
  let globalRaw: Raw = {};
  let defaultTools: string[] | undefined;
  const places = [
    { file: join(options.agentDir, "settings.json"), scope: "user" as const },
    ...(options.projectTrusted === false ? [] : [{ file: join(options.cwd, PROJECT_DIR_NAME, "settings.json"), scope: "project" as const }]),
  ];
  if (options.projectTrusted !== false) resources.project = {};
  for (const { file, scope } of places) {
    const read = readJson(file, warnings);
    if (read === undefined) continue;
    const data = migrate(read);
    files.push(file);
    if (scope === "user") globalRaw = data;
    raw = merge(raw, data);
    defaultTools = mergeDefaultTools(defaultTools, pick(data, "defaultTools", isStrings, warnings, ""));
    resources[scope] = resourceLists(data, file, warnings);
  }
  const settings: Settings = {};
  const set = <K extends keyof Settings>(key: K, value: Settings[K] | undefined): void => {
    if (value !== undefined) settings[key] = value;
  };
  set("defaultProvider", pick(raw, "defaultProvider", isString, warnings, ""));
  set("defaultModel", pick(raw, "defaultModel", isString, warnings, ""));
  set("defaultThinkingLevel", pick(raw, "defaultThinkingLevel", isString, warnings, ""));
  set("modelThinkingLevels", pick(raw, "modelThinkingLevels", isStringRecord, warnings, ""));
  set("defaultTools", defaultTools);
  set("steeringMode", pick(raw, "steeringMode", isQueueMode, warnings, ""));
  set("followUpMode", pick(raw, "followUpMode", isQueueMode, warnings, ""));
  set("shellPath", pick(raw, "shellPath", isString, warnings, ""));
  set("shellCommandPrefix", pick(raw, "shellCommandPrefix", isString, warnings, ""));
  const sessionDir = pick(raw, "sessionDir", isString, warnings, "");
  if (sessionDir) settings.sessionDir = expandTilde(sessionDir, options.home);
  set("enabledModels", pick(raw, "enabledModels", isStrings, warnings, ""));
  set("defaultProjectTrust", pick(raw, "defaultProjectTrust", isString, warnings, ""));
  set("enableSkillCommands", pick(raw, "enableSkillCommands", isBool, warnings, ""));
  const npmCommand = pick(raw, "npmCommand", isStrings, warnings, "");
  if (npmCommand && npmCommand.length > 0) settings.npmCommand = npmCommand;
  const compaction = section(raw, "compaction", { enabled: isBool, reserveTokens: isCount, keepRecentTokens: isCount, modelOverrides: isObject }, warnings);
  if (compaction) {
    const { modelOverrides, ...ordinary } = compaction;
    settings.compaction = ordinary as Settings["compaction"];
    const overrides: Record<string, { reserveTokens?: number; keepRecentTokens?: number }> = {};
    for (const model of Object.keys(isObject(modelOverrides) ? modelOverrides : {})) {
      const own = section(modelOverrides as Raw, model, { reserveTokens: isCount, keepRecentTokens: isCount }, warnings, "compaction.modelOverrides.");
      if (own) overrides[model] = own as { reserveTokens?: number; keepRecentTokens?: number };
    }
    if (Object.keys(overrides).length > 0) settings.compaction = { ...settings.compaction, modelOverrides: overrides };
  }
  const retry = section(raw, "retry", { enabled: isBool, maxRetries: isCount, baseDelayMs: isCount, maxAgentDelayMs: isCount, provider: isObject }, warnings);
  if (retry) {
    const { provider, ...agentLevel } = retry;
    settings.retry = agentLevel as Settings["retry"];
    const providerRetry =
      provider !== undefined
        ? section({ provider }, "provider", { timeoutMs: isCount, maxRetries: isCount, maxRetryDelayMs: isCount }, warnings, "retry.")
        : undefined;
    if (providerRetry) settings.retry = { ...settings.retry, provider: providerRetry as ProviderRetrySetting };
  }
  const budgets = section(raw, "thinkingBudgets", { minimal: isCount, low: isCount, medium: isCount, high: isCount }, warnings);
  if (budgets) settings.thinkingBudgets = budgets as ThinkingBudgetsSetting;
  set("transport", pick(raw, "transport", isTransport, warnings, ""));
  set("httpIdleTimeoutMs", timeoutMs(pick(raw, "httpIdleTimeoutMs", isTimeout, warnings, "")));
  // The project's file cannot point the user's traffic at a proxy (pi reads this key globally only).
  const proxy = pick(globalRaw, "httpProxy", isString, warnings, "")?.trim();
  if (proxy) settings.httpProxy = proxy;
  // Global only, as pi reads it: each warming request costs the user money.
  set("cacheWarming", pick(globalRaw, "cacheWarming", isCacheWarming, warnings, ""));
  const images = section(raw, "images", { autoResize: isBool, blockImages: isBool }, warnings);
  if (images) settings.images = images as Settings["images"];
  const branchSummary = section(raw, "branchSummary", { reserveTokens: isCount, skipPrompt: isBool }, warnings);
  if (branchSummary) settings.branchSummary = branchSummary as Settings["branchSummary"];
  return { settings, resources, warnings, files, merged: raw };
}
