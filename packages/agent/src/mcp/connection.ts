/**
 * One MCP server's connection, made with pi-mcp's client: a stdio server parley starts (in a
 * process group of its own, tracked so it never outlives parley) or a Streamable HTTP server.
 * It connects in the background, lists the server's tools, follows `tools/list_changed`, and
 * reconnects lazily when a call finds the connection gone. HTTP connects are retried after a
 * transient failure (network, 408, 429, 5xx); tool calls never are, since they may have run.
 *
 * An HTTP server without an `Authorization` header or `auth.provider` signs in with OAuth as pi's
 * do: the tokens of pi's mcp-auth.json are sent and refreshed (mcp-oauth.ts); a server that needs
 * a sign-in is reported with the command that does it (`parley mcp login <server>`).
 */
import { basename, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import {
  type AuthProvider,
  type CallToolResult,
  JSON_RPC_ERROR_CODES,
  McpAuthRequiredError,
  McpClient,
  McpError,
  McpHttpError,
  type McpRequestOptions,
  McpSessionExpiredError,
  type McpTransport,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  StdioTransport,
  StreamableHttpTransport,
  type Tool,
} from "@earendil-works/pi-mcp";
import { McpOAuthAuthorizationRequiredError, type McpAuthProvider, type McpOAuthSettings, type OAuthChallenge } from "@earendil-works/pi-mcp/oauth";
import { trackChild } from "../child-processes.js";
import { expandTilde } from "../config/agent-dir.js";
import { errorMessage } from "../error-text.js";
import { guardedEnv } from "../child-watchdog.js";
import type { McpServerEntry } from "./config.js";
import { resolveMcpValues } from "./config-values.js";
import type { McpAuthStore } from "./mcp-auth-store.js";
import { createMcpOAuthProvider, type McpSignInPrompt, oauthSettingsOf, oauthUrlOf, signInMcpServer } from "./mcp-oauth.js";
import { signInCommand } from "./names.js";
import { listTools } from "./tool-list.js";

export type McpConnectionState = "connecting" | "connected" | "failed" | "disconnected" | "needs-auth" | "closed";

const DEFAULT_TIMEOUT_SECONDS = 60;
/** Lines on stdout that are not JSON-RPC, within one second, past which a server is cut off (a flood, not a stray log line). */
const GARBAGE_LINES_PER_SECOND = 200;
const STDERR_TAIL_CHARS = 2_000;
const CONNECT_RETRY_DELAYS_MS = [250, 1_000];

export interface McpConnectionOptions {
  entry: McpServerEntry;
  /** The session's folder: roots, and where a relative `cwd` starts. */
  cwd: string;
  clientName: string;
  clientVersion: string;
  /** `auth.provider`'s token: the provider's API key, read for every request. */
  providerToken: (provider: string) => Promise<string | undefined>;
  /** pi's mcp-auth.json, for servers that sign in with OAuth. */
  credentials: McpAuthStore;
  /** The server's `elicitation/create` (form mode), answered by the user; without it parley offers no elicitation. */
  elicit?: ((server: string, params: unknown, signal: AbortSignal) => Promise<unknown>) | undefined;
  /** The tool list arrived or changed. */
  onTools: (connection: McpServerConnection) => void;
  /** The state changed. */
  onChange: (connection: McpServerConnection) => void;
}

const tail = (text: string): string => (text.length > STDERR_TAIL_CHARS ? `…${text.slice(-STDERR_TAIL_CHARS)}` : text);

function isTransient(error: unknown): boolean {
  if (error instanceof McpHttpError) return error.status === 408 || error.status === 429 || (error.status >= 500 && error.status !== 501);
  return error instanceof TypeError; // fetch's network failures
}

/**
 * A connection for a one-shot `parley mcp` command: no session around it, nothing listened to,
 * and no provider keys read (a server with `auth.provider` reports that it needs its key).
 */
export function commandConnection(entry: McpServerEntry, cwd: string, version: string, credentials: McpAuthStore): McpServerConnection {
  return new McpServerConnection({
    entry,
    cwd,
    clientName: "parley",
    clientVersion: version,
    providerToken: async () => undefined,
    credentials,
    onTools: () => {},
    onChange: () => {},
  });
}

export class McpServerConnection {
  state: McpConnectionState = "connecting";
  /** Why it failed or dropped, with the tail of a stdio server's stderr. */
  error: string | undefined;
  tools: Tool[] = [];
  /** Entries of the last tools/list left out as malformed, each named with why. */
  skippedTools: string[] = [];
  hasResources = false;
  /** The server's `initialize` instructions. */
  instructions: string | undefined;
  /** The server's last OAuth challenge: a sign-in uses its resource metadata URL and scope. */
  challenge: OAuthChallenge | undefined;
  readonly entry: McpServerEntry;
  /** The server's URL when it signs in with OAuth. */
  readonly oauthUrl: string | undefined;
  readonly #options: McpConnectionOptions;
  readonly #oauth: McpAuthProvider | undefined;
  #client: McpClient | undefined;
  #opening: Promise<McpClient> | undefined;
  /** Aborted by close(): cancels a connect under way and the wait between attempts. */
  readonly #shutdown = new AbortController();
  /** Why parley closed a client's connection itself (a message too big, a flood of garbage). */
  readonly #cutOff = new WeakMap<McpClient, string>();

  constructor(options: McpConnectionOptions) {
    this.entry = options.entry;
    this.#options = options;
    this.oauthUrl = oauthUrlOf(options.entry);
    this.#oauth =
      this.oauthUrl === undefined
        ? undefined
        : createMcpOAuthProvider({
            serverUrl: this.oauthUrl,
            store: options.credentials.forServer(options.entry.name, this.oauthUrl),
            settings: () => this.oauthSettings(),
            onChallenge: (challenge) => {
              this.challenge = challenge;
            },
          });
  }

  /** `oauth` of mcp.json for pi-mcp (its client secret resolved: this throws when it cannot be). */
  oauthSettings(): McpOAuthSettings {
    return oauthSettingsOf(this.entry);
  }

  get name(): string {
    return this.entry.name;
  }

  get timeoutMs(): number {
    return (this.entry.config.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
  }

  /** The connected client: the open one, or a new connection. */
  getClient(): Promise<McpClient> {
    if (this.#shutdown.signal.aborted) return Promise.reject(new Error(`MCP server "${this.name}" is shut down`));
    if (this.#client?.connectionState === "connected") return Promise.resolve(this.#client);
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  callTool(name: string, args: Record<string, unknown>, options: McpRequestOptions): Promise<CallToolResult> {
    return this.#withClient((client) => client.callTool(name, args, options), false);
  }

  readResource(uri: string, options: McpRequestOptions): Promise<ReadResourceResult> {
    return this.#withClient((client) => client.readResource(uri, options), true);
  }

  resourcesPage(cursor: string | undefined, options: McpRequestOptions): Promise<ListResourcesResult> {
    return this.#withClient((client) => client.listResourcesPage(cursor, options), true);
  }

  resourceTemplatesPage(cursor: string | undefined, options: McpRequestOptions): Promise<ListResourceTemplatesResult> {
    return this.#withClient((client) => withoutTemplates(() => client.listResourceTemplatesPage(cursor, options), { resourceTemplates: [] }), true);
  }

  allResources(options: McpRequestOptions): Promise<Resource[]> {
    return this.#withClient((client) => client.listResources(options), true);
  }

  allResourceTemplates(options: McpRequestOptions): Promise<ResourceTemplate[]> {
    return this.#withClient((client) => withoutTemplates(() => client.listResourceTemplates(options), []), true);
  }

  /**
   * Signs in to an OAuth server (`oauthUrl` set), the tokens saved in pi's mcp-auth.json; the
   * challenge it answered is spent. The caller reconnects to use the new tokens.
   */
  async signIn(prompt: McpSignInPrompt, signal: AbortSignal): Promise<void> {
    const url = this.oauthUrl;
    if (url === undefined) throw new Error(`MCP server "${this.name}" does not use OAuth`);
    await signInMcpServer({
      serverUrl: url,
      store: this.#options.credentials.forServer(this.name, url),
      settings: this.oauthSettings(),
      challenge: this.challenge,
      prompt,
      signal,
    });
    this.challenge = undefined;
  }

  /** Drops the connection and connects again. */
  async reconnect(): Promise<void> {
    await this.#opening?.catch(() => undefined);
    await this.#drop();
    await this.getClient();
  }

  /** Disconnects after its stored credentials were removed: the server needs a sign-in. */
  async signedOut(): Promise<void> {
    await this.#opening?.catch(() => undefined);
    await this.#drop();
    if (!this.#shutdown.signal.aborted) this.#needsAuth();
  }

  /**
   * Resolves once no transport of this server is open, a stdio server's process ended, and no
   * token refresh is under way (a refresh the server answered rotated the refresh token: its
   * answer is saved before parley exits).
   */
  async close(): Promise<void> {
    this.#shutdown.abort();
    this.state = "closed";
    this.#options.onChange(this);
    await Promise.all([this.#drop(), this.#opening?.catch(() => undefined)]);
    await this.#oauth?.settled();
  }

  /** A read-only request is retried once after a transient HTTP error; an expired HTTP session reconnects once. */
  async #withClient<T>(run: (client: McpClient) => Promise<T>, readOnly: boolean): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.getClient();
      try {
        return await run(client);
      } catch (error) {
        const cut = this.#cutOff.get(client);
        if (cut !== undefined) throw new Error(`MCP server "${this.name}": ${cut}`);
        if (attempt === 1 && readOnly && error instanceof McpHttpError && isTransient(error)) {
          await this.#pause(CONNECT_RETRY_DELAYS_MS[0] ?? 250);
          continue;
        }
        if (attempt === 1 && error instanceof McpSessionExpiredError) {
          if (this.#client === client) this.#client = undefined;
          continue;
        }
        if (needsSignIn(error)) {
          await this.#drop();
          this.#needsAuth();
          throw new Error(this.error);
        }
        throw error;
      }
    }
  }

  /**
   * A wait between attempts, cut short by close(). It keeps the process alive: in `parley mcp
   * list|login` nothing else may, and an unreferenced wait let the process end silently, status 0.
   */
  #pause(ms: number): Promise<void> {
    return sleep(ms, undefined, { signal: this.#shutdown.signal }).catch(() => undefined);
  }

  async #drop(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    await client?.close().catch(() => undefined);
  }

  #needsAuth(): void {
    const config = this.entry.config;
    this.state = "needs-auth";
    this.error =
      config.kind === "http" && config.auth
        ? `MCP server "${this.name}" rejected the credentials of provider "${config.auth.provider}"`
        : this.oauthUrl !== undefined
          ? `MCP server "${this.name}" requires sign-in. Run "${signInCommand(this.name)}" to sign in.`
          : `MCP server "${this.name}" rejected its Authorization header`;
    this.#options.onChange(this);
  }

  async #open(): Promise<McpClient> {
    this.state = "connecting";
    this.#options.onChange(this);
    const retries = this.entry.config.kind === "http" ? CONNECT_RETRY_DELAYS_MS : [];
    for (let attempt = 0; ; attempt++) {
      let stderr: (() => string) | undefined;
      try {
        return await this.#connectOnce((read) => {
          stderr = read;
        });
      } catch (error) {
        const delay = retries[attempt];
        if (!this.#shutdown.signal.aborted && delay !== undefined && isTransient(error)) {
          await this.#pause(delay);
          if (!this.#shutdown.signal.aborted) continue;
        }
        if (needsSignIn(error) && !this.#shutdown.signal.aborted) {
          this.#needsAuth();
          throw new Error(this.error);
        }
        const output = stderr?.().trim();
        this.state = this.#shutdown.signal.aborted ? "closed" : "failed";
        this.error = output ? `${errorMessage(error)}\n${tail(output)}` : errorMessage(error);
        this.#options.onChange(this);
        throw new Error(`MCP server "${this.name}" failed to connect: ${this.error}`);
      }
    }
  }

  #transport(onStderr: (read: () => string) => void): McpTransport {
    const { config, name } = this.entry;
    if (config.kind === "http") {
      const provider = config.auth?.provider;
      const authProvider: AuthProvider | undefined = provider ? { token: () => this.#options.providerToken(provider) } : this.#oauth;
      return new StreamableHttpTransport({
        url: config.url,
        headers: resolveMcpValues(config.headers, (key) => `MCP server "${name}" header "${key}"`),
        ...(authProvider ? { authProvider } : {}),
      });
    }
    const env = resolveMcpValues(config.env, (key) => `MCP server "${name}" env "${key}"`);
    const transport = new StdioTransport({
      command: expandTilde(config.command),
      args: (config.args ?? []).map((arg) => expandTilde(arg)),
      cwd: resolve(this.#options.cwd, expandTilde(config.cwd ?? ".")),
      // The child tag lets parley's watchdog end the server should parley die without cleaning up.
      env: { ...stringEnv(guardedEnv()), ...env },
      stderr: "pipe",
    });
    onStderr(() => transport.stderr);
    return transport;
  }

  async #connectOnce(onStderr: (read: () => string) => void): Promise<McpClient> {
    const client = new McpClient({
      name: this.#options.clientName,
      version: this.#options.clientVersion,
      requestTimeoutMs: this.timeoutMs,
      roots: [{ uri: pathToFileURL(this.#options.cwd).href, name: basename(this.#options.cwd) }],
      ...(this.#options.elicit ? { capabilities: { elicitation: { form: {} } } } : {}),
    });
    const elicit = this.#options.elicit;
    if (elicit) client.setRequestHandler("elicitation/create", (params, { signal }) => elicit(this.name, params, signal));
    const closeOnShutdown = () => void client.close().catch(() => undefined);
    this.#shutdown.signal.addEventListener("abort", closeOnShutdown, { once: true });
    try {
      const transport = this.#transport(onStderr);
      this.#watchOutput(client, transport);
      await client.connect(transport);
      if (transport instanceof StdioTransport) {
        const tracked = trackChild(transport.pid, { group: true });
        client.onClose(() => tracked.dispose());
      }
      client.onNotification("notifications/tools/list_changed", () => void this.#refreshTools(client));
      client.onClose(() => this.#dropped(client, transport));
      const listed = client.serverCapabilities?.tools ? await listTools(client) : { tools: [], skipped: [] };
      if (this.#shutdown.signal.aborted) throw new Error("shut down while connecting");
      if (client.connectionState !== "connected") throw new Error(this.#cutOff.get(client) ?? "connection closed during setup");
      this.#client = client;
      this.tools = listed.tools;
      this.skippedTools = listed.skipped;
      this.hasResources = client.serverCapabilities?.resources !== undefined;
      this.instructions = client.instructions?.trim() || undefined;
      this.state = "connected";
      this.error = undefined;
      this.#options.onTools(this);
      this.#options.onChange(this);
      return client;
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    } finally {
      this.#shutdown.signal.removeEventListener("abort", closeOnShutdown);
    }
  }

  /**
   * What a server sends that pi-mcp can only report, not act on: a message over the stdio limit
   * (16 MB; the request it answered would wait out its whole timeout), or a flood of lines that
   * are not JSON-RPC (parsed one by one until the timeout). Either cuts the server off at once:
   * its process is ended, and the calls waiting on it fail saying why.
   */
  #watchOutput(client: McpClient, transport: McpTransport): void {
    let windowStart = 0;
    let garbage = 0;
    client.onError((error) => {
      if (this.#cutOff.has(client)) return;
      const message = errorMessage(error);
      if (/exceeds \d+ bytes/.test(message)) {
        this.#cut(client, transport, `it sent a message larger than MCP's stdio limit of 16 MB (${message}); parley closed the connection`);
        return;
      }
      const now = Date.now();
      if (now - windowStart > 1_000) {
        windowStart = now;
        garbage = 0;
      }
      if (++garbage > GARBAGE_LINES_PER_SECOND)
        this.#cut(
          client,
          transport,
          `it flooded its stdout with output that is not JSON-RPC (over ${GARBAGE_LINES_PER_SECOND} bad lines a second; the last: ${message}); parley closed the connection`,
        );
    });
  }

  #cut(client: McpClient, transport: McpTransport, reason: string): void {
    this.#cutOff.set(client, reason);
    // Ended at once: a flooding server may not read its stdin, and closing would wait for it.
    if (transport instanceof StdioTransport && transport.pid !== undefined) {
      try {
        process.kill(-transport.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    void client.close().catch(() => undefined);
  }

  /** The transport dropped: the next call reconnects; until then the state says why. */
  #dropped(client: McpClient, transport: McpTransport): void {
    if (this.#client !== client || this.#shutdown.signal.aborted) return;
    this.#client = undefined;
    this.state = "disconnected";
    const stderr = transport instanceof StdioTransport ? transport.stderr.trim() : "";
    const why = this.#cutOff.get(client) ?? "Connection closed";
    this.error = stderr ? `${why}\n${tail(stderr)}` : why;
    this.#options.onChange(this);
  }

  async #refreshTools(client: McpClient): Promise<void> {
    try {
      const listed = await listTools(client);
      if (this.#client !== client || this.#shutdown.signal.aborted) return;
      this.tools = listed.tools;
      this.skippedTools = listed.skipped;
      this.#options.onTools(this);
    } catch (error) {
      this.error = `Failed to refresh tools: ${errorMessage(error)}`;
    }
    this.#options.onChange(this);
  }
}

/** The server turned the request away for want of (valid) credentials. */
const needsSignIn = (error: unknown): boolean => error instanceof McpOAuthAuthorizationRequiredError || error instanceof McpAuthRequiredError;

/** Servers without `resources/templates/list` have no templates. */
async function withoutTemplates<T>(list: () => Promise<T>, empty: T): Promise<T> {
  try {
    return await list();
  } catch (error) {
    if (error instanceof McpError && error.code === JSON_RPC_ERROR_CODES.methodNotFound) return empty;
    throw error;
  }
}

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  return out;
}
