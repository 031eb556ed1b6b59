/**
 * pi's `<agent dir>/auth.json`: `{ "<provider>": { "type": "api_key", "key": "…", "env"?: {…} } }`.
 * A key is read as pi 1.6 reads it (config-value.ts `resolveAuthKey`: `$VAR`/`${VAR}` templates,
 * `!command`, else the text itself), the one reading every mode and `parley auth` share.
 * OAuth logins (`{ "type": "oauth", "access", "refresh", "expires" }`, written by `pi auth login`,
 * /login or `parley auth login`) are used as pi uses them: before a request, `freshAuth` refreshes
 * a token that is about to expire and saves the new one under pi's lock (oauth-tokens.ts,
 * auth-store.ts); the sync `apiKey` gives the latest token known, for the checks that only ask
 * whether a provider has credentials.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveAuthKey } from "./config-value.js";
import type { RequestAuth } from "./oauth-tokens.js";

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
  /**
   * The resolved auth (key, headers, base URL) of a provider's OAuth login for a request, refreshed and
   * saved first when it is about to expire, as pi 1.6 sends a request with it; undefined (not a
   * promise) when the provider has no OAuth login.
   */
  freshAuth(provider: string): Promise<RequestAuth | undefined> | undefined;
  /** Providers with an OAuth login, and the login. */
  oauth: Map<string, OAuthLogin>;
  providers(): string[];
  warnings: string[];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export function loadAuthFile(agentDir: string): AuthFile {
  const file = join(agentDir, "auth.json");
  const warnings: string[] = [];
  const keys = new Map<string, { key: string; env?: Record<string, unknown> }>();
  const oauth = new Map<string, OAuthLogin>();
  if (existsSync(file)) {
    try {
      const data: unknown = JSON.parse(readFileSync(file, "utf8"));
      if (data === null || typeof data !== "object" || Array.isArray(data)) throw new Error("not a JSON object");
      for (const [provider, entry] of Object.entries(data as Record<string, unknown>)) {
        const e = entry as { type?: unknown; key?: unknown; env?: unknown } | null;
        if (e && e.type === "api_key" && typeof e.key === "string") {
          const env = isRecord(e.env) ? e.env : undefined;
          keys.set(provider, env ? { key: e.key, env } : { key: e.key });
        } else if (e && e.type === "oauth") {
          const login = entry as Partial<OAuthLogin>;
          if (typeof login.access !== "string" || typeof login.expires !== "number") {
            warnings.push(`${file}: the OAuth login of "${provider}" has no access token or expiry; ignored`);
            continue;
          }
          oauth.set(provider, login as OAuthLogin);
        }
      }
    } catch (error) {
      warnings.push(`${file}: ${error instanceof Error ? error.message : String(error)}; ignored`);
    }
  }
  // The latest key of each OAuth login, as refreshed during the run.
  const latest = new Map<string, string>();
  return {
    apiKey: (provider) => {
      const stored = keys.get(provider);
      if (stored !== undefined) return resolveAuthKey(stored.key, stored.env);
      return latest.get(provider) ?? oauth.get(provider)?.access;
    },
    freshAuth: (provider) => {
      if (keys.has(provider) || !oauth.has(provider)) return undefined;
      return (async () => {
        const [{ AuthFileStore }, { oauthAuth }] = await Promise.all([import("./auth-store.js"), import("./oauth-tokens.js")]);
        const auth = await oauthAuth(new AuthFileStore(file), provider);
        if (auth?.apiKey !== undefined) latest.set(provider, auth.apiKey);
        const apiKey = auth?.apiKey ?? latest.get(provider) ?? oauth.get(provider)?.access;
        return { ...auth, ...(apiKey !== undefined ? { apiKey } : {}) };
      })();
    },
    oauth,
    providers: () => [...new Set([...keys.keys(), ...oauth.keys()])],
    warnings,
  };
}
