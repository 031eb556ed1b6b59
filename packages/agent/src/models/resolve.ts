/**
 * Which model parley starts with, and how it gets API keys.
 *
 * Precedence for the initial model:
 *   1. `--model-script FILE`            → parley/script (other model flags are ignored, with a warning)
 *   2. `--provider` and/or `--model`     → a model from pi-ai's built-in registry (or parley/offline)
 *   3. an API key in the environment    → that provider's default model (first provider in pi's order)
 *   4. nothing                          → parley/offline, `isOffline: true`, `offlineNotice` set
 *
 * `--model PATTERN` follows pi's rules: `provider/id` or a bare id (case-insensitive, exact), else
 * a substring of the id or name, preferring an alias (`claude-sonnet-4-5`) over a dated id
 * (`claude-sonnet-4-5-20250929`), else the latest dated id; a `:<thinking>` suffix
 * (`sonnet:high`) sets the thinking level; `--provider X --model Y` restricts the search to X and
 * tolerates `--model X/Y`. Differences from pi 0.73.1, on purpose:
 *   - an unknown model fails (with close matches listed) instead of becoming a custom id on the
 *     provider, so a typo is reported at start-up rather than as an HTTP error on the first prompt;
 *   - `--provider X` alone selects X's default model (pi ignores it);
 *   - when a fuzzy `--model` pattern matches models of several providers, providers with
 *     credentials are preferred (pi takes the highest id across all providers, which for
 *     "opus-4-7" is a Bedrock inference profile even when only ANTHROPIC_API_KEY is set);
 *   - step 3 counts only real API-key variables (pi-ai's `findEnvKeys`, minus the generic
 *     GH_TOKEN/GITHUB_TOKEN that CI systems set): an AWS profile or a GitHub token in the
 *     environment does not silently replace the offline model. Such ambient credentials still count
 *     for `availableModels()` and `getApiKey()`, as in pi.
 * Thinking level: `--thinking` beats the pattern suffix, which beats pi's default "medium"; the
 * result is clamped to what the model supports (pi-ai's `clampThinkingLevel`), "off" for
 * non-reasoning models, with a warning when an explicitly requested level had to change.
 * `--api-key` applies to the provider of the model chosen by `--provider`/`--model` (pi rejects it
 * without one, and so do we); other providers read their keys from the environment.
 * `PARLEY_STREAM_DELAY_MS` (environment) slows the local models' deltas, for demos and tests.
 */
import type { Api, KnownProvider, Model, ModelThinkingLevel } from "@mariozechner/pi-ai";
import { createOfflineModel, OFFLINE_API } from "./offline-model.js";
import { loadPiAiCatalog, loadPiAiForResolution, piAiCatalogLoaded, type PiAiResolution } from "./pi-ai.js";
import { createScriptModel, loadModelScript, type ModelScript, PARLEY_PROVIDER } from "./script-model.js";

export type ThinkingLevel = ModelThinkingLevel;
export const THINKING_LEVEL_NAMES: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];
/** pi's default thinking level, before clamping to the model. */
export const DEFAULT_THINKING_LEVEL: ThinkingLevel = "medium";

/**
 * Default model per provider, and the order in which providers with a key in the environment are
 * tried. Facts from pi 0.73.1 (`defaultModelPerProvider`); a default missing from pi-ai's registry
 * falls back to the provider's first model.
 */
