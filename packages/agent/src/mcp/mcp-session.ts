/**
 * The MCP integration of one extension load (mcp-extension.ts loads this module only when there
 * is a server to connect, so a run without MCP never loads the MCP client): the servers of
 * `mcp.json` (the user's, and a trusted project's) and those registered with
 * `pi.registerMcpServer()` connect in the background when a session starts; their tools are
 * registered as `mcp__<server>__<tool>` with the server's exposure; resources are reached through
 * the resource tools. The first prompt waits (10 s at most) only for servers with `direct` tools;
 * a call waits for the server it needs. Problems (bad entries, failed connections) are told once
 * with a `notify`. `/mcp` prints the servers' state; `/mcp reconnect [server]` reconnects;
 * `/mcp login|logout [server]` sign in to an OAuth server (pi's mcp-auth.json) and out. A server
 * waiting for a sign-in done elsewhere (`parley mcp login`, pi's) reconnects at the next prompt.
 *
 * Tools of `codemode` servers are called from codemode scripts (builtin:codemode), `deferred` ones
 * loaded with `tool_search`. The session never writes `mcp.json`.
 */
import { createMcpToolName, mcpNamespace, mcpServerSummary } from "@earendil-works/pi-mcp";
import { McpSignInCancelledError } from "@earendil-works/pi-mcp/oauth";
import { errorMessage } from "../error-text.js";
import type { BeforeAgentStartEvent, ExtensionAPI, ExtensionContext, ToolCallEvent } from "../extensions/types.js";
import type { ToolDefinition } from "../tools/types.js";
import { configuredExposures, type LoadedMcpConfig, loadMcpConfig, type McpServerEntry, toolExposureOf, validateMcpServer } from "./config.js";
import { McpServerConnection } from "./connection.js";
import { McpAuthStore } from "./mcp-auth-store.js";
import { noServersConfigured, RESOURCE_TOOL_NAMES, signInCommand, TOOL_SEARCH_TOOL_NAME } from "./names.js";
import { resourceToolDefinitions } from "./resource-tools.js";
import { mcpToolDefinition, type ToolExposure, toToolExposure } from "./server-tools.js";

const CODEMODE_TOOL_NAME = "codemode";
const DEFAULT_STARTUP_WAIT_MS = 10_000;
const SECTION_TITLE = "MCP servers whose tools are not declared to you.";
const MAX_SUMMARY_CHARS = 250;
const USAGE = "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]";

export interface McpOptions {
  /** Where the user's mcp.json is. */
  agentDir: string;
  clientVersion: string;
  /** How long the first prompt waits for servers with direct tools. */
  startupWaitMs?: number;
}

/** What mcp-extension.ts hands each event to. */
export interface McpSession {
  sessionStart(ctx: ExtensionContext): void;
  beforeAgentStart(event: BeforeAgentStartEvent, ctx: ExtensionContext): Promise<{ systemPrompt: string } | undefined>;
  toolCall(event: ToolCallEvent, ctx: ExtensionContext): Promise<void>;
  serversChanged(ctx: ExtensionContext): Promise<void>;
  sessionShutdown(): Promise<void>;
  command(args: string, ctx: ExtensionContext): Promise<void>;
}

interface Server {
  entry: McpServerEntry;
  connection?: McpServerConnection;
  /** Settles when the latest connection attempt has. */
  ready?: Promise<void>;
  /** A registration's config as registered, to see it change. */
  registered?: string;
}

const isEnabled = (server: Server): boolean => server.entry.config.enabled !== false;
const exposureOf = (entry: McpServerEntry) => entry.config.exposure ?? "codemode";
const firstLine = (text: string): string => text.split("\n", 1)[0] ?? "";

function describeState(server: Server): string {
  if (!isEnabled(server)) return "disabled";
  const connection = server.connection;
  if (!connection) return "starting";
  switch (connection.state) {
    case "connected":
      return `connected, ${connection.tools.length} tool${connection.tools.length === 1 ? "" : "s"}${connection.hasResources ? ", resources" : ""}`;
    case "disconnected":
      return "disconnected, reconnects on the next call";
    case "needs-auth":
      return "needs sign-in";
    default:
      return connection.state;
  }
}

