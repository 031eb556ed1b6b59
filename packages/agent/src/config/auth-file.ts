/**
 * pi's `<agent dir>/auth.json`: `{ "<provider>": { "type": "api_key", "key": "…" } }`. A key is
 * resolved as pi resolves it (`!command`, an environment variable's name, or the key itself).
 * OAuth entries need pi's login flows, which RPC mode cannot run: they are reported, not used.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveConfigValue } from "./config-value.js";

export interface AuthFile {
  /** The key stored for a provider, resolved; undefined when there is none. */
  apiKey(provider: string): string | undefined;
  providers(): string[];
  warnings: string[];
}

export function loadAuthFile(agentDir: string): AuthFile {
  const file = join(agentDir, "auth.json");
  const warnings: string[] = [];
  const keys = new Map<string, string>();
  if (existsSync(file)) {
    try {
      const data: unknown = JSON.parse(readFileSync(file, "utf8"));
      if (data === null || typeof data !== "object" || Array.isArray(data)) throw new Error("not a JSON object");
      for (const [provider, entry] of Object.entries(data as Record<string, unknown>)) {
        const e = entry as { type?: unknown; key?: unknown } | null;
        if (e && e.type === "api_key" && typeof e.key === "string") keys.set(provider, e.key);
        else if (e && e.type === "oauth") warnings.push(`${file}: "${provider}" holds an OAuth login, which parley cannot use; set an API key for it instead`);
      }
    } catch (error) {
      warnings.push(`${file}: ${error instanceof Error ? error.message : String(error)}; ignored`);
    }
  }
  return {
    apiKey: (provider) => {
      const raw = keys.get(provider);
      return raw === undefined ? undefined : resolveConfigValue(raw);
    },
    providers: () => [...keys.keys()],
    warnings,
  };
}
