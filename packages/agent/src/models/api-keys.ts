/**
 * API keys by provider, in pi 1.6's order: `--api-key` for the provider of the model chosen on the
 * command line, then pi's auth.json, then the key the provider is configured with (an extension's
 * `registerProvider` apiKey, else models.json's), then the environment (pi-ai's lookup, which also
 * counts ambient credentials such as an AWS profile). Choosing a provider automatically counts only
 * real API-key variables.
 */
import type { RequestAuth } from "../config/oauth-tokens.js";
import type { PiAiResolution } from "./pi-ai.js";

/** Generic tokens that are not evidence the user wants a provider picked automatically. */
const NOT_AUTO_SELECTING = new Set(["GH_TOKEN", "GITHUB_TOKEN"]);

export class KeyLookup {
  cliKey: { provider: string; key: string } | undefined;
  /** Keys registered providers were given (extension providers, set once they register); before models.json's. */
  registeredKey: ((provider: string) => string | undefined) | undefined;

  constructor(
    private readonly pi: PiAiResolution,
    private readonly env: Record<string, string | undefined>,
    private readonly authKey: ((provider: string) => string | undefined) | undefined,
    private readonly fallbackKey: ((provider: string) => string | undefined) | undefined = undefined,
    private readonly freshAuth: ((provider: string) => Promise<RequestAuth | undefined> | undefined) | undefined = undefined,
  ) {}

  /** The key for a request: as `get`, with an OAuth login's token refreshed (and saved) first when it is about to expire. */
  async getFresh(provider: string): Promise<string | undefined> {
    return (await this.getFreshAuth(provider))?.apiKey;
  }

  /** A request's auth: as getFresh, with the headers and base URL an OAuth login resolves to (pi 1.6's ModelAuth). */
  async getFreshAuth(provider: string): Promise<RequestAuth | undefined> {
    if (this.cliKey && this.cliKey.provider === provider) return { apiKey: this.cliKey.key };
    const fresh = this.freshAuth?.(provider);
    if (fresh !== undefined) return await fresh;
    const apiKey = this.get(provider);
    return apiKey !== undefined ? { apiKey } : undefined;
  }

  get(provider: string): string | undefined {
    if (this.cliKey && this.cliKey.provider === provider) return this.cliKey.key;
    return this.authKey?.(provider) ?? this.configuredKey(provider) ?? this.withEnv(() => this.pi.getEnvApiKey(provider));
  }

  /** An actual API-key variable is set for the provider (no ambient credentials, no GitHub token), or auth.json holds a key. */
  autoSelects(provider: string): boolean {
    if (this.authKey?.(provider) !== undefined || this.configuredKey(provider) !== undefined) return true;
    const vars = this.withEnv(() => this.pi.findEnvKeys(provider)) ?? [];
    return vars.some((v) => !NOT_AUTO_SELECTING.has(v));
  }

  /** The provider's configured key: a registration's, else models.json's. */
  private configuredKey(provider: string): string | undefined {
    return this.registeredKey?.(provider) ?? this.fallbackKey?.(provider);
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
