/**
 * The catalogue of models: parley's local models, models registered later (extension providers,
 * models.json) and pi-ai's built-in ones; the providers' default models and the order in which
 * providers with credentials are tried; and `--provider`/`--model` resolution over them, as pi
 * does it (`--provider X --model Y` restricts the search to X and tolerates `--model X/Y`), except
 * that `--provider X` alone selects X's default model (pi ignores it).
 */
import type { Api, KnownProvider, Model } from "@mariozechner/pi-ai";
import { exactReference, isThinkingLevel, matchWithThinking, type ModelMatch, stripThinkingSuffix } from "./model-patterns.js";
import { closest, suggestModels } from "./model-suggestions.js";
import type { PiAiResolution } from "./pi-ai.js";
import { PARLEY_PROVIDER } from "./script-model.js";

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

/** Models that join the catalogue after start-up: extension providers, models.json. */
export interface ExtraModels {
  models(): Model<Api>[];
  hasAuth(model: Model<Api>): boolean;
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

export class Catalog {
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
    /** Adjusts each built-in model (models.json overrides, an OAuth login's base URL). */
    adjust: ((model: Model<Api>) => Model<Api>) | undefined = undefined,
  ) {
    this.#builtInProviders = pi.getProviders() as string[];
    const builtIn = this.#builtInProviders.flatMap((p) => pi.getModels(p as KnownProvider) as Model<Api>[]);
    this.builtIn = adjust ? builtIn.map(adjust) : builtIn;
    this.#local = local;
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
