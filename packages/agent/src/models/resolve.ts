/**
 * Which model parley starts with: the lookup order, from the command line, settings and the
 * environment down to the offline demo model.
 *
 * Precedence for the initial model:
 *   1. `--model-script FILE`            → parley/script (other model flags are ignored, with a warning)
 *   2. `--provider` and/or `--model`     → a model from pi-ai's built-in registry (or parley/offline)
 *   3. an API key in the environment    → that provider's default model (first provider in pi's order)
 *   4. nothing                          → parley/offline, `isOffline: true`, `offlineNotice` set
 *
 * `--model PATTERN` follows pi's rules (model-patterns.ts) over the catalogue (catalog.ts). Differences
 * from pi 0.73.1, on purpose:
 *   - an unknown model fails (with close matches listed) instead of becoming a custom id on the
 *     provider, so a typo is reported at start-up rather than as an HTTP error on the first prompt;
 *   - `--provider X` alone selects X's default model (pi ignores it);
 *   - when a fuzzy `--model` pattern matches models of several providers, providers with
 *     credentials are preferred;
 *   - step 3 counts only real API-key variables (api-keys.ts): an AWS profile or a GitHub token in
 *     the environment does not silently replace the offline model. Such ambient credentials still
 *     count for `availableModels()` and `getApiKey()`, as in pi.
 * Thinking level: `--thinking` beats the pattern suffix, which beats pi's default "medium"; the
 * result is clamped to what the model supports (pi-ai's `clampThinkingLevel`), "off" for
 * non-reasoning models, with a warning when an explicitly requested level had to change.
 * `--api-key` applies to the provider of the model chosen by `--provider`/`--model` (pi rejects it
 * without one, and so do we); other providers read their keys from the environment.
 * `PARLEY_STREAM_DELAY_MS` (environment) slows the local models' deltas, for demos and tests.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Api, ClassifierApi, ClassifierModel, ImageApi, ImageModel, KnownProvider, Model } from "@earendil-works/pi-ai";
import type { RequestAuth } from "../config/oauth-tokens.js";
import { KeyLookup } from "./api-keys.js";
import { Catalog, DEFAULT_MODEL_PER_PROVIDER, type ExtraModels, ModelResolutionError } from "./catalog.js";
import { type ModelMatch, scopedMatch, type ThinkingLevel } from "./model-patterns.js";
import { createOfflineModel, OFFLINE_API } from "./offline-model.js";
import { loadPiAiCatalog, loadPiAiForResolution, loadPiAiNow, piAiCatalogLoaded } from "./pi-ai.js";
import { piAiFile } from "./pi-ai-files.js";
import { type CatalogRequest, type PersonalSource, RemoteCatalog } from "./remote-catalog.js";
import { createScriptModel, loadModelScript, type ModelScript, PARLEY_PROVIDER } from "./script-model.js";

/** When pi-ai's built-in model data was generated (its data manifest's `generatedAt`), or undefined. */
function builtInDataGeneratedAt(manifestUrl: string): number | undefined {
  try {
    const data: unknown = JSON.parse(readFileSync(fileURLToPath(manifestUrl), "utf8"));
    const at = typeof data === "object" && data !== null && "generatedAt" in data ? Date.parse(String(data.generatedAt)) : Number.NaN;
    return Number.isNaN(at) ? undefined : at;
  } catch {
    return undefined;
  }
}

/** pi's default thinking level, before clamping to the model. */
export const DEFAULT_THINKING_LEVEL: ThinkingLevel = "medium";

export interface ModelCliOptions {
  provider?: string;
  model?: string;
  apiKey?: string;
  thinking?: ThinkingLevel;
  modelScript?: string;
  /** Load the built-in model catalogue even if the initial model does not need it. */
  loadCatalog?: boolean;
}