export function createMcpSession(pi: ExtensionAPI, options: McpOptions): McpSession {
  let servers: Server[] = [];
  let loaded: LoadedMcpConfig = { servers: [], errors: [] };
  let registrationErrors: string[] = [];
  let overridden: string[] = [];
  let warnedUnreachable = false;
  let waitedForStartup = false;
  let cwd = process.cwd();
  let context: ExtensionContext | undefined;
  /** The session's lifetime: aborted on session_shutdown, so late results are dropped. */
  let session = new AbortController();
  session.abort();
  let startup: Promise<void> | undefined;
  /** Tool name → `<server>\0<tool>`, so names stay unique and stable. */
  const toolOwners = new Map<string, string>();
  const serverTools = new Map<string, Set<string>>();
  const definitions = new Map<string, ToolDefinition>();
  let resourceExposure: ToolExposure | undefined;

  const credentials = new McpAuthStore(options.agentDir);
  /**
   * The stored tokens of each server waiting for a sign-in, as they were when it began waiting: a
   * `parley mcp login` (or pi's) in another process changes them, and the next prompt reconnects.
   */
  const tokensAtSignIn = new Map<McpServerConnection, Promise<string>>();
  const storedTokens = async (connection: McpServerConnection): Promise<string> => {
    const url = connection.oauthUrl;
    if (url === undefined) return "null";
    return JSON.stringify((await credentials.tokens(connection.name, url).catch(() => undefined)) ?? null);
  };
  const watchSignIn = (connection: McpServerConnection): void => {
    if (connection.state !== "needs-auth") tokensAtSignIn.delete(connection);
    else if (!tokensAtSignIn.has(connection)) tokensAtSignIn.set(connection, storedTokens(connection));
  };
  const reconnectSignedIn = async (): Promise<void> => {
    const changed = await Promise.all(
      [...tokensAtSignIn].map(async ([connection, before]) => ((await storedTokens(connection)) !== (await before) ? connection : undefined)),
    );
    await Promise.all(
      changed.flatMap((connection) => {
        const server = connection ? servers.find((candidate) => candidate.connection === connection) : undefined;
        if (!connection || !server) return [];
        tokensAtSignIn.delete(connection);
        const ready = connection.reconnect().catch(() => undefined);
        server.ready = ready;
        return [ready];
      }),
    );
  };

  const register = (definition: ToolDefinition): void => pi.registerTool({ ...definition });
  const findServer = (name: string) => servers.find((server) => server.entry.name === name);

  /** Registered servers, except those mcp.json defines (a file wins), each checked as mcp.json's entries are. */
  const registeredServers = (): Server[] => {
    const out: Server[] = [];
    overridden = [];
    registrationErrors = [];
    for (const { name, config, extensionPath } of pi.getMcpServers()) {
      const configured = loaded.servers.find((entry) => mcpNamespace(entry.name) === mcpNamespace(name));
      if (configured) {
        overridden.push(`"${name}" registered by ${extensionPath} is overridden by "${configured.name}" in ${configured.source}`);
        continue;
      }
      const checked = validateMcpServer(name, config);
      if (typeof checked === "string") {
        registrationErrors.push(`${extensionPath}: ${checked}`);
        continue;
      }
      out.push({ entry: { name, config: checked, source: extensionPath, scope: "extension" }, registered: JSON.stringify(config) });
    }
    return out;
  };

  const resourceServers = (): Server[] =>
    servers.filter((server) => server.connection?.hasResources && isEnabled(server) && exposureOf(server.entry) !== "hidden");

  /** The resource tools take the widest exposure of the servers they reach; hidden when none has resources. */
  const syncResourceTools = (): void => {
    const exposures = new Set(resourceServers().map((server) => toToolExposure(exposureOf(server.entry))));
    const next: ToolExposure = exposures.has("direct") ? "direct" : exposures.has("deferred") ? "deferred" : "hidden";
    if (next === resourceExposure || (resourceExposure === undefined && next === "hidden")) return;
    const wasDirect = resourceExposure === "direct";
    resourceExposure = next;
    const tools = resourceToolDefinitions(next, () => resourceServers().flatMap((server) => (server.connection ? [server.connection] : [])));
    for (const tool of tools) register(tool);
    if (wasDirect) pi.setActiveTools(pi.getActiveTools().filter((name) => !RESOURCE_TOOL_NAMES.has(name)));
  };

  const registerTools = (connection: McpServerConnection): void => {
    const server = connection.name;
    const entry = findServer(server)?.entry ?? connection.entry;
    const description = entry.config.description?.trim();
    const namespace = {
      name: mcpNamespace(server),
      aliases: [server],
      ...(description ? { description } : {}),
      ...(connection.instructions ? { instructions: connection.instructions } : {}),
    };
    const previous = serverTools.get(server) ?? new Set<string>();
    const current = new Set<string>();
    // Every tool whose name sanitizes to a shared name gets the hash suffix, whatever the list's order.
    const plain = [...new Set(connection.tools.map((tool) => tool.name))].map((tool) => createMcpToolName(server, tool));
    for (const tool of connection.tools) {
      const owner = `${server}\0${tool.name}`;
      const name = createMcpToolName(server, tool.name, (candidate) => {
        const existing = toolOwners.get(candidate);
        return (existing !== undefined && existing !== owner) || current.has(candidate) || plain.indexOf(candidate) !== plain.lastIndexOf(candidate);
      });
      toolOwners.set(name, owner);
      current.add(name);
      const definition = mcpToolDefinition({
        server,
        tool,
        name,
        exposure: toolExposureOf(entry.config, tool.name),
        namespace,
        connection: () => {
          const now = findServer(server);
          if (!now || !isEnabled(now)) throw new Error(`MCP server "${server}" is disabled.`);
          if (!now.connection) throw new Error(`MCP server "${server}" is still starting.`);
          if (now.connection.state === "connected" && !now.connection.tools.some((offered) => offered.name === tool.name)) {
            throw new Error(`MCP tool "${server}/${tool.name}" is no longer available.`);
          }
          return now.connection;
        },
        readableResources: () => resourceServers().some((candidate) => candidate.entry.name === server),
      });
      definitions.set(name, definition);
      register(definition);
    }
    serverTools.set(server, current);
    // Tools cannot be unregistered: the ones the server withdrew become hidden.
    for (const name of previous) {
      const definition = definitions.get(name);
      if (!current.has(name) && definition) register({ ...definition, exposure: "hidden" });
    }
    syncResourceTools();
  };

  const hideTools = (server: string): void => {
    for (const name of serverTools.get(server) ?? []) {
      const definition = definitions.get(name);
      if (definition) register({ ...definition, exposure: "hidden" });
    }
    serverTools.set(server, new Set());
    syncResourceTools();
  };

  /**
   * Tools that are not declared are reached through codemode (builtin:codemode, or an extension's
   * with `reachesTools`) or tool_search, whichever the servers' exposure asks for and exists (codemode
   * unless `autoEnableCodemode` is false); told once when neither is active.
   */
  const ensureDiscoveryActive = (ctx: ExtensionContext): void => {
    const exposures = new Set<string>();
    for (const server of servers) if (isEnabled(server)) for (const exposure of configuredExposures(server.entry.config)) exposures.add(exposure);
    const needsCodemode = exposures.has("codemode");
    const needsSearch = exposures.has("deferred");
    if (!needsCodemode && !needsSearch) return;
    const tools = pi.getAllTools();
    const reaching = (name: string) => tools.some((tool) => tool.name === name && tool.reachesTools !== undefined);
    const hasCodemode = reaching(CODEMODE_TOOL_NAME);
    const hasSearch = reaching(TOOL_SEARCH_TOOL_NAME);
    const autoEnable = loaded.autoEnableCodemode !== false;
    const active = pi.getActiveTools();
    const wanted: string[] = [];
    if (needsCodemode && hasCodemode && autoEnable) wanted.push(CODEMODE_TOOL_NAME);
    if (needsSearch && hasSearch) wanted.push(TOOL_SEARCH_TOOL_NAME);
    const activate = wanted.filter((name) => !active.includes(name));
    if (activate.length > 0) pi.setActiveTools([...active, ...activate]);
    const reachable = [...active, ...activate];
    if ((hasCodemode && reachable.includes(CODEMODE_TOOL_NAME)) || (hasSearch && reachable.includes(TOOL_SEARCH_TOOL_NAME))) return;
    if (warnedUnreachable) return;
    warnedUnreachable = true;
    const reason = needsCodemode && hasCodemode && !autoEnable ? " (autoEnableCodemode is false)" : "";
    ctx.ui.notify(`MCP tools are only reachable from the codemode or tool_search tool, but neither is active${reason}; they cannot be called.`, "warning");
  };

  const connect = (server: Server): Promise<void> => {
    const { signal } = session;
    const connection = new McpServerConnection({
      entry: server.entry,
      cwd,
      clientName: "parley",
      clientVersion: options.clientVersion,
      providerToken: async (provider) => context?.modelRegistry.getApiKeyForProvider(provider),
      credentials,
      elicit: async (name, params, signal) => {
        if (!context?.hasUI) return { action: "decline" };
        const { elicitWithDialogs } = await import("./elicitation.js");
        return elicitWithDialogs(context.ui, name, params, signal);
      },
      onTools: (current) => {
        if (!signal.aborted && server.connection === current) registerTools(current);
      },
      onChange: watchSignIn,
    });
    server.connection = connection;
    const ready = connection.getClient().then(
      () => undefined,
      () => undefined,
    );
    server.ready = ready;
    return ready;
  };

  /** One notify for everything that needs the user; `only`: servers that connected later. */
  const reportProblems = (ctx: ExtensionContext, only?: Server[]): void => {
    const lines = only ? [] : [...loaded.errors, ...registrationErrors].map((error) => `config: ${error}`);
    for (const server of only ?? servers) {
      const state = server.connection?.state;
      if (state === "failed" || state === "needs-auth")
        lines.push(
          `${server.entry.name}: ${state === "failed" ? `failed: ${firstLine(server.connection?.error ?? "unknown error")}` : server.connection?.oauthUrl !== undefined ? `needs sign-in, run "${signInCommand(server.entry.name)}"` : "needs sign-in"}`,
        );
      const skipped = server.connection?.skippedTools ?? [];
      if (skipped.length > 0) lines.push(`${server.entry.name}: malformed tools/list entries skipped: ${skipped.join(", ")}`);
    }
    if (lines.length === 0) return;
    ctx.ui.notify(`MCP servers need attention:\n${lines.map((line) => `  ${line}`).join("\n")}\nRun /mcp for details.`, "warning");
  };

  const waitFor = async (waiting: Server[], signal: AbortSignal | undefined): Promise<void> => {
    const ready = waiting.flatMap((server) => (isEnabled(server) && server.ready ? [server.ready] : []));
    if (ready.length === 0 || signal?.aborted) return;
    await new Promise<void>((done) => {
      const finish = () => {
        signal?.removeEventListener("abort", finish);
        done();
      };
      signal?.addEventListener("abort", finish, { once: true });
      void Promise.all(ready).then(finish);
    });
  };

  const formatStatus = (): string => {
    if (servers.length === 0 && loaded.errors.length === 0 && registrationErrors.length === 0 && overridden.length === 0) {
      return noServersConfigured(options.agentDir);
    }
    const lines = servers.map((server) => {
      const connection = server.connection;
      const error = connection?.error && connection.state !== "connected" ? `\n    ${connection.error.split("\n").join("\n    ")}` : "";
      const skipped = connection?.skippedTools.length ? `\n    skipped (malformed): ${connection.skippedTools.join(", ")}` : "";
      return `${server.entry.name}: ${describeState(server)} (${exposureOf(server.entry)})${error}${skipped}`;
    });
    for (const error of [...loaded.errors, ...registrationErrors]) lines.push(`config error: ${error}`);
    for (const line of overridden) lines.push(`overridden: ${line}`);
    return lines.join("\n");
  };

  /** The `mcp_servers` section: servers whose tools are not declared, how they are reached, one line each. */
  const serversSection = (): string | undefined => {
    const listed = servers
      .filter((server) => isEnabled(server) && [...configuredExposures(server.entry.config)].some((e) => e === "codemode" || e === "deferred"))
      .sort((a, b) => a.entry.name.localeCompare(b.entry.name));
    if (listed.length === 0) return undefined;
    const tools = pi.getAllTools();
    const codemode = tools.some((tool) => tool.name === CODEMODE_TOOL_NAME && tool.reachesTools !== undefined);
    const lines = listed.map((server) => {
      const reach = codemode && configuredExposures(server.entry.config).has("codemode") ? "codemode" : TOOL_SEARCH_TOOL_NAME;
      let summary = mcpServerSummary(server.entry.config.description, server.connection?.instructions);
      if (summary.length > MAX_SUMMARY_CHARS) summary = `${summary.slice(0, MAX_SUMMARY_CHARS - 1).trimEnd()}…`;
      return `- ${mcpNamespace(server.entry.name)} (${reach})${summary ? `: ${summary}` : ""}`;
    });
    const how = codemode ? "Call their tools from codemode scripts, or load them with tool_search." : "Load their tools with tool_search.";
    return [`${SECTION_TITLE} ${how}`, ...lines].join("\n");
  };

  const sessionStart = (ctx: ExtensionContext): void => {
    context = ctx;
    cwd = ctx.cwd;
    loaded = loadMcpConfig({ agentDir: options.agentDir, cwd: ctx.cwd, projectTrusted: ctx.isProjectTrusted() });
    warnedUnreachable = false;
    waitedForStartup = false;
    session = new AbortController();
    const { signal } = session;
    servers = [...loaded.servers.map((entry): Server => ({ entry })), ...registeredServers()];
    ensureDiscoveryActive(ctx);
    const enabled = servers.filter(isEnabled);
    if (enabled.length === 0) {
      reportProblems(ctx);
      return;
    }
    startup = Promise.all(enabled.map(connect)).then(() => {
      if (!signal.aborted) reportProblems(ctx);
    });
  };

  // The first prompt waits for servers whose tools are declared, so its first request has them; not for ever.
  const beforeAgentStart = async (event: BeforeAgentStartEvent, ctx: ExtensionContext): Promise<{ systemPrompt: string } | undefined> => {
    if (tokensAtSignIn.size > 0) {
      await reconnectSignedIn();
      ensureDiscoveryActive(ctx);
    }
    if (!waitedForStartup) {
      waitedForStartup = true;
      const direct = servers.filter((server) => isEnabled(server) && configuredExposures(server.entry.config).has("direct"));
      if (direct.length > 0) {
        let timer: NodeJS.Timeout | undefined;
        const finished = await Promise.race([
          waitFor(direct, ctx.signal).then(() => true),
          new Promise<boolean>((done) => {
            timer = setTimeout(() => done(false), options.startupWaitMs ?? DEFAULT_STARTUP_WAIT_MS);
            timer.unref?.();
          }),
        ]);
        clearTimeout(timer);
        if (!finished) ctx.ui.notify("MCP servers are still connecting; their tools become available once connected.", "info");
      }
    }
    const section = serversSection();
    return section ? { systemPrompt: `${event.systemPrompt}\n\n${section}` } : undefined;
  };

  // A call waits for the server(s) it needs: a tool reaching others (tool_search) and the resource tools for all.
  const toolCall = async (event: ToolCallEvent, ctx: ExtensionContext): Promise<void> => {
    const enabled = servers.filter((server) => isEnabled(server) && server.ready);
    if (enabled.length === 0) return;
    const tool = pi.getAllTools().find((candidate) => candidate.name === event.toolName);
    if (!tool) return;
    const input = typeof event.input === "object" && event.input !== null ? { ...event.input } : {};
    const reach = tool.reachesTools?.(input);
    let waiting: Server[];
    if (reach !== undefined)
      waiting = reach === "all" ? enabled : enabled.filter((server) => reach.some((word) => word.includes(mcpNamespace(server.entry.name))));
    else if (RESOURCE_TOOL_NAMES.has(tool.name)) waiting = enabled;
    else {
      const owner = toolOwners.get(event.toolName)?.split("\0", 1)[0];
      waiting = enabled.filter((server) => server.entry.name === owner);
    }
    await waitFor(waiting, ctx.signal);
  };

  // Servers registered or removed during the session connect or disconnect at once.
  const serversChanged = async (ctx: ExtensionContext): Promise<void> => {
    const { signal } = session;
    if (signal.aborted) return;
    const next = new Map(registeredServers().map((server) => [server.entry.name, server]));
    const removed = servers.filter((server) => server.entry.scope === "extension" && next.get(server.entry.name)?.registered !== server.registered);
    servers = servers.filter((server) => !removed.includes(server));
    for (const server of removed) hideTools(server.entry.name);
    const added = [...next.values()].filter((server) => !findServer(server.entry.name));
    servers.push(...added);
    ensureDiscoveryActive(ctx);
    await Promise.all(removed.map((server) => server.connection?.close()));
    const connecting = added.filter(isEnabled);
    if (connecting.length === 0) return;
    await Promise.all(connecting.map(connect));
    if (signal.aborted) return;
    ensureDiscoveryActive(ctx);
    reportProblems(ctx, connecting);
  };

  const sessionShutdown = async (): Promise<void> => {
    session.abort();
    const closing = servers.flatMap((server) => (server.connection ? [server.connection.close()] : []));
    servers = [];
    await Promise.all(closing);
  };

  const command = async (args: string, ctx: ExtensionContext): Promise<void> => {
    const [action, name, ...extra] = args.trim().split(/\s+/).filter(Boolean);
    await startup;
    if (action === undefined) {
      ctx.ui.notify(formatStatus(), "info");
      return;
    }
    if (extra.length > 0) {
      ctx.ui.notify(USAGE, "warning");
      return;
    }
    if (action === "login" || action === "logout") {
      const oauthServers = servers.filter((candidate) => candidate.connection?.oauthUrl !== undefined);
      const server = name ? findServer(name) : oauthServers.length === 1 ? oauthServers[0] : undefined;
      if (!server?.connection?.oauthUrl) {
        ctx.ui.notify(
          name
            ? `MCP server "${name}" does not use OAuth.`
            : oauthServers.length === 0
              ? "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do."
              : `Name the server: /mcp ${action} <server> (${oauthServers.map((candidate) => candidate.entry.name).join(", ")}).`,
          "error",
        );
        return;
      }
      if (action === "logout") {
        const removed = await credentials.remove(server.entry.name, server.connection.oauthUrl);
        await server.connection.signedOut();
        ctx.ui.notify(removed ? `Signed out of MCP server "${server.entry.name}".` : `No stored credentials for MCP server "${server.entry.name}".`, "info");
        return;
      }
      await login(server, server.connection, ctx);
      return;
    }
    if (action !== "reconnect") {
      ctx.ui.notify(USAGE, "warning");
      return;
    }
    const candidates = servers.filter((server) => server.connection !== undefined && isEnabled(server));
    let server: Server | undefined;
    if (name) server = findServer(name);
    else if (candidates.length === 1) server = candidates[0];
    else {
      const failing = candidates.filter((candidate) => candidate.connection?.state === "failed" || candidate.connection?.state === "disconnected");
      server = failing.length === 1 ? failing[0] : undefined;
      if (!server && candidates.length > 0) {
        const choice = await ctx.ui.select(
          "MCP server",
          candidates.map((candidate) => candidate.entry.name),
        );
        server = choice === undefined ? undefined : findServer(choice);
        if (!server) return;
      }
    }
    if (!server?.connection || !isEnabled(server)) {
      ctx.ui.notify(name ? `No enabled MCP server named "${name}".` : "No enabled MCP server to reconnect.", "error");
      return;
    }
    const connection = server.connection;
    const ready = connection.reconnect();
    server.ready = ready.then(
      () => undefined,
      () => undefined,
    );
    try {
      await ready;
      ensureDiscoveryActive(ctx);
      ctx.ui.notify(`Reconnected to MCP server "${server.entry.name}" (${describeState(server)}).`, "info");
    } catch (error) {
      ctx.ui.notify(errorMessage(error), "error");
    }
  };

  /** `/mcp login <server>`: the URL shown, a pasted redirect URL asked for; the session's end cancels it. */
  const login = async (server: Server, connection: McpServerConnection, ctx: ExtensionContext): Promise<void> => {
    const { name } = server.entry;
    if (connection.oauthUrl === undefined) return;
    if (!ctx.hasUI) {
      ctx.ui.notify(`Signing in to MCP server "${name}" requires interactive mode.`, "error");
      return;
    }
    const { signal } = session;
    let failure: string | undefined;
    try {
      await connection.signIn(
        {
          showAuthorizationUrl: (authorizationUrl) => ctx.ui.notify(`Sign in to MCP server "${name}" in your browser:\n${authorizationUrl.href}`, "info"),
          promptForRedirectUrl: (promptSignal) =>
            ctx.ui.input(
              `Waiting for sign-in to "${name}". If the browser cannot reach this machine, paste the URL it was redirected to.`,
              "http://127.0.0.1:.../callback?code=...",
              { signal: promptSignal },
            ),
        },
        signal,
      );
      const ready = connection.reconnect();
      server.ready = ready.catch(() => undefined);
      try {
        await ready;
      } catch (error) {
        failure = `Signed in, but ${errorMessage(error)}`;
      }
    } catch (error) {
      failure = error instanceof McpSignInCancelledError ? "Sign-in cancelled." : `Sign-in failed: ${errorMessage(error)}`;
    }
    if (signal.aborted) return;
    if (failure) {
      ctx.ui.notify(failure, failure === "Sign-in cancelled." ? "info" : "error");
      return;
    }
    ensureDiscoveryActive(ctx);
    ctx.ui.notify(`Signed in to MCP server "${name}" (${connection.tools.length} tools).`, "info");
  };

  return { sessionStart, beforeAgentStart, toolCall, serversChanged, sessionShutdown, command };
}
