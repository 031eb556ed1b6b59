/**
 * The catalogue of models: parley's local models, models registered later (extension providers,
 * models.json) and pi-ai's built-in ones; the providers' default models and the order in which
 * providers with credentials are tried; and `--provider`/`--model` resolution over them, as pi
 * does it (`--provider X --model Y` restricts the search to X and tolerates `--model X/Y`), except
 * that `--provider X` alone selects X's default model (pi ignores it).
 */
import type { Api, KnownProvider, Model } from "@earendil-works/pi-ai";
import { exactReference, isThinkingLevel, matchWithThinking, type ModelMatch, stripThinkingSuffix } from "./model-patterns.js";
import { closest, suggestModels } from "./model-suggestions.js";
import type { PiAiResolution } from "./pi-ai.js";
import { PARLEY_PROVIDER } from "./script-model.js";

/**
 * Default model per provider, and the order in which providers with a key in the environment are
 * tried. Facts from pi 1.6.0 (`defaultModelPerProvider`); a default missing from pi-ai's registry
 * falls back to the provider's first model.
 */
export const DEFAULT_MODEL_PER_PROVIDER: Readonly<Record<string, string>> = {
  "amazon-bedrock": "us.anthropic.claude-opus-5-5",
  "ant-ling": "Ring-2.6-1T",
  anthropic: "claude-opus-5-5",
  openai: "gpt-6.2-sol",
  azure: "gpt-6.2-sol",
  "openai-codex": "gpt-6.2-sol",
  radius: "balanced",
  nvidia: "nvidia/nemotron-3.5-super-vl-120b-a12b",
  deepseek: "deepseek-v4-pro",
  google: "gemini-4-argon",
  "google-vertex": "gemini-4-argon",
  "github-copilot": "gpt-6.1-sol",
  openrouter: "moonshotai/kimi-k2.7-code",
  "vercel-ai-gateway": "zai/glm-5.3",
  xai: "grok-4.7",
  groq: "openai/gpt-oss-120b",
  cerebras: "gpt-oss-120b",
  zai: "glm-5.3",
  "zai-coding-cn": "glm-5.3",
  mistral: "devstral-medium-latest",
  minimax: "MiniMax-M3",
  "minimax-cn": "MiniMax-M3",
  moonshotai: "kimi-k2.7-code",
  "moonshotai-cn": "kimi-k2.7-code",
  huggingface: "moonshotai/Kimi-K2.7-Code",
  fireworks: "accounts/fireworks/models/kimi-k3",
  together: "moonshotai/Kimi-K3",
  baseten: "zai-org/GLM-5.3",
  opencode: "kimi-k2.7-code",
  "opencode-go": "kimi-k3.1-pro",
  "kimi-coding": "kimi-for-coding",
  meta: "muse-spark-1.3",
  "cloudflare-workers-ai": "@cf/moonshotai/kimi-k2.7-code",
  "cloudflare-ai-gateway": "workers-ai/@cf/moonshotai/kimi-k2.7-code",
  "qwen-token-plan": "qwen3.8-max",
  "qwen-token-plan-cn": "qwen3.8-max",
  "qwen-token-plan-individual": "qwen3.8-max",
  "qwen-token-plan-individual-cn": "qwen3.8-max",
  xiaomi: "mimo-v2.6-pro",
  "xiaomi-token-plan-cn": "mimo-v2.6-pro",
  "xiaomi-token-plan-ams": "mimo-v2.6-pro",
  "xiaomi-token-plan-sgp": "mimo-v2.6-pro",
};

/** Models that join the catalogue after start-up: extension providers, models.json. */
export interface ExtraModels {
  models(): Model<Api>[];
  hasAuth(model: Model<Api>): boolean;
  /** The key a registered provider was given (resolved), which pi 1.6 uses before the environment's. */
  configuredKey?(provider: string): string | undefined;
}

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

/** Newer models of built-in providers, joined at run time (remote-catalog.ts). */
export interface CatalogOverlay {
  /** Grows whenever the overlaid models change. */
  readonly version: number;
  chatModels(provider: string): readonly Model<Api>[];
  /** Whether a provider's overlaid models, when there are any, are its whole list rather than additions (OpenRouter's personalised catalogue). */
  replaces(provider: string): boolean;
}

export class Catalog {
  readonly #baseBuiltIn: Model<Api>[];
  readonly #overlay: CatalogOverlay | undefined;
  readonly #adjust: ((model: Model<Api>) => Model<Api>) | undefined;
  #merged: { version: number; models: Model<Api>[] } | undefined;
  readonly #builtInProviders: string[];
  readonly #local: Model<Api>[];
  /** Set once extension providers or models.json can add models. */
  extra: ExtraModels | undefined;

  constructor(
    pi: PiAiResolution,
    local: Model<Api>[],
    /** Whether a provider has credentials; fuzzy matches across providers prefer those. */
    private readonly usableProvider: (provider: string) => boolean,
    /** Adjusts each built-in model (models.json overrides, an OAuth login's base URL). */
    adjust: ((model: Model<Api>) => Model<Api>) | undefined = undefined,
    overlay: CatalogOverlay | undefined = undefined,
  ) {
    this.#builtInProviders = pi.getProviders() as string[];
    const builtIn = this.#builtInProviders.flatMap((p) => pi.getModels(p as KnownProvider) as Model<Api>[]);
    this.#baseBuiltIn = adjust ? builtIn.map(adjust) : builtIn;
    this.#adjust = adjust;
    this.#overlay = overlay;
    this.#local = local;
  }

  /**
   * pi-ai's built-in models with the live catalogue's over them, as pi 1.6 merges them: per
   * provider, a newer model of the same id takes the built-in one's place, new ones follow.
   */
  get builtIn(): Model<Api>[] {
    const overlay = this.#overlay;
    if (!overlay || overlay.version === 0) return this.#baseBuiltIn;
    if (this.#merged?.version === overlay.version) return this.#merged.models;
    const models: Model<Api>[] = [];
    for (const provider of this.#builtInProviders) {
      const byId = new Map<string, Model<Api>>();
      const overlaid = overlay.chatModels(provider);
      if (!(overlay.replaces(provider) && overlaid.length > 0)) for (const m of this.#baseBuiltIn) if (m.provider === provider) byId.set(m.id, m);
      for (const m of overlaid) byId.set(m.id, this.#adjust ? this.#adjust(m) : m);
      models.push(...byId.values());
    }
    this.#merged = { version: overlay.version, models };
    return models;
  }

  /** Every model: parley's own, the extension and models.json ones, then the built-in catalogue. */
  get all(): Model<Api>[] {
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