export interface ResolveEnvironment {
  /** Environment to read keys from; defaults to process.env (read live on every lookup). */
  env?: Record<string, string | undefined>;
  /** Working directory: the offline model's files; relative `--model-script` paths too unless `launchCwd` is given. Default process.cwd(). */
  cwd?: string;
  /** The folder parley was started in, where a relative `--model-script` path starts when the run works elsewhere (a session's folder). */
  launchCwd?: string;
  /** Keys stored in pi's auth.json; they come before the environment's, as in pi. */
  authKey?: (provider: string) => string | undefined;
  /** An auth.json OAuth login's key for a request, refreshed first when due; undefined when the provider has none. */
  freshAuth?: (provider: string) => Promise<RequestAuth | undefined> | undefined;
  /** A key models.json gives a provider: after auth.json and an extension's registration, before the environment, as in pi 1.6. */
  fallbackKey?: (provider: string) => string | undefined;
  /** Adjusts each built-in image and classifier model (models.json's provider `baseUrl` and, for classifiers, `compat`). */
  adjustTyped?: <M extends TypedModel>(model: M) => M;
  /** pi-ai's built-in image and classifier models of a provider (OpenRouter's personalised catalogue starts from them). */
  typedBuiltIns?: (provider: string) => readonly TypedModel[];
  /** Headers models.json gives a provider, added to a typed call's auth as pi 1.6 adds them to every request's. */
  configuredHeaders?: (provider: string) => Record<string, string> | undefined;
  /** Adjusts each built-in model (models.json overrides, an OAuth login's base URL), as pi's registry does. */
  adjustBuiltIn?: (model: Model<Api>) => Model<Api>;
  /** pi's `models-store.json` (the live catalogue's saved part, remote-catalog.ts); none, no overlay. */
  modelsStore?: string;
}

/** An image or classifier model (pi 1.6's non-chat models). */
type TypedModel = ImageModel<ImageApi> | ClassifierModel<ClassifierApi>;

/** What decides the model a session starts with (pi's order, see chooseStartup). */
export interface StartupModelRequest {
  provider?: string | undefined;
  model?: string | undefined;
  apiKey?: string | undefined;
  thinking?: ThinkingLevel | undefined;
  /** --models, or settings.enabledModels: the first one that resolves is the default. */
  scoped?: string[] | undefined;
  defaultProvider?: string | undefined;
  defaultModel?: string | undefined;
  defaultThinkingLevel?: ThinkingLevel | undefined;
}

export interface StartupModel {
  model: Model<Api>;
  thinkingLevel: ThinkingLevel;
  /** "cli": chosen on the command line (a resumed session's model does not replace it). */
  source: ModelSource;
  /** The level came from the command line (`--thinking`, or a `--model` pattern's `:level`): every session of the process takes it. */
  thinkingFromCli: boolean;
  warnings: string[];
  offlineNotice?: string;
}

export type ModelSource = "script" | "cli" | "scoped" | "settings" | "env" | "offline";

export interface ModelResolution {
  /** The initial model. */
  readonly model: Model<Api>;
  /** The initial thinking level, already clamped to `model`. */
  readonly thinkingLevel: ThinkingLevel;
  /** The initial model is parley's offline demo model. */
  readonly isOffline: boolean;
  readonly source: ModelSource;
  /** The level came from the command line (`--thinking`, or a `--model` pattern's `:level`). */
  readonly thinkingFromCli: boolean;
  /** Things worth one line on stderr each (ignored flags, clamped levels, missing keys). */
  readonly warnings: readonly string[];
  /** Set when parley fell back to the offline model: say it once on stderr. */
  readonly offlineNotice?: string;
  /** The loaded `--model-script`, if any (its cursor shows how many turns were used). */
  readonly script?: ModelScript;
  /** parley's offline model for this cwd (always available). */
  readonly offlineModel: Model<Api>;
  /**
   * Whether the built-in model catalogue is loaded. Until it is, only parley's local models are
   * known: availableModels, matchModel and findModel (for other providers) throw; await
   * loadCatalog() first. Resolution loads it when the initial model comes from it.
   */
  readonly catalogReady: boolean;
  loadCatalog(): Promise<void>;
  /** Loads the catalogue at once where that can be done synchronously (the CLI bundle); whether it is loaded. */
  catalogNow(): boolean;
  /** Every model known, with credentials or not (pi's `modelRegistry.getAll()`; extension models included); needs the catalogue. */
  allModels(): Model<Api>[];
  /** The models known without the catalogue: parley's own, then extension providers'. */
  modelsWithoutCatalog(): Model<Api>[];

