/**
 * pi's `<agent dir>/auth.json`: `{ "<provider>": { "type": "api_key", "key": "…" } }`. A key is
 * resolved as pi resolves it (`!command`, an environment variable's name, or the key itself).
 * OAuth logins (`{ "type": "oauth", "access", "refresh", "expires" }`, written by pi's /login) are
 * used as pi uses them: the access token is the provider's key (what pi-ai's OAuth providers'
 * getApiKey returns). An expired one is not refreshed: the refresh token rotates, and parley never
 * writes pi's auth.json, so refreshing would leave pi a dead login. pi refreshes it on its next run.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveConfigValue } from "./config-value.js";

/** An OAuth login as pi stores it (other fields, such as an enterprise URL, are kept). */
export interface OAuthLogin {
  access: string;
  refresh: string;
  expires: number;
  [key: string]: unknown;
}

export interface AuthFile {
  /** The key stored for a provider, resolved (an OAuth login's access token while it is valid); undefined when there is none. */
  apiKey(provider: string): string | undefined;
  /** Providers with an OAuth login, and the login. */
  oauth: Map<string, OAuthLogin>;
  providers(): string[];
  warnings: string[];
}

export function loadAuthFile(agentDir: string): AuthFile {
  const file = join(agentDir, "auth.json");
  const warnings: string[] = [];
  const keys = new Map<string, string>();
  const oauth = new Map<string, OAuthLogin>();
  if (existsSync(file)) {
    try {
      const data: unknown = JSON.parse(readFileSync(file, "utf8"));
      if (data === null || typeof data !== "object" || Array.isArray(data)) throw new Error("not a JSON object");
      for (const [provider, entry] of Object.entries(data as Record<string, unknown>)) {
        const e = entry as { type?: unknown; key?: unknown } | null;
        if (e && e.type === "api_key" && typeof e.key === "string") keys.set(provider, e.key);
        else if (e && e.type === "oauth") {
          const login = entry as Partial<OAuthLogin>;
          if (typeof login.access !== "string" || typeof login.expires !== "number") {
            warnings.push(`${file}: the OAuth login of "${provider}" has no access token or expiry; ignored`);
            continue;
          }
          oauth.set(provider, login as OAuthLogin);
          if (login.expires <= Date.now()) {
            warnings.push(
              `${file}: the OAuth login of "${provider}" expired at ${new Date(login.expires).toISOString()}; run pi once to refresh it (parley does not write pi's auth.json)`,
            );
          }
        }
      }
    } catch (error) {
      warnings.push(`${file}: ${error instanceof Error ? error.message : String(error)}; ignored`);
    }
  }
  return {
    apiKey: (provider) => {
      const raw = keys.get(provider);
      if (raw !== undefined) return resolveConfigValue(raw);
      const login = oauth.get(provider);
      return login && login.expires > Date.now() ? login.access : undefined;
    },
    oauth,
    providers: () => [...new Set([...keys.keys(), ...oauth.keys()])],
    warnings,
  };
}