export const DEFAULT_MODEL_PER_PROVIDER: Readonly<Record<string, string>> = {
  "amazon-bedrock": "us.anthropic.claude-opus-4-6-v1",
  anthropic: "claude-opus-4-7",
  openai: "gpt-5.4",
  "azure-openai-responses": "gpt-5.4",
  "openai-codex": "gpt-5.5",
  deepseek: "deepseek-v4-pro",
  google: "gemini-3.1-pro-preview",
  "google-vertex": "gemini-3.1-pro-preview",
  "github-copilot": "gpt-5.4",
  openrouter: "moonshotai/kimi-k2.6",
  "vercel-ai-gateway": "zai/glm-5.1",
  xai: "grok-4.20-0309-reasoning",
  groq: "openai/gpt-oss-120b",
  cerebras: "zai-glm-4.7",
  zai: "glm-5.1",
  mistral: "devstral-medium-latest",
  minimax: "MiniMax-M2.7",
  "minimax-cn": "MiniMax-M2.7",
  moonshotai: "kimi-k2.6",
  "moonshotai-cn": "kimi-k2.6",
  huggingface: "moonshotai/Kimi-K2.6",
  fireworks: "accounts/fireworks/models/kimi-k2p6",
  opencode: "kimi-k2.6",
  "opencode-go": "kimi-k2.6",
  "kimi-coding": "kimi-for-coding",
  "cloudflare-workers-ai": "@cf/moonshotai/kimi-k2.6",
  "cloudflare-ai-gateway": "workers-ai/@cf/moonshotai/kimi-k2.6",
  xiaomi: "mimo-v2.5-pro",
  "xiaomi-token-plan-cn": "mimo-v2.5-pro",
  "xiaomi-token-plan-ams": "mimo-v2.5-pro",
  "xiaomi-token-plan-sgp": "mimo-v2.5-pro",
};

/** Generic tokens that are not evidence the user wants a provider picked automatically. */
const NOT_AUTO_SELECTING = new Set(["GH_TOKEN", "GITHUB_TOKEN"]);

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
  /** Working directory: offline model's files, relative `--model-script` paths. Default process.cwd(). */
  cwd?: string;
  /** Keys stored in pi's auth.json; they come before the environment's, as in pi. */
  authKey?: (provider: string) => string | undefined;
  /** A key models.json gives a provider: after auth.json and the environment, as in pi. */
  fallbackKey?: (provider: string) => string | undefined;
  /** Adjusts each built-in model (models.json overrides, an OAuth login's base URL), as pi's registry does. */
  adjustBuiltIn?: (model: Model<Api>) => Model<Api>;
}

/** Models that join the catalogue after start-up: extension providers, models.json. */
export interface ExtraModels {
  models(): Model<Api>[];
  hasAuth(model: Model<Api>): boolean;
}

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
  warnings: string[];
  offlineNotice?: string;
}

export type ModelSource = "script" | "cli" | "scoped" | "settings" | "env" | "offline";

/** `--provider`/`--model`/`--api-key` that cannot be honoured. The message lists close matches. */
export class ModelResolutionError extends Error {
  override readonly name = "ModelResolutionError";
  constructor(
    message: string,
    readonly suggestions: string[] = [],
  ) {
    super(message);
  }
}

export interface ModelMatch {
  model: Model<Api>;
  /** From a `:<level>` suffix in the pattern, if any. */
  thinkingLevel?: ThinkingLevel;
  /** Set when the id is not in the catalogue and is used as a custom id of its provider. */
  warning?: string;
}

export interface ModelResolution {
  /** The initial model. */
  readonly model: Model<Api>;
  /** The initial thinking level, already clamped to `model`. */
  readonly thinkingLevel: ThinkingLevel;
  /** The initial model is parley's offline demo model. */
  readonly isOffline: boolean;
  readonly source: ModelSource;
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
  /** Whether a request with this model can authenticate (always true for parley's own models). */
  hasAuth(model: Model<Api>): boolean;
  /** Models registered later (extension providers, models.json) join matching and defaults. */
  setExtraModels(extra: ExtraModels): void;
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
  const script = options.modelScript !== undefined ? loadModelScript(options.modelScript, cwd) : undefined;
  if (options.apiKey !== undefined && !script && options.provider === undefined && options.model === undefined) {
    throw new ModelResolutionError("--api-key needs a model: pass --provider NAME and/or --model PATTERN with it");
  }

  const pi = await loadPiAiForResolution();

