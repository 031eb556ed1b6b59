/**
 * pi's `<agent dir>/mcp-auth.json`: each OAuth-protected MCP server's state (registered client,
 * tokens and their expiry, a pending sign-in's PKCE verifier), keyed `<namespace>|<url>` as pi 1.6
 * keys it (an older pi's key, the URL alone, is taken over by the first server to load it).
 * Every read and write holds pi's lock on the file and a write replaces it whole (pi-file-lock.ts),
 * and a refresh holds pi's per-server refresh lock (`mcp-auth-refresh-<hash>`) from reading the
 * tokens to saving new ones, so a pi and a parley never both spend one refresh token.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mcpNamespace } from "@earendil-works/pi-mcp";
import { McpRefreshLockBusyError, type McpOAuthServerStore, type McpOAuthState, type OAuthTokens } from "@earendil-works/pi-mcp/oauth";
import { ensurePiFile, holdPiLock, MCP_AUTH_LOCK, MCP_REFRESH_LOCK, replacePiFile, withPiFileLock } from "../config/pi-file-lock.js";

type States = Record<string, McpOAuthState>;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** pi's reading: an empty file is `{}`, and so is any JSON that is not an object; bad JSON fails. */
function parseStates(content: string): States {
  const text = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content;
  if (!text.trim()) return {};
  const parsed: unknown = JSON.parse(text);
  // The values are pi-mcp's own state records, stored as it gave them.
  return isRecord(parsed) ? (parsed as States) : {};
}

const serialize = (states: States): string => `${JSON.stringify(states, null, 2)}\n`;

/** The key pi 1.6 stores a server under, and the URL-only key of older versions. */
function storeKeys(name: string, serverUrl: string): { key: string; legacyKey: string } {
  const legacyKey = String(new URL(serverUrl));
  return { key: `${mcpNamespace(name)}|${legacyKey}`, legacyKey };
}

export const mcpAuthFile = (agentDir: string): string => join(agentDir, "mcp-auth.json");

export class McpAuthStore {
  readonly file: string;

  constructor(readonly agentDir: string) {
    this.file = mcpAuthFile(agentDir);
  }

  /** Runs `fn` on the states under pi's lock; a returned `next` replaces the file. */
  async #withLock<T>(fn: (states: States) => { result: T; next?: States }): Promise<T> {
    ensurePiFile(this.file, "{}", 0o600, 0o700);
    return withPiFileLock(this.file, MCP_AUTH_LOCK, async (held) => {
      const { result, next } = fn(parseStates(readFileSync(this.file, "utf8")));
      if (next !== undefined) {
        held();
        await replacePiFile(this.file, serialize(next), 0o600);
      }
      return result;
    });
  }

  /** One server's state store for pi-mcp's sign-in and auth provider. */
  forServer(name: string, serverUrl: string): McpOAuthServerStore {
    const { key, legacyKey } = storeKeys(name, serverUrl);
    return {
      load: () =>
        this.#withLock((states) => {
          const own = states[key];
          const legacy = states[legacyKey];
          if (own || !legacy) return { result: own };
          const { [legacyKey]: _taken, ...rest } = states;
          return { result: legacy, next: { ...rest, [key]: legacy } };
        }),
      save: (state) => this.#withLock((states) => ({ result: undefined, next: { ...states, [key]: state } })),
      withRefreshLock: (fn) => this.#withRefreshLock(key, fn),
    };
  }

  /** The stored tokens of a server (an older pi's entry too), without taking anything over. */
  async tokens(name: string, serverUrl: string): Promise<OAuthTokens | undefined> {
    const { key, legacyKey } = storeKeys(name, serverUrl);
    return this.#withLock((states) => ({ result: (states[key] ?? states[legacyKey])?.tokens }));
  }

  /** Deletes a server's state (its own, else an older pi's it would take over); whether there was one. */
  remove(name: string, serverUrl: string): Promise<boolean> {
    const { key, legacyKey } = storeKeys(name, serverUrl);
    return this.#withLock((states) => {
      const stored = key in states ? key : legacyKey in states ? legacyKey : undefined;
      if (stored === undefined) return { result: false };
      const { [stored]: _removed, ...rest } = states;
      return { result: true, next: rest };
    });
  }

  async #withRefreshLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const hash = createHash("sha256").update(key).digest("hex").slice(0, 16);
    // Held by another process for the whole wait: pi-mcp then skips the refresh (sign-in goes to the browser).
    return holdPiLock(join(this.agentDir, `mcp-auth-refresh-${hash}`), MCP_REFRESH_LOCK, fn, {
      dirMode: 0o700,
      busy: () => new McpRefreshLockBusyError(),
    });
  }
}