  /** Models usable now: the script model (if loaded), the offline model, then every built-in model with a key. */
  availableModels(): Model<Api>[];
  /** Exact lookup by provider and id (for set_model and session restore). */
  findModel(provider: string, modelId: string): Model<Api> | undefined;
  /** Resolve a CLI-style pattern (`--provider`/`--model` rules). Throws ModelResolutionError. */
  matchModel(pattern: string, provider?: string): ModelMatch;
  /** Thinking levels the model supports, in cycling order (["off"] for non-reasoning models). */
  thinkingLevelsFor(model: Model<Api>): ThinkingLevel[];
  /** The nearest supported level (pi-ai's clamping rules). */
  clampThinkingLevel(model: Model<Api>, level: ThinkingLevel): ThinkingLevel;
  /** API key for a provider: `--api-key` for the CLI-selected provider, else the environment. */
  getApiKey(provider: string): string | undefined;
  /** The key a request sends: as getApiKey, with an OAuth login refreshed and saved first when it is about to expire. */
  getRequestKey(provider: string): Promise<string | undefined>;
  /** A request's whole auth (pi-ai 1.6's ModelAuth as a request takes it): the key, and an OAuth login's headers and base URL. */
  getRequestAuth(provider: string): Promise<RequestAuth | undefined>;
  /** Whether a request with this model can authenticate (always true for parley's own models). */
  hasAuth(model: Model<Api>): boolean;
  /** Models registered later (extension providers, models.json) join matching and defaults. */
  setExtraModels(extra: ExtraModels): void;
  /** A built-in image or classifier model with models.json's adjustments. */
  adjustTypedModel<M extends TypedModel>(model: M): M;
  /** The headers models.json gives a provider, for its typed calls. */
  configuredHeaders(provider: string): Record<string, string> | undefined;
  /**
   * The live catalogue refreshed as pi 1.6 does it in RPC mode (remote-catalog.ts): the saved
   * catalogues read under pi's lock (the file made if missing), the providers with credentials
   * asked of the server. Loads the catalogue only when a built-in provider has credentials.
   * Resolves to each failed provider's error; never rejects.
   */
  refreshCatalog(request: CatalogRequest): Promise<Map<string, Error>>;
  /**
   * The start-up model as pi chooses it, once extensions have registered their providers:
   * --provider/--model, else the first of --models/enabledModels, else settings' default, else
   * the first model with credentials (pi's provider order, then extension providers), else the
   * offline demo model. Loads the catalogue. Throws ModelResolutionError for a bad --model.
   */
  chooseStartup(request: StartupModelRequest): Promise<StartupModel>;
}

/**
 * Decide the initial model. Loads only pi-ai's API-key module (and its model catalogue when the
 * model comes from it; see pi-ai.ts). parley's local models stream through pi-ai's `streamSimple`
 * once `registerParleyProviders()` has run (the agent does so when its loop loads).
 * Throws ModelScriptError (bad `--model-script`) or ModelResolutionError (bad model flags).
 */