  const offlineModel = createOfflineModel({ cwd, delayMs });
  const scriptModel = script ? createScriptModel(script, { delayMs }) : undefined;
  const localModels = scriptModel ? [scriptModel, offlineModel] : [offlineModel];
  const keys = new KeyLookup(pi, env, environment.authKey, environment.fallbackKey);
  // The catalogue of built-in models loads only when something needs it (see pi-ai.ts).
  let built: Catalog | undefined;
  let extra: ExtraModels | undefined;
  const newCatalog = (): Catalog => {
    const c = new Catalog(pi, localModels, (provider) => provider === PARLEY_PROVIDER || keys.get(provider) !== undefined, environment.adjustBuiltIn);
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
    warnings,
    offlineNotice,
    script,
    offlineModel,
    get catalogReady() {
      return catalogReady();
    },
    loadCatalog,
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
      return [...localModels, ...catalog().builtIn.filter((m) => hasKey(m.provider))];
    },
    findModel: (provider, modelId) => (provider === PARLEY_PROVIDER ? localModels.find((m) => m.id === modelId) : catalog().find(provider, modelId)),
    matchModel: (pattern, provider) => catalog().resolveCli(provider, pattern),
    thinkingLevelsFor,
    clampThinkingLevel,
    getApiKey: (provider) => (provider === PARLEY_PROVIDER ? undefined : keys.get(provider)),
    hasAuth: (m) => m.provider === PARLEY_PROVIDER || keys.get(m.provider) !== undefined,
    setExtraModels: (source) => {
      extra = source;
      if (built) built.extra = source;
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
      return { model, thinkingLevel: level, source: startSource, warnings, ...(notice !== undefined ? { offlineNotice: notice } : {}) };
    },
  };
}

const OFFLINE_NOTICE =
  "parley: no model configured and no API key found; answering with the built-in offline demo model (parley/offline). " +
  "For a real model use --provider/--model/--api-key, set a key such as ANTHROPIC_API_KEY or OPENAI_API_KEY, or add one to auth.json in the agent directory.";

/**
 * A `--models`/`enabledModels` pattern, matched as pi matches it: against the models that can be
 * used now (with credentials), as a glob over `provider/id` (and id) or as --model takes a pattern.
 */
function scopedMatch(pattern: string, c: Catalog): ModelMatch | undefined {
  const text = pattern.trim();
  if (text === "") return undefined;
  const usable = c.usableModels();
  const colon = text.lastIndexOf(":");
  const suffix = colon > 0 ? text.slice(colon + 1) : undefined;
  const level = suffix !== undefined && isThinkingLevel(suffix) ? suffix : undefined;
  const bare = level !== undefined ? text.slice(0, colon) : text;
  if (/[*?]/.test(bare)) {
    const source = bare
      .replace(/[.+^$()|[\]\\{}]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".");
    const regex = new RegExp(`^${source}$`, "i");
    const model = usable.find((m) => regex.test(`${m.provider}/${m.id}`) || regex.test(m.id));
    return model ? { model, ...(level !== undefined ? { thinkingLevel: level } : {}) } : undefined;
  }
  return matchWithThinking(text, usable, c.usable);
}

function parseDelay(raw: string | undefined, warnings: string[]): number {
  if (raw === undefined || raw.trim() === "") return 0;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) {
    warnings.push(`PARLEY_STREAM_DELAY_MS=${raw} is not a non-negative number of milliseconds; ignored`);
    return 0;
  }
  return n;
}

// ---- keys ----------------------------------------------------------------------------------------

class KeyLookup {
  cliKey: { provider: string; key: string } | undefined;

  constructor(
    private readonly pi: PiAiResolution,
    private readonly env: Record<string, string | undefined>,
    private readonly authKey: ((provider: string) => string | undefined) | undefined,
    private readonly fallbackKey: ((provider: string) => string | undefined) | undefined = undefined,
  ) {}

  get(provider: string): string | undefined {
    if (this.cliKey && this.cliKey.provider === provider) return this.cliKey.key;
    return this.authKey?.(provider) ?? this.withEnv(() => this.pi.getEnvApiKey(provider)) ?? this.fallbackKey?.(provider);
  }

  /** An actual API-key variable is set for the provider (no ambient credentials, no GitHub token), or auth.json holds a key. */
  autoSelects(provider: string): boolean {
    if (this.authKey?.(provider) !== undefined || this.fallbackKey?.(provider) !== undefined) return true;
    const vars = this.withEnv(() => this.pi.findEnvKeys(provider)) ?? [];
    return vars.some((v) => !NOT_AUTO_SELECTING.has(v));
  }

