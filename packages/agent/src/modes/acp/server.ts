/**
 * `parley --mode acp`: the Agent Client Protocol front door. Every ACP session has its own agent
 * (acp-session.ts: agent, extension runtime, dialogs, update mapping, turn), so prompts in
 * different sessions run at once and nothing one session does reaches another. This server owns
 * what they share: the connection, which session ids the client knows, the session files, which
 * session a request names, and the process's shutdown.
 *
 * The first session/new or session/load takes up the agent the CLI started (its extensions loaded,
 * its project trust decided); later ones start their own agent through the CLI's
 * `startSessionAgent` (extensions loaded fresh for the session's folder, as pi runs the extension
 * factories per session). A session stays open until session/close, the end of the process, or
 * (idle) until more sessions than the limit are open (#closeIdleBeyondLimit).
 */
import type {
  AgentConnection,
  AgentContext,
  ClientCapabilities,
  InitializeResponse,
  McpServer,
  NewSessionResponse,
  SessionUpdate,
} from "@agentclientprotocol/sdk";
import { isAbsolute } from "node:path";
import { CLIENT_MCP_OWNER, clientMcpServers } from "./client-mcp-servers.js";
import type { ExtensionLoadFailure, ExtensionSource } from "../../extensions/extension-source.js";
import type { ExtensionErrorReport } from "../../extensions/host.js";
import type { ExtensionRuntime } from "../../extensions/runtime.js";
import type { AgentCore, AgentCoreSettings, FrontDoor } from "../../core/agent-core.js";
import type { ModelResolution } from "../../models/index.js";
import type { Transport } from "../../core/transport.js";
import type { Session } from "../../session/session.js";
import type { SessionFactory } from "../../session/session-factory.js";
import { assertSessionCwdExists, MissingSessionCwdError, sessionFolder } from "../../session/session-cwd.js";
import { SessionLockedError } from "../../session/session-lock.js";
import { errorMessage } from "../../error-text.js";
import { withTimeout } from "../../with-timeout.js";
import { type AcpSdk, AcpSession, type AcpSessionLink } from "./acp-session.js";
import { listSessionFiles } from "./session-list.js";
import { transportStream } from "./stdio-stream.js";

export type { AcpSdk } from "./acp-session.js";

/** What every mode takes (agent-core.ts), and what is ACP's own. */
export interface AcpServerOptions extends AgentCoreSettings {
  sdk: AcpSdk;
  transport: Transport;
  version: string;
  models: ModelResolution;
  /** The session the command line opened (new, --session, -c); the first session/new or session/load takes it up. */
  session: Session;
  sessions: SessionFactory;
  /** Where session files live; undefined with --no-session (nothing to list or load). */
  sessionDir: string | undefined;
  log: (message: string) => void;
  shutdownGraceMs?: number;
  /**
   * Starts the agent of a session after the first (cli/main.ts: extensions loaded fresh for its
   * folder, the command line's flags, the start-up model); without it the same extension sources
   * run again.
   */
  startSessionAgent?: ((core: AgentCore) => Promise<void>) | undefined;
  /**
   * How many sessions keep an agent (default 16, `PARLEY_ACP_MAX_SESSIONS`): beyond it the least
   * recently used idle session whose file holds all of it is closed, and opened again from its
   * file when the client names it.
   */
  maxOpenSessions?: number | undefined;
}

const DEFAULT_MAX_OPEN_SESSIONS = 16;