export async function resolveModels(options: ModelCliOptions, environment: ResolveEnvironment = {}): Promise<ModelResolution> {
  const env = environment.env ?? process.env;
  const cwd = environment.cwd ?? process.cwd();
  const warnings: string[] = [];
  const delayMs = parseDelay(env.PARLEY_STREAM_DELAY_MS, warnings);

  // The script is validated before pi-ai is loaded, so a bad file fails fast.
  const script = options.modelScript !== undefined ? loadModelScript(options.modelScript, environment.launchCwd ?? cwd) : undefined;
  if (options.apiKey !== undefined && !script && options.provider === undefined && options.model === undefined) {
    throw new ModelResolutionError("--api-key needs a model: pass --provider NAME and/or --model PATTERN with it");
  }

  const pi = await loadPiAiForResolution();

  const offlineModel = createOfflineModel({ cwd, delayMs });
  const scriptModel = script ? createScriptModel(script, { delayMs }) : undefined;
  const localModels = scriptModel ? [scriptModel, offlineModel] : [offlineModel];
  const keys = new KeyLookup(pi, env, environment.authKey, environment.fallbackKey, environment.freshAuth);
  // The catalogue of built-in models loads only when something needs it (see pi-ai.ts).
  let built: Catalog | undefined;
  let extra: ExtraModels | undefined;
  // The live catalogue's overlay, restored from models-store.json with the catalogue (as pi reads it at every start).
  const manifest = environment.modelsStore !== undefined ? await piAiFile("providers/data/.manifest.json") : undefined;
  let remote: RemoteCatalog | undefined;
  const remoteCatalog = (): RemoteCatalog | undefined => {
    if (environment.modelsStore === undefined || manifest === undefined) return undefined;
    remote ??= new RemoteCatalog(environment.modelsStore, builtInDataGeneratedAt(manifest));
    return remote;
  };
  const newCatalog = (): Catalog => {
    const overlay = remoteCatalog();
    overlay?.restoreSync(pi.getProviders() as string[]);
    const c = new Catalog(pi, localModels, (provider) => provider === PARLEY_PROVIDER || keys.get(provider) !== undefined, environment.adjustBuiltIn, overlay);
    c.extra = extra;
    return c;
  };
  const catalogReady = (): boolean => {
    // Something else (pi-ai's root, loaded for the agent loop) may have loaded it meanwhile.
    if (!built && piAiCatalogLoaded()) built = newCatalog();
    return built !== undefined;
  };
  const loadCatalog = async (): Promise<void> => {
    await loadPiAiCatalog();
    built ??= newCatalog();
  };
  const catalog = (): Catalog => {
    if (!catalogReady()) throw new Error("the model catalogue is not loaded yet: await loadCatalog() first");
    return built as Catalog;
  };
  // pi-ai's rule: a model without reasoning supports "off" only. Local models need no catalogue.
  const thinkingLevelsFor = (m: Model<Api>): ThinkingLevel[] => (m.reasoning ? pi.getSupportedThinkingLevels(m) : ["off"]);
  const clampThinkingLevel = (m: Model<Api>, level: ThinkingLevel): ThinkingLevel => (m.reasoning ? pi.clampThinkingLevel(m, level) : "off");

  let model: Model<Api>;
  let source: ModelSource;
  let patternLevel: ThinkingLevel | undefined;
  let offlineNotice: string | undefined;

  if (scriptModel) {
    model = scriptModel;
    source = "script";
    const ignored = [
      options.provider !== undefined && "--provider",
      options.model !== undefined && "--model",
      options.apiKey !== undefined && "--api-key",
    ].filter((f): f is string => typeof f === "string");
    if (ignored.length > 0) warnings.push(`--model-script is given, so ${ignored.join(", ")} ${ignored.length === 1 ? "is" : "are"} ignored`);
  } else if (options.provider !== undefined || options.model !== undefined) {
    await loadCatalog();
    const match = catalog().resolveCli(options.provider, options.model);
    model = match.model;
    patternLevel = match.thinkingLevel;
    if (match.warning) warnings.push(match.warning);
    source = "cli";
    if (options.apiKey !== undefined) {
      if (model.provider === PARLEY_PROVIDER) warnings.push(`--api-key is ignored: ${model.provider}/${model.id} needs no key`);
      else keys.cliKey = { provider: model.provider, key: options.apiKey };
    }
    if (model.provider !== PARLEY_PROVIDER && keys.get(model.provider) === undefined) {
      warnings.push(
        `no API key for provider "${model.provider}": pass --api-key or set its environment variable (e.g. ANTHROPIC_API_KEY for anthropic, OPENAI_API_KEY for openai)`,
      );
    }
  } else {
    // Only providers with a default here have API-key variables (a test keeps it so), so the
    // catalogue is needed only when one of them has a key.
    const provider = Object.keys(DEFAULT_MODEL_PER_PROVIDER).find((p) => keys.autoSelects(p));
    if (provider) await loadCatalog();
    const chosen = provider ? catalog().defaultModel(provider) : undefined;
    if (chosen) {
      model = chosen;
      source = "env";
    } else {
      model = offlineModel;
      source = "offline";
      offlineNotice = OFFLINE_NOTICE;
    }
  }
  if (options.loadCatalog) await loadCatalog();

  const requested = options.thinking ?? patternLevel;
  const thinkingLevel = clampThinkingLevel(model, requested ?? DEFAULT_THINKING_LEVEL);
  if (requested !== undefined && thinkingLevel !== requested) {
    warnings.push(
      model.reasoning
        ? `${model.provider}/${model.id} does not support thinking level "${requested}"; using "${thinkingLevel}"`
        : `${model.provider}/${model.id} does not support thinking; thinking level is "off"`,
    );
  }

  return {
    model,
    thinkingLevel,
    isOffline: model.api === OFFLINE_API,
    source,
    thinkingFromCli: requested !== undefined,
    warnings,
    offlineNotice,
    script,
    offlineModel,
    get catalogReady() {
      return catalogReady();
    },
    loadCatalog,
    catalogNow: () => catalogReady() || (loadPiAiNow() !== undefined && catalogReady()),
    allModels: () => catalog().all,
    modelsWithoutCatalog: () => [...localModels, ...(extra?.models() ?? [])],
    availableModels: () => {
      const withKey = new Map<string, boolean>();
      const hasKey = (provider: string): boolean => {
        let known = withKey.get(provider);
        if (known === undefined) {
          known = keys.get(provider) !== undefined;
          withKey.set(provider, known);
        }
        return known;
      };
      return lastResort([...localModels, ...catalog().builtIn.filter((m) => hasKey(m.provider))]);
    },
    findModel: (provider, modelId) => (provider === PARLEY_PROVIDER ? localModels.find((m) => m.id === modelId) : catalog().find(provider, modelId)),
    matchModel: (pattern, provider) => catalog().resolveCli(provider, pattern),
    thinkingLevelsFor,
    clampThinkingLevel,
    getApiKey: (provider) => (provider === PARLEY_PROVIDER ? undefined : keys.get(provider)),
    getRequestKey: async (provider) => (provider === PARLEY_PROVIDER ? undefined : keys.getFresh(provider)),
    getRequestAuth: async (provider) => (provider === PARLEY_PROVIDER ? undefined : keys.getFreshAuth(provider)),
    hasAuth: (m) => m.provider === PARLEY_PROVIDER || keys.get(m.provider) !== undefined,
    adjustTypedModel: (model) => environment.adjustTyped?.(model) ?? model,
    configuredHeaders: (provider) => environment.configuredHeaders?.(provider),
    setExtraModels: (source) => {
      extra = source;
      keys.registeredKey = source.configuredKey ? (provider) => source.configuredKey?.(provider) : undefined;
      if (built) built.extra = source;
    },
    refreshCatalog: async (request) => {
      const overlay = remoteCatalog();
      if (!overlay) return new Map();
      // Providers with credentials are asked; pi-ai's catalogue is loaded only then (the file is read and made either way).
      const configured = Object.keys(DEFAULT_MODEL_PER_PROVIDER).filter((p) => RemoteCatalog.overlays(p) && keys.get(p) !== undefined);
      if ((configured.length === 0 || request.allowNetwork === false) && !catalogReady()) {
        await overlay.read(request.signal).catch(() => undefined);
        return new Map();
      }
      await loadCatalog();
      const providers = pi.getProviders() as string[];
      // OpenRouter's catalogue is personalised from the built-in models, with the key and base URL a request would use.
      const personal: PersonalSource = {
        builtIn: (provider) => [...(pi.getModels(provider as KnownProvider) as Model<Api>[]), ...(environment.typedBuiltIns?.(provider) ?? [])],
        key: (provider) => keys.get(provider),
        baseUrl: (provider) => {
          const first = (pi.getModels(provider as KnownProvider) as Model<Api>[])[0];
          return first ? (environment.adjustBuiltIn?.(first) ?? first).baseUrl : undefined;
        },
      };
      return overlay.refresh(
        configured.filter((p) => providers.includes(p)),
        providers,
        { personal, ...request },
      );
    },
    chooseStartup: async (request) => {
      // The built-in catalogue is an ES module (~13 ms for Node's loader alone): a start that
      // needs no built-in model does not load it (extension providers' models need none).
      const needsCatalog =
        request.provider !== undefined ||
        request.model !== undefined ||
        (request.scoped ?? []).some((p) => p.trim() !== "") ||
        (request.defaultProvider !== undefined && request.defaultModel !== undefined) ||
        Object.keys(DEFAULT_MODEL_PER_PROVIDER).some((p) => keys.autoSelects(p));
      if (!needsCatalog && !catalogReady()) {
        const own = (extra?.models() ?? []).find((m) => extra?.hasAuth(m));
        if (request.apiKey !== undefined)
          throw new ModelResolutionError("--api-key requires a model to be specified via --model, --provider/--model, or --models");
        const model = own ?? offlineModel;
        const requested = request.thinking ?? request.defaultThinkingLevel;
        return {
          model,
          thinkingLevel: clampThinkingLevel(model, requested ?? DEFAULT_THINKING_LEVEL),
          source: own ? "env" : "offline",
          thinkingFromCli: request.thinking !== undefined,
          warnings: [],
          ...(own ? {} : { offlineNotice: OFFLINE_NOTICE }),
        };
      }
      await loadCatalog();
      const c = catalog();
      const warnings: string[] = [];
      let chosen: ModelMatch | undefined;
      let startSource: ModelSource = "offline";
      let notice: string | undefined;
      if (request.provider !== undefined || request.model !== undefined) {
        chosen = c.resolveCli(request.provider, request.model);
        startSource = "cli";
      } else {
        for (const pattern of request.scoped ?? []) {
          chosen = scopedMatch(pattern, c);
          if (chosen) {
            startSource = "scoped";
            break;
          }
          if (pattern.trim() !== "") warnings.push(`No model matches "${pattern}" (--models or enabledModels)`);
        }
        if (!chosen && request.defaultProvider !== undefined && request.defaultModel !== undefined) {
          const found = c.find(request.defaultProvider, request.defaultModel);
          if (found) {
            chosen = { model: found, ...(request.defaultThinkingLevel !== undefined ? { thinkingLevel: request.defaultThinkingLevel } : {}) };
            startSource = "settings";
          } else {
            warnings.push(`settings: default model ${request.defaultProvider}/${request.defaultModel} is not known; choosing another`);
          }
        }
        if (!chosen) {
          const provider = Object.keys(DEFAULT_MODEL_PER_PROVIDER).find((p) => keys.autoSelects(p));
          const found = (provider ? c.defaultModel(provider) : undefined) ?? (extra?.models() ?? []).find((m) => c.usable(m));
          if (found) {
            chosen = { model: found, ...(request.defaultThinkingLevel !== undefined ? { thinkingLevel: request.defaultThinkingLevel } : {}) };
            startSource = "env";
          }
        }
        if (!chosen) {
          chosen = { model: offlineModel };
          notice = OFFLINE_NOTICE;
        }
      }
      const model = chosen.model;
      if (chosen.warning) warnings.push(chosen.warning);
      if (request.apiKey !== undefined) {
        if (startSource !== "cli" && startSource !== "scoped") {
          throw new ModelResolutionError("--api-key requires a model to be specified via --model, --provider/--model, or --models");
        }
        if (model.provider === PARLEY_PROVIDER) warnings.push(`--api-key is ignored: ${model.provider}/${model.id} needs no key`);
        else keys.cliKey = { provider: model.provider, key: request.apiKey };
      }
      if (startSource === "cli" && !c.usable(model)) {
        warnings.push(
          `no API key for provider "${model.provider}": pass --api-key, add it to auth.json or set its environment variable (e.g. ANTHROPIC_API_KEY for anthropic, OPENAI_API_KEY for openai)`,
        );
      }
      const requested = request.thinking ?? chosen.thinkingLevel;
      const level = clampThinkingLevel(model, requested ?? DEFAULT_THINKING_LEVEL);
      if (request.thinking !== undefined && level !== request.thinking) {
        warnings.push(
          model.reasoning
            ? `${model.provider}/${model.id} does not support thinking level "${request.thinking}"; using "${level}"`
            : `${model.provider}/${model.id} does not support thinking; thinking level is "off"`,
        );
      }
      const thinkingFromCli = request.thinking !== undefined || (startSource === "cli" && chosen.thinkingLevel !== undefined);
      return { model, thinkingLevel: level, source: startSource, thinkingFromCli, warnings, ...(notice !== undefined ? { offlineNotice: notice } : {}) };
    },
  };
}

const OFFLINE_NOTICE =
  "parley: no model configured and no API key found; answering with the built-in offline demo model (parley/offline). " +
  "For a real model use --provider/--model/--api-key, set a key such as ANTHROPIC_API_KEY or OPENAI_API_KEY, or add one to auth.json in the agent directory.";

function parseDelay(raw: string | undefined, warnings: string[]): number {
  if (raw === undefined || raw.trim() === "") return 0;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) {
    warnings.push(`PARLEY_STREAM_DELAY_MS=${raw} is not a non-negative number of milliseconds; ignored`);
    return 0;
  }
  return n;
}

/**
 * The models a client is offered, as pi offers them (those with credentials), with parley's
 * offline demo model only as the last resort: listed when nothing else can answer, so a pi
 * client's model list or `cycle_model` never lands on a model pi does not have.
 */
export function lastResort(models: Model<Api>[]): Model<Api>[] {
  const real = models.filter((m) => m.api !== OFFLINE_API);
  return real.length > 0 ? real : models;
}