  /**
   * pi-ai reads process.env directly. To evaluate it against another environment (tests, an
   * embedding host), swap process.env for the duration of the synchronous call.
   */
  private withEnv<T>(fn: () => T): T {
    if (this.env === process.env) return fn();
    const saved = process.env;
    process.env = this.env as NodeJS.ProcessEnv;
    try {
      return fn();
    } finally {
      process.env = saved;
    }
  }
}

// ---- catalog and pattern matching ----------------------------------------------------------------

class Catalog {
  readonly builtIn: Model<Api>[];
  readonly #builtInProviders: string[];
  readonly #local: Model<Api>[];
  /** Set once extension providers or models.json can add models. */
  extra: ExtraModels | undefined;

  constructor(
    pi: PiAiResolution,
    local: Model<Api>[],
    /** Whether a provider has credentials; fuzzy matches across providers prefer those. */
    private readonly usableProvider: (provider: string) => boolean,
    adjust: ((model: Model<Api>) => Model<Api>) | undefined = undefined,
  ) {
    this.#builtInProviders = pi.getProviders() as string[];
    const builtIn = this.#builtInProviders.flatMap((p) => pi.getModels(p as KnownProvider) as Model<Api>[]);
    this.builtIn = adjust ? builtIn.map(adjust) : builtIn;
    this.#local = local;
  }