export class AcpServer implements FrontDoor {
  readonly #options: AcpServerOptions;
  readonly #sdk: AcpSdk;
  readonly #log: (message: string) => void;
  /** The session of the agent the CLI started: the process lifetime's `agent` and `runtime`. */
  readonly #first: AcpSession;
  /** Sessions the client has opened and not closed. */
  readonly #sessions = new Set<AcpSession>();
  /** Sessions whose agent is still starting (shutdown ends them too). */
  readonly #starting = new Set<AcpSession>();
  #uses = 0;
  #connection: AgentConnection | undefined;
  #clientCapabilities: ClientCapabilities = {};
  /** The first session/new or session/load takes up the session the CLI opened, and runs session_start "startup". */
  #begun = false;
  /** Session ids the client has been told about; updates and dialogs for others wait (see #whenVisible). */
  readonly #visible = new Set<string>();
  readonly #held = new Map<string, ((sessionId: string) => void)[]>();
  /** Session files by id: the ones listed, made or loaded here. */
  readonly #files = new Map<string, string>();
  /** Opening and closing sessions run one at a time: opening reads and writes the CLI's shared start-up state (settings, trust by folder). */
  #serial: Promise<unknown> = Promise.resolve();
  #shutdown: Promise<void> | undefined;
  #resolveClosed!: () => void;
  readonly closed = new Promise<void>((resolve) => (this.#resolveClosed = resolve));

  constructor(options: AcpServerOptions) {
    this.#options = options;
    this.#sdk = options.sdk;
    this.#log = options.log;
    this.#first = new AcpSession(options, this.#link());
  }

  #link(): AcpSessionLink {
    return {
      sdk: this.#sdk,
      client: () => this.#connection?.client,
      clientCapabilities: () => this.#clientCapabilities,
      output: this.#options.transport,
      update: (sessionId, update) => this.#update(sessionId, update),
      whenVisible: (sessionId, send) => this.#whenVisible(sessionId, send),
      requestShutdown: () => setImmediate(() => void this.shutdown()),
      log: this.#log,
    };
  }

  /** The agent the CLI started (the first session's); exists once loadExtensions() has begun. */
  get agent(): FrontDoor["agent"] {
    return this.#first.core.agent;
  }

  get runtime(): ExtensionRuntime {
    return this.#first.core.runtime;
  }

  /** Creates the first agent, then runs the extension factories (they register commands, handlers and flags). */
  loadExtensions(options: { explicitFailuresFatal?: boolean } = {}): Promise<ExtensionLoadFailure[]> {
    return this.#first.core.loadExtensions(options);
  }

  addExtensions(sources: readonly ExtensionSource[], order: readonly string[]): Promise<void> {
    return this.#first.core.addExtensions(sources, order);
  }

  /** To the first session while it is open, else to the one used last; with none open, to stderr. */
  reportError(report: ExtensionErrorReport): void {
    const open = [...this.#sessions].sort((a, b) => b.lastUsed - a.lastUsed);
    const to = !this.#begun || this.#sessions.has(this.#first) ? this.#first : open[0];
    if (to) to.core.host.reportError(report);
    else this.#log(`${report.extensionPath} (${report.event}): ${report.error}`);
  }

  setExtensionFlags(flags: Map<string, string | boolean>): void {
    this.#first.core.host.setExtensionFlags(flags);
  }

  /** Serves ACP on the transport until the client closes its end. */
  start(): void {
    const acp = this.#sdk;
    const app = acp
      .agent({ name: "parley" })
      .onRequest("initialize", ({ params }) => {
        this.#clientCapabilities = params.clientCapabilities ?? {};
        return this.#initialize();
      })
      .onRequest("authenticate", () => ({}))
      .onRequest("session/new", ({ params }) => this.#serially(() => this.#newSession(params.cwd, params.mcpServers)))
      .onRequest("session/load", ({ params }) => this.#serially(() => this.#loadSession(params.sessionId, params.cwd, true, params.mcpServers)))
      // As session/load, without the replay: for clients that keep the conversation themselves.
      .onRequest("session/resume", ({ params }) => this.#serially(() => this.#loadSession(params.sessionId, params.cwd, false, params.mcpServers)))
      .onRequest("session/list", ({ params }) => this.#listSessions(params.cwd ?? undefined))
      // In turn with opening: a request naming the session after this reopens it from its file only once this agent has ended.
      .onRequest("session/close", ({ params }) => this.#serially(() => this.#close(params.sessionId)))
      .onRequest("session/set_mode", async ({ params }) => {
        (await this.#sessionFor(params.sessionId)).setThinking(params.modeId);
        return {};
      })
      .onRequest("session/set_config_option", async ({ params }) => ({
        configOptions: await (await this.#sessionFor(params.sessionId)).setConfigOption(params.configId, params.value),
      }))
      .onRequest("session/prompt", async ({ params }) => (await this.#sessionFor(params.sessionId)).prompt(params.prompt))
      .onNotification("session/cancel", ({ params }) => this.#find(params.sessionId)?.cancel());
    this.#connection = app.connect(transportStream(this.#options.transport));
    void this.#connection.closed.then(() => this.shutdown());
  }

  // ---- requests ----------------------------------------------------------------------

  #initialize(): InitializeResponse {
    const stored = this.#options.sessionDir !== undefined;
    return {
      protocolVersion: this.#sdk.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: stored,
        promptCapabilities: { image: true, embeddedContext: true },
        // The client's MCP servers connect through the built-in MCP support (client-mcp-servers.ts).
        mcpCapabilities: { http: true, sse: false },
        sessionCapabilities: { close: {}, ...(stored ? { list: {}, resume: {} } : {}) },
      },
      agentInfo: { name: "parley", title: "parley", version: this.#options.version },
      authMethods: [],
    };
  }

  /** One at a time: opening a session must not interleave with opening another. */
  #serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#serial.then(work, work);
    this.#serial = next.catch(() => undefined);
    return next;
  }

  /** The open session with this id. */
  #find(sessionId: string): AcpSession | undefined {
    for (const session of this.#sessions) if (session.id === sessionId) return session;
    // The pi session an extension moved an agent to (listed, then named by its own id).
    for (const session of this.#sessions) if (session.answersTo(sessionId)) return session;
    return undefined;
  }

  /** The session a request names: an open one, or a stored one (listed) opened for it with its own agent. */
  async #sessionFor(sessionId: string): Promise<AcpSession> {
    if (!this.#begun) throw this.#sdk.RequestError.invalidRequest(undefined, "No session yet: call session/new or session/load first");
    const session =
      this.#find(sessionId) ??
      (await this.#serially(async () => {
        const open = this.#find(sessionId);
        if (open) return open;
        // The client knows the id (it listed it): what the session shows may go at once.
        const opened = await this.#openLater(this.#openStored(sessionId));
        opened.knownAs(sessionId);
        opened.startAfterResponse(() => this.#markVisible(sessionId));
        return opened;
      }));
    session.lastUsed = ++this.#uses;
    return session;
  }

  async #newSession(cwd: string, mcpServers: readonly McpServer[] | undefined): Promise<NewSessionResponse> {
    this.#checkCwd(cwd);
    if (!this.#begun) {
      const initial = this.#options.session;
      // The session the command line opened, unless it already holds a conversation.
      const session = this.#first.agent.messages.length === 0 ? initial : this.#options.sessions.create({});
      if (session !== initial) this.#first.agent.useSession(session);
      writeNow(session);
      this.#useClientMcpServers(this.#first, mcpServers);
      return this.#begin(session, []);
    }
    const created = this.#options.sessions.create({});
    writeNow(created);
    const session = await this.#openLater(created);
    this.#useClientMcpServers(session, mcpServers);
    // The response names the session; its session_start runs after, and what it shows waits for that.
    session.startAfterResponse(() => this.#markVisible(session.id));
    return session.state();
  }

  async #loadSession(sessionId: string, cwd: string, replay: boolean, mcpServers: readonly McpServer[] | undefined): Promise<NewSessionResponse> {
    try {
      return await this.#load(sessionId, cwd, replay, mcpServers);
    } catch (error) {
      // pi's words for a session whose folder is gone reach the client (the SDK would say only "Internal error").
      if (error instanceof MissingSessionCwdError) throw this.#sdk.RequestError.internalError(undefined, error.message);
      // Another process writes the file: the client is told which and what to do, not "Internal error".
      if (error instanceof SessionLockedError) throw this.#sdk.RequestError.invalidRequest(undefined, error.message);
      throw error;
    }
  }

  /** session/load (`replay`: the conversation goes to the client first) and session/resume (it does not). */
  async #load(sessionId: string, cwd: string, replay: boolean, mcpServers: readonly McpServer[] | undefined): Promise<NewSessionResponse> {
    this.#checkCwd(cwd);
    if (!this.#begun) {
      const session = this.#options.session.id === sessionId ? this.#options.session : this.#openStored(sessionId);
      // The client names the session: updates for it may go at once (the replay comes before the response).
      this.#visible.add(sessionId);
      await this.#options.models.loadCatalog();
      if (session !== this.#options.session) {
        // As a switch does (session-switching.ts): a session whose recorded folder is gone is refused.
        assertSessionCwdExists(session, this.#first.core.cwd);
        this.#first.agent.useSession(session, true);
        // It runs in its recorded folder, as a switch to it would (session-switching.ts).
        await this.#first.core.startIn(sessionFolder(session, this.#first.core.cwd));
        this.#first.resetMapper();
      }
      this.#useClientMcpServers(this.#first, mcpServers);
      return this.#begin(session, replay ? this.#first.replay() : []);
    }
    // Open already: the same agent, the one writer of its file; its conversation is replayed again.
    const open = this.#find(sessionId);
    if (open) {
      open.lastUsed = ++this.#uses;
      // Loaded by this id, it is shown under it from now on.
      open.knownAs(sessionId);
      this.#visible.add(sessionId);
      if (replay) for (const update of open.replay()) this.#update(sessionId, update);
      this.#useClientMcpServers(open, mcpServers);
      open.sendName();
      open.sendCommands();
      return open.state();
    }
    const session = await this.#openLater(this.#openStored(sessionId));
    this.#useClientMcpServers(session, mcpServers);
    this.#visible.add(sessionId);
    if (replay) for (const update of session.replay()) this.#update(sessionId, update);
    session.startAfterResponse(() => this.#markVisible(sessionId));
    return session.state();
  }

  /** The MCP servers the client offers for this session connect with the built-in MCP support (before its session_start). */
  #useClientMcpServers(session: AcpSession, offered: readonly McpServer[] | undefined): void {
    if (offered === undefined) return;
    const { servers, skipped } = clientMcpServers(offered);
    for (const reason of skipped) this.#options.log?.(reason);
    session.core.runtime.setClientMcpServers(servers, CLIENT_MCP_OWNER);
  }

  /** The first session: replay (for a load), answer, then session_start "startup" once the client knows the id. */
  #begin(session: Session, replay: SessionUpdate[]): NewSessionResponse {
    this.#begun = true;
    // What extensions showed while loading, before any session existed for the client, goes to this one.
    const early = this.#held.get(this.#options.session.id);
    if (early && session !== this.#options.session) {
      this.#held.delete(this.#options.session.id);
      this.#held.set(session.id, [...early, ...(this.#held.get(session.id) ?? [])]);
    }
    this.#remember(session);
    this.#sessions.add(this.#first);
    this.#first.lastUsed = ++this.#uses;
    for (const update of replay) this.#update(session.id, update);
    const response = this.#first.state();
    this.#first.startAfterResponse(() => this.#markVisible(session.id));
    return response;
  }

  /**
   * A session after the first, with an agent of its own: its extensions load fresh (the CLI's
   * startSessionAgent), in the session's recorded folder.
   */
  async #openLater(stored: Session): Promise<AcpSession> {
    if (this.#shutdown) throw this.#sdk.RequestError.internalError(undefined, "parley is shutting down");
    assertSessionCwdExists(stored, this.#options.cwd);
    const session = new AcpSession({ ...this.#options, cwd: sessionFolder(stored, this.#options.cwd), session: stored, sessionName: undefined }, this.#link());
    this.#starting.add(session);
    try {
      if (this.#options.startSessionAgent) await this.#options.startSessionAgent(session.core);
      else await session.core.loadExtensions();
    } finally {
      this.#starting.delete(session);
    }
    if (this.#shutdown) {
      await session.end(this.#grace());
      throw this.#sdk.RequestError.internalError(undefined, "parley is shutting down");
    }
    this.#remember(stored);
    this.#sessions.add(session);
    session.lastUsed = ++this.#uses;
    await this.#closeIdleBeyondLimit(session);
    return session;
  }

  /**
   * Editors open a session per thread and rarely close one: past the limit, the least recently
   * used sessions that are idle and whose file holds all of them (persisted, nothing waiting for
   * its first reply) are closed as session/close would, their ids remembered with their files so
   * that a request naming one opens it again. `opened` (the session being opened) stays.
   */
  async #closeIdleBeyondLimit(opened: AcpSession): Promise<void> {
    const limit = Math.max(1, this.#options.maxOpenSessions ?? DEFAULT_MAX_OPEN_SESSIONS);
    const excess = this.#sessions.size - limit;
    if (excess <= 0) return;
    // Not one a request has named since `opened` was (its prompt may be about to start).
    const idle = [...this.#sessions].filter((s) => s !== opened && s.lastUsed < opened.lastUsed && !s.busy && s.savedInFull());
    const closing = idle.sort((a, b) => a.lastUsed - b.lastUsed).slice(0, excess);
    // Out of the routing at once: a request naming one from here on opens it again from its file,
    // in turn after this (opening is serialised), so the file never has two writers.
    for (const session of closing) {
      this.#sessions.delete(session);
      const file = session.agent.session.file;
      if (file !== undefined) this.#files.set(session.id, file);
    }
    for (const session of closing) {
      await this.#letGo(session);
      this.#log(`closed idle session ${session.id} (more than ${limit} open; it opens again from its file when named)`);
    }
  }

  /** session/close: as session/cancel, then the session's agent ends (session_shutdown) and is let go; its file stays. */
  async #close(sessionId: string): Promise<Record<string, never>> {
    const session = this.#find(sessionId);
    // Closed already (closed for room, or closed twice): nothing is open under that id.
    if (!session && this.#files.has(sessionId)) return {};
    if (!session) throw this.#sdk.RequestError.sessionNotFound(sessionId);
    this.#sessions.delete(session);
    session.cancel();
    await this.#letGo(session);
    return {};
  }

  /** A session closed while parley runs on: it ends, and what its extensions registered goes with it (a provider other sessions also registered is theirs again). */
  async #letGo(session: AcpSession): Promise<void> {
    await session.end(this.#grace());
    session.core.runtime.reset();
  }

  async #listSessions(cwd: string | undefined): Promise<{ sessions: { sessionId: string; cwd: string; title?: string | null; updatedAt?: string | null }[] }> {
    if (cwd !== undefined) this.#absolute(cwd);
    const dir = this.#options.sessionDir;
    if (dir === undefined) return { sessions: [] };
    const listed = listSessionFiles(dir).filter((s) => cwd === undefined || s.cwd === cwd);
    for (const s of listed) this.#files.set(s.sessionId, s.file);
    return { sessions: listed.map(({ file: _file, ...s }) => s) };
  }

  #fileOf(sessionId: string): string {
    let file = this.#files.get(sessionId);
    if (file === undefined && this.#options.sessionDir !== undefined) {
      for (const s of listSessionFiles(this.#options.sessionDir)) this.#files.set(s.sessionId, s.file);
      file = this.#files.get(sessionId);
    }
    if (file === undefined) throw this.#sdk.RequestError.sessionNotFound(sessionId);
    return file;
  }

  #openStored(sessionId: string): Session {
    return this.#options.sessions.open(this.#fileOf(sessionId));
  }

  #remember(session: Session): void {
    if (session.file !== undefined) this.#files.set(session.id, session.file);
  }

  #checkCwd(cwd: string): void {
    this.#absolute(cwd);
    if (cwd !== this.#first.core.cwd) this.#log(`the client asked for a session in ${cwd}; parley works in ${this.#first.core.cwd} (its session's folder)`);
  }

  /** ACP paths are absolute: a relative one is refused (-32602), never resolved against parley's own folder. */
  #absolute(cwd: string): void {
    if (!isAbsolute(cwd)) throw this.#sdk.RequestError.invalidParams(undefined, `cwd must be an absolute path: ${JSON.stringify(cwd)}`);
  }

  // ---- delivery ------------------------------------------------------------------------------

  #update(sessionId: string, update: SessionUpdate): void {
    this.#whenVisible(sessionId, (visibleId) => {
      const client: AgentContext | undefined = this.#connection?.client;
      client?.notify("session/update", { sessionId: visibleId, update }).catch((error: unknown) => this.#log(`session/update: ${errorMessage(error)}`));
    });
  }

  /** Sends now if the client knows the session, else once a response has named it. */
  #whenVisible(sessionId: string, send: (sessionId: string) => void): void {
    if (this.#visible.has(sessionId)) return send(sessionId);
    const held = this.#held.get(sessionId);
    if (held) held.push(send);
    else this.#held.set(sessionId, [send]);
  }

  #markVisible(sessionId: string): void {
    this.#visible.add(sessionId);
    const held = this.#held.get(sessionId) ?? [];
    this.#held.delete(sessionId);
    for (const send of held) send(sessionId);
  }

  // ---- shutdown ----------------------------------------------------------------------------------

  #grace(): number {
    return this.#options.shutdownGraceMs ?? 3000;
  }

  /**
   * Ends every session's agent at once (open dialogs resolve, runs stop, session_shutdown, each
   * bounded), then flushes the output. Idempotent.
   */
  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      const grace = this.#grace();
      const every = new Set([this.#first, ...this.#sessions, ...this.#starting]);
      await Promise.all([...every].map((session) => session.end(grace)));
      await withTimeout(this.#options.transport.flush(), grace);
      this.#resolveClosed();
    })();
    return this.#shutdown;
  }
}

/**
 * A session the client created is on disk before the response names it, where pi waits for the
 * first reply: an ACP client may load or resume it by id in another process before any prompt
 * (acpx's `sessions new` then `prompt`). A session in memory (--no-session) stays there.
 */
function writeNow(session: Session): void {
  session.flush(true);
}