  private get all(): Model<Api>[] {
    const extra = this.extra?.models() ?? [];
    return extra.length === 0
      ? [...this.#local, ...this.builtIn]
      : [...this.#local, ...extra, ...this.builtIn.filter((m) => !extra.some((e) => e.provider === m.provider && e.id === m.id))];
  }

  private get providers(): string[] {
    const extra = (this.extra?.models() ?? []).map((m) => m.provider);
    return [...new Set([PARLEY_PROVIDER, ...extra, ...this.#builtInProviders])];
  }

  /** Credentials for a model: its provider's key, or what its extension provider says. */
  usable = (model: Model<Api>): boolean => {
    const extra = this.extra;
    if (extra && extra.models().some((m) => m.provider === model.provider)) return extra.hasAuth(model);
    return this.usableProvider(model.provider);
  };

  /** Every model that can be used now, in pi's order: built-in providers first, then the rest. */
  usableModels(): Model<Api>[] {
    const extra = this.extra?.models() ?? [];
    return [...this.builtIn.filter((m) => this.usableProvider(m.provider)), ...extra.filter((m) => this.usable(m))];
  }

  /** Providers in the order their environment keys are tried: pi's order, then the rest. */
  providerOrder(): string[] {
    const known = Object.keys(DEFAULT_MODEL_PER_PROVIDER);
    const builtIn = this.providers.filter((p) => p !== PARLEY_PROVIDER);
    return [...known.filter((p) => builtIn.includes(p)), ...builtIn.filter((p) => !known.includes(p))];
  }

  modelsOf(provider: string): Model<Api>[] {
    return this.all.filter((m) => m.provider === provider);
  }

  defaultModel(provider: string): Model<Api> | undefined {
    const models = this.modelsOf(provider);
    const id = provider === PARLEY_PROVIDER ? undefined : DEFAULT_MODEL_PER_PROVIDER[provider];
    return models.find((m) => m.id === id) ?? models[0];
  }

  find(provider: string, modelId: string): Model<Api> | undefined {
    return this.all.find((m) => m.provider === provider && m.id === modelId);
  }

  private canonicalProvider(name: string): string | undefined {
    const lower = name.trim().toLowerCase();
    return this.providers.find((p) => p.toLowerCase() === lower);
  }

  resolveCli(providerOption: string | undefined, modelOption: string | undefined): ModelMatch {
    let provider: string | undefined;
    if (providerOption !== undefined) {
      provider = this.canonicalProvider(providerOption);
      if (!provider) {
        const close = closest(providerOption, this.providers, 3);
        throw new ModelResolutionError(
          `Unknown provider "${providerOption}".${close.length > 0 ? ` Did you mean ${close.map((c) => `"${c}"`).join(" or ")}?` : ""} ` +
            `Known providers: ${this.providers.join(", ")}.`,
          close,
        );
      }
    }
    const modelText = modelOption?.trim();
    if (modelText === undefined || modelText === "") {
      const model = provider ? this.defaultModel(provider) : undefined;
      if (!model) throw new ModelResolutionError(`No models are known for provider "${provider ?? ""}".`);
      return { model };
    }

    let pattern = modelText;
    let inferred = false;
    if (!provider) {
      // "zai/glm-5" means provider zai, model glm-5, when "zai" is a provider
      const slash = modelText.indexOf("/");
      const maybe = slash > 0 ? this.canonicalProvider(modelText.slice(0, slash)) : undefined;
      if (maybe) {
        provider = maybe;
        pattern = modelText.slice(slash + 1);
        inferred = true;
      } else {
        const exact = exactReference(modelText, this.all, this.usable);
        if (exact) return { model: exact };
      }
    } else if (modelText.toLowerCase().startsWith(`${provider.toLowerCase()}/`)) {
      pattern = modelText.slice(provider.length + 1);
    }

    const candidates = provider ? this.modelsOf(provider) : this.all;
    const found = matchWithThinking(pattern, candidates, this.usable);
    if (found) return found;
    if (inferred) {
      // an id that itself contains a slash, e.g. OpenRouter's "openai/gpt-4o" under openrouter
      const whole = matchWithThinking(modelText, this.all, this.usable);
      if (whole) return whole;
    }

    const display = provider ? `${provider}/${pattern}` : modelText;
    const pool = provider && !inferred ? candidates : this.all;
    const bare = stripThinkingSuffix(pattern);
    const suggestions = suggestModels(bare, pool, 5);
    // As pi does: a provider's new model may predate the catalogue, so an unknown id for a known
    // provider is taken as a custom id on the provider's default model (with a warning).
    const base = provider && provider !== PARLEY_PROVIDER ? this.defaultModel(provider) : undefined;
    if (base && bare !== "") {
      const level = pattern.length > bare.length ? pattern.slice(bare.length + 1) : undefined;
      return {
        model: { ...base, id: bare, name: bare },
        ...(level !== undefined && isThinkingLevel(level) ? { thinkingLevel: level } : {}),
        warning: `Model "${provider}/${bare}" is not in the catalogue; using it as a custom model id of ${provider}${suggestions.length > 0 ? ` (did you mean: ${suggestions.join(", ")}?)` : ""}`,
      };
    }
    const hint =
      suggestions.length > 0
        ? ` Did you mean: ${suggestions.join(", ")}?`
        : provider
          ? ` Models for ${provider} include: ${candidates
              .slice(0, 8)
              .map((m) => m.id)
              .join(", ")}.`
          : " Use --provider NAME --model ID, or get_available_models once running.";
    throw new ModelResolutionError(`Model "${display}" not found.${hint}`, suggestions);
  }
}

function isThinkingLevel(s: string): s is ThinkingLevel {
  return (THINKING_LEVEL_NAMES as readonly string[]).includes(s);
}

function stripThinkingSuffix(pattern: string): string {
  const colon = pattern.lastIndexOf(":");
  return colon > 0 && isThinkingLevel(pattern.slice(colon + 1)) ? pattern.slice(0, colon) : pattern;
}

/**
 * `provider/id` or a bare id, case-insensitive. An id several providers share (`gpt-5`) is an
 * exact match all the same, as in pi: the first provider with credentials, else the first in
 * catalogue order. Never a longer id (`gpt-5.5-pro`): that would bill the user for another model.
 */
function exactReference(reference: string, models: Model<Api>[], usable: (model: Model<Api>) => boolean): Model<Api> | undefined {
  const ref = reference.trim().toLowerCase();
  if (ref === "") return undefined;
  const canonical = models.filter((m) => `${m.provider}/${m.id}`.toLowerCase() === ref);
  if (canonical.length > 0) return canonical.find(usable) ?? canonical[0];
  const byId = models.filter((m) => m.id.toLowerCase() === ref);
  return byId.find(usable) ?? byId[0];
}

/** An id without a date suffix ("-20250929") is an alias; "-latest" is one too. */
function isAlias(id: string): boolean {
  return id.endsWith("-latest") || !/-\d{8}$/.test(id);
}

function matchPattern(pattern: string, models: Model<Api>[], usable: (model: Model<Api>) => boolean): Model<Api> | undefined {
  const exact = exactReference(pattern, models, usable);
  if (exact) return exact;
  const needle = pattern.trim().toLowerCase();
  if (needle === "") return undefined;
  const allHits = models.filter((m) => m.id.toLowerCase().includes(needle) || m.name.toLowerCase().includes(needle));
  // Deviation from pi: when the hits span several providers, those with credentials win
  // ("opus-4-7" with ANTHROPIC_API_KEY set is anthropic's model, not a Bedrock inference profile).
  const withAuth = allHits.filter((m) => usable(m));
  const hits = withAuth.length > 0 ? withAuth : allHits;
  const aliases = hits.filter((m) => isAlias(m.id));
  const pool = aliases.length > 0 ? aliases : hits;
  return [...pool].sort((a, b) => b.id.localeCompare(a.id))[0];
}

/** The whole pattern first; failing that, a trailing `:<thinking level>` is peeled off (strictly). */
function matchWithThinking(pattern: string, models: Model<Api>[], usable: (model: Model<Api>) => boolean): ModelMatch | undefined {
  const model = matchPattern(pattern, models, usable);
  if (model) return { model };
  const colon = pattern.lastIndexOf(":");
  if (colon <= 0) return undefined;
  const suffix = pattern.slice(colon + 1);
  if (!isThinkingLevel(suffix)) return undefined;
  const inner = matchWithThinking(pattern.slice(0, colon), models, usable);
  return inner ? { model: inner.model, thinkingLevel: suffix } : undefined;
}

// ---- suggestions ---------------------------------------------------------------------------------

function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** Smallest edit distance between `needle` and any same-length window of `hay` (fuzzy substring). */
function windowDistance(needle: string, hay: string): number {
  if (hay.length <= needle.length) return levenshtein(needle, hay);
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i + needle.length <= hay.length; i++) {
    best = Math.min(best, levenshtein(needle, hay.slice(i, i + needle.length)));
    if (best === 0) break;
  }
  return best;
}

/** Names within a small edit distance of `input`, closest first. */
function closest(input: string, names: string[], max: number): string[] {
  const needle = input.toLowerCase();
  const limit = Math.max(2, Math.floor(needle.length * 0.4));
  return names
    .map((name) => ({ name, d: Math.min(levenshtein(needle, name.toLowerCase()), windowDistance(needle, name.toLowerCase()) + 1) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name))
    .slice(0, max)
    .map((x) => x.name);
}

/** `provider/id` references close to a pattern: typos of a whole id, or of a part of one. */
function suggestModels(pattern: string, models: Model<Api>[], max: number): string[] {
  const needle = pattern.trim().toLowerCase();
  if (needle === "") return [];
  const wholeLimit = Math.max(2, Math.floor(needle.length * 0.4));
  const partLimit = Math.max(1, Math.floor(needle.length * 0.25));
  const scored: { ref: string; score: number; alias: boolean }[] = [];
  for (const m of models) {
    const id = m.id.toLowerCase();
    const ref = `${m.provider}/${m.id}`;
    const whole = Math.min(levenshtein(needle, id), levenshtein(needle, ref.toLowerCase()));
    const part = needle.length >= 3 ? windowDistance(needle, id) : Number.POSITIVE_INFINITY;
    let score = Number.POSITIVE_INFINITY;
    if (whole <= wholeLimit) score = whole;
    if (part <= partLimit) score = Math.min(score, part + 0.5);
    if (Number.isFinite(score)) scored.push({ ref, score, alias: isAlias(m.id) });
  }
  scored.sort((a, b) => a.score - b.score || Number(b.alias) - Number(a.alias) || a.ref.localeCompare(b.ref));
  return [...new Set(scored.map((s) => s.ref))].slice(0, max);
}
