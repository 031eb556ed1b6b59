/**
 * `parley --mode acp`: the Agent Client Protocol front door. It drives the same agent, extension
 * host, dialog registry and session switching as RPC mode; only what reaches the client differs:
 * the agent's wire records become session/update notifications (updates.ts), dialogs become
 * elicitations or permission requests (dialog-bridge.ts).
 *
 * One session is active at a time (the agent holds one conversation); a request naming another
 * stored session switches to it first, with the same extension events as RPC's switch_session.
 */
import type {
  AgentContext,
  AgentConnection,
  ClientCapabilities,
  ContentBlock,
  InitializeResponse,
  NewSessionResponse,
  PromptResponse,
  SessionConfigOption,
  SessionModeState,
  SessionUpdate,
  StopReason,
} from "@agentclientprotocol/sdk";
import type { ImageContent } from "@mariozechner/pi-ai";
import type { FireAndForgetRequest } from "@parley/protocol";
import { isThinkingLevel } from "@parley/protocol/constants";
import { isFireAndForgetMethod } from "@parley/protocol/ui-methods";
import { AgentError, type AgentSession } from "../agent/agent-session.js";
import type { ExtensionLoadFailure, ExtensionSource } from "../extensions/extension-source.js";
import type { ExtensionErrorReport } from "../extensions/host.js";
import { AgentCore, type AgentCoreSettings, type FrontDoor } from "../modes/agent-core.js";
import type { ModelResolution } from "../models/index.js";
import { fromFileUrl } from "../resources/paths.js";
import type { RpcExtensionHost } from "../rpc/extension-host.js";
import type { Transport } from "../rpc/transport.js";
import type { Session } from "../session/session.js";
import type { SessionFactory } from "../session/session-factory.js";
import { assertSessionCwdExists, MissingSessionCwdError, sessionFolder } from "../session/session-cwd.js";
import { DialogRegistry } from "../ui/dialog-registry.js";
import { errorMessage } from "../error-text.js";
import { withTimeout } from "../with-timeout.js";
import { DialogBridge } from "./dialog-bridge.js";
import { listSessionFiles } from "./session-list.js";
import { transportStream } from "./stdio-stream.js";
import { replayUpdates, UpdateMapper } from "./updates.js";

export type AcpSdk = typeof import("@agentclientprotocol/sdk");

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
}

const MODEL_OPTION = "model";
const THINKING_OPTION = "thinking";

export class AcpServer implements FrontDoor {
  readonly dialogs: DialogRegistry;
  readonly host: RpcExtensionHost;
  readonly #options: AcpServerOptions;
  readonly #sdk: AcpSdk;
  readonly #log: (message: string) => void;
  /** The host, the agent and extension loading, as every mode has them. */
  readonly #core: AgentCore;

  /** The agent this front door drives (exists once loadExtensions() has begun). */
  get agent(): AgentSession {
    return this.#core.agent;
  }
  readonly #bridge: DialogBridge;
  #mapper: UpdateMapper;
  #connection: AgentConnection | undefined;
  #clientCapabilities: ClientCapabilities = {};
  /** The first session/new or session/load takes up the session the CLI opened, and runs session_start "startup". */
  #begun = false;
  /** Session ids the client has been told about; updates and dialogs for others wait (see #whenVisible). */
  readonly #visible = new Set<string>();
  readonly #held = new Map<string, ((sessionId: string) => void)[]>();
  /** Session files by id: the ones listed, made or loaded here. */
  readonly #files = new Map<string, string>();
  #turn: { sessionId: string; cancelled: boolean } | undefined;
  /**
   * The active session's session_start handlers, which run after the response that names the
   * session; prompts wait for them, as RPC commands wait for start-up (answers to their dialogs never wait).
   */
  #sessionStart: Promise<void> = Promise.resolve();
  /** Requests run one after another where they touch the active session (switches, prompts' start). */
  #serial: Promise<unknown> = Promise.resolve();
  #shutdown: Promise<void> | undefined;
  #resolveClosed!: () => void;
  readonly closed = new Promise<void>((resolve) => (this.#resolveClosed = resolve));

  constructor(options: AcpServerOptions) {
    this.#options = options;
    this.#sdk = options.sdk;
    this.#log = options.log;
    // The registry and the bridge refer to each other: the registry's output is read lazily.
    this.dialogs = new DialogRegistry({ send: (record) => this.#bridge.receive(record) });
    this.#bridge = new DialogBridge(this.#bridgeOptions());
    this.#core = new AgentCore(options, {
      dialogs: this.dialogs,
      send: (record) => this.#onHostRecord(record),
      emit: (record) => this.#onAgentRecord(record),
      output: options.transport,
      requestShutdown: () => setImmediate(() => void this.shutdown()),
      afterReload: () => this.#sendCommands(this.agent.session.id),
    });
    this.host = this.#core.host;
    this.#mapper = new UpdateMapper(options.cwd);
  }

  #bridgeOptions(): ConstructorParameters<typeof DialogBridge>[0] {
    return {
      dialogs: this.dialogs,
      client: () => this.#connection?.client,
      elicitation: () => this.#clientCapabilities.elicitation?.form != null,
      sessionId: () => this.agent.session.id,
      gatingToolCall: () => this.agent.gatingToolCall,
      whenVisible: (sessionId, send) => this.#whenVisible(sessionId, send),
      update: (sessionId, update) => this.#update(sessionId, update),
      notice: (sessionId, severity, title, description) => this.#notice(sessionId, severity, title, description),
      log: this.#log,
    };
  }

  get runtime(): RpcExtensionHost["runtime"] {
    return this.host.runtime;
  }

  /** Creates the agent, then runs the extension factories (they register commands, handlers and flags). */
  loadExtensions(options: { explicitFailuresFatal?: boolean } = {}): Promise<ExtensionLoadFailure[]> {
    return this.#core.loadExtensions(options);
  }

  addExtensions(sources: readonly ExtensionSource[], order: readonly string[]): Promise<void> {
    return this.#core.addExtensions(sources, order);
  }

  reportError(report: ExtensionErrorReport): void {
    this.host.reportError(report);
  }

  setExtensionFlags(flags: Map<string, string | boolean>): void {
    this.host.setExtensionFlags(flags);
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
      .onRequest("session/new", ({ params }) => this.#serially(() => this.#newSession(params.cwd)))
      .onRequest("session/load", ({ params }) => this.#serially(() => this.#loadSession(params.sessionId, params.cwd)))
      .onRequest("session/list", ({ params }) => this.#listSessions(params.cwd ?? undefined))
      .onRequest("session/set_mode", ({ params }) =>
        this.#serially(async () => {
          await this.#activate(params.sessionId);
          this.#setThinking(params.modeId);
          return {};
        }),
      )
      .onRequest("session/set_config_option", ({ params }) =>
        this.#serially(async () => {
          await this.#activate(params.sessionId);
          if (typeof params.value !== "string") throw acp.RequestError.invalidParams(undefined, `config option ${params.configId} takes a string value`);
          if (params.configId === MODEL_OPTION) await this.#setModel(params.value);
          else if (params.configId === THINKING_OPTION) this.#setThinking(params.value);
          else throw acp.RequestError.invalidParams(undefined, `no config option ${params.configId} (options: ${MODEL_OPTION}, ${THINKING_OPTION})`);
          return { configOptions: await this.#configOptions() };
        }),
      )
      .onRequest("session/prompt", ({ params }) => this.#prompt(params.sessionId, params.prompt))
      .onNotification("session/cancel", ({ params }) => this.#cancel(params.sessionId));
    this.#connection = app.connect(transportStream(this.#options.transport));
    void this.#connection.closed.then(() => this.shutdown());
  }

  // ---- requests ----------------------------------------------------------------------

  #initialize(): InitializeResponse {
    return {
      protocolVersion: this.#sdk.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: this.#options.sessionDir !== undefined,
        promptCapabilities: { image: true, embeddedContext: true },
        sessionCapabilities: this.#options.sessionDir !== undefined ? { list: {} } : {},
      },
      agentInfo: { name: "parley", title: "parley", version: this.#options.version },
      authMethods: [],
    };
  }

  /** One at a time: a switch must not interleave with another switch or a prompt's start. */
  #serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#serial.then(work, work);
    this.#serial = next.catch(() => undefined);
    return next;
  }

  async #newSession(cwd: string): Promise<NewSessionResponse> {
    this.#checkCwd(cwd);
    const initial = this.#options.session;
    if (!this.#begun) {
      // The session the command line opened, unless it already holds a conversation.
      const session = this.agent.messages.length === 0 ? initial : this.#options.sessions.create({});
      if (session !== initial) this.agent.useSession(session);
      return this.#begin(session, []);
    }
    let made: Session | undefined;
    let announce!: () => void;
    const ready = new Promise<void>((resolve) => (announce = resolve));
    const switched = this.host.switching.switchTo(
      () => {
        made = this.#options.sessions.create({});
        announce();
        return made;
      },
      { before: { type: "session_before_switch", reason: "new" }, reason: "new" },
    );
    // The response goes as soon as the new session exists; its session_start runs after, and
    // whatever it shows waits until the client knows the session id.
    const result = await Promise.race([ready.then(() => undefined), switched]);
    if (result?.cancelled || !made) throw this.#sdk.RequestError.internalError(undefined, "An extension cancelled the new session (session_before_switch)");
    const session = made;
    this.#remember(session);
    this.#mapper = new UpdateMapper(this.#core.cwd);
    this.#sessionStart = switched.then(
      () => {
        this.#sendName(session.id);
        this.#sendCommands(session.id);
      },
      (error: unknown) => this.#log(`new session: ${errorMessage(error)}`),
    );
    this.#announceAfterResponse(session.id);
    return this.#sessionState(session.id);
  }

  async #loadSession(sessionId: string, cwd: string): Promise<NewSessionResponse> {
    try {
      return await this.#load(sessionId, cwd);
    } catch (error) {
      // pi's words for a session whose folder is gone reach the client (the SDK would say only "Internal error").
      if (error instanceof MissingSessionCwdError) throw this.#sdk.RequestError.internalError(undefined, error.message);
      throw error;
    }
  }

  async #load(sessionId: string, cwd: string): Promise<NewSessionResponse> {
    this.#checkCwd(cwd);
    // The client names the session: updates for it may go at once (the replay comes before the response).
    this.#visible.add(sessionId);
    if (!this.#begun) {
      const session = this.#options.session.id === sessionId ? this.#options.session : this.#openStored(sessionId);
      await this.#options.models.loadCatalog();
      if (session !== this.#options.session) {
        // As a switch does (session-switching.ts): a session whose recorded folder is gone is refused.
        assertSessionCwdExists(session, this.#core.cwd);
        this.agent.useSession(session);
        // It runs in its recorded folder, as a switch to it would (session-switching.ts).
        await this.#core.startIn(sessionFolder(session, this.#core.cwd));
        this.#mapper = new UpdateMapper(this.#core.cwd);
      }
      return this.#begin(session, replayUpdates(this.agent.messages, this.#core.cwd));
    }
    if (this.agent.session.id !== sessionId) await this.#switchTo(sessionId);
    this.#replay(sessionId);
    this.#sendName(sessionId);
    this.#sendCommands(sessionId);
    return this.#sessionState(sessionId);
  }

  /** The first session: replay (for a load), answer, then session_start "startup" once the client knows the id. */
  async #begin(session: Session, replay: SessionUpdate[]): Promise<NewSessionResponse> {
    this.#begun = true;
    // What extensions showed while loading, before any session existed for the client, goes to this one.
    const early = this.#held.get(this.#options.session.id);
    if (early && session !== this.#options.session) {
      this.#held.delete(this.#options.session.id);
      this.#held.set(session.id, [...early, ...(this.#held.get(session.id) ?? [])]);
    }
    this.#remember(session);
    for (const update of replay) this.#update(session.id, update);
    const response = this.#sessionState(session.id);
    this.#sessionStart = new Promise<void>((resolve) => {
      setImmediate(() => {
        this.#markVisible(session.id);
        this.#sendName(session.id);
        void (async () => {
          await this.#core.startSession();
          this.#sendCommands(session.id);
        })()
          .catch((error: unknown) => this.#log(`session start: ${errorMessage(error)}`))
          .finally(resolve);
      });
    });
    return response;
  }

  #replay(sessionId: string): void {
    for (const update of replayUpdates(this.agent.messages, this.#core.cwd)) this.#update(sessionId, update);
  }

  async #listSessions(cwd: string | undefined): Promise<{ sessions: { sessionId: string; cwd: string; title?: string | null; updatedAt?: string | null }[] }> {
    const dir = this.#options.sessionDir;
    if (dir === undefined) return { sessions: [] };
    const listed = listSessionFiles(dir).filter((s) => cwd === undefined || s.cwd === cwd);
    for (const s of listed) this.#files.set(s.sessionId, s.file);
    return { sessions: listed.map(({ file: _file, ...s }) => s) };
  }

  /** Makes `sessionId` the active session (a stored one is switched to, with extension events). */
  async #activate(sessionId: string): Promise<void> {
    if (!this.#begun) throw this.#sdk.RequestError.invalidRequest(undefined, "No session yet: call session/new or session/load first");
    if (this.agent.session.id === sessionId) return;
    await this.#switchTo(sessionId);
  }

  async #switchTo(sessionId: string): Promise<void> {
    const file = this.#fileOf(sessionId);
    const result = await this.host.switching.switchSession(file);
    if (result.cancelled) throw this.#sdk.RequestError.internalError(undefined, "An extension cancelled the switch to this session (session_before_switch)");
    this.#mapper = new UpdateMapper(this.#core.cwd);
    this.#visible.add(sessionId);
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
    if (cwd !== this.#core.cwd) this.#log(`the client asked for a session in ${cwd}; parley works in ${this.#core.cwd} (its session's folder)`);
  }

  async #prompt(sessionId: string, prompt: ContentBlock[]): Promise<PromptResponse> {
    const turn = { sessionId, cancelled: false };
    // Only what initialize advertised: a block parley cannot read is refused, not silently dropped.
    const unreadable = prompt.find((block) => block.type === "audio");
    if (unreadable) {
      throw this.#sdk.RequestError.invalidParams(undefined, `${unreadable.type} prompts are not supported (promptCapabilities.${unreadable.type} is false)`);
    }
    const before = await this.#serially(async () => {
      // Checked before any switch: a prompt for another session must not end this one's turn.
      if (this.#turn) throw this.#sdk.RequestError.invalidRequest(undefined, "A prompt is already running: wait for its response or send session/cancel");
      await this.#activate(sessionId);
      await this.#sessionStart;
      this.#turn = turn;
      return this.agent.messages.length;
    });
    try {
      const { text, images } = promptInput(prompt);
      if (this.runtime.findCommand(text)) {
        await this.runtime.runCommand(text);
      } else {
        try {
          await this.agent.prompt(text, images.length > 0 ? images : undefined, { source: "rpc" });
        } catch (error) {
          if (error instanceof AgentError) throw this.#sdk.RequestError.internalError(undefined, error.message);
          throw error;
        }
        await this.agent.waitForIdle();
      }
      return { stopReason: turn.cancelled ? "cancelled" : this.#stopReason(before) };
    } finally {
      if (this.#turn === turn) this.#turn = undefined;
    }
  }

  #stopReason(messagesBefore: number): StopReason {
    const last = this.agent.messages.slice(messagesBefore).findLast((m) => m.role === "assistant");
    if (!last || last.role !== "assistant") return "end_turn";
    if (last.stopReason === "aborted") return "cancelled";
    if (last.stopReason === "length") return "max_tokens";
    return "end_turn";
  }

  #cancel(sessionId: string): void {
    if (this.agent.session.id !== sessionId) return;
    if (this.#turn) this.#turn.cancelled = true;
    this.#bridge.cancelSession(sessionId);
    void this.agent.abort();
  }

  // ---- modes and config options --------------------------------------------------------

  #sessionState(sessionId: string): NewSessionResponse {
    return { sessionId, modes: this.#modes(), configOptions: this.#configOptionsNow() };
  }

  #modes(): SessionModeState {
    return {
      currentModeId: this.agent.thinkingLevel,
      availableModes: this.agent
        .availableThinkingLevels()
        .map((level) => ({ id: level, name: `Thinking: ${level}`, description: `Reasoning effort ${level}` })),
    };
  }

  #setThinking(level: string): void {
    const available = this.agent.availableThinkingLevels();
    if (!isThinkingLevel(level) || !available.includes(level)) {
      throw this.#sdk.RequestError.invalidParams(undefined, `${JSON.stringify(level)} is not a thinking level of this model (${available.join(", ")})`);
    }
    // thinking_level_changed follows, which tells the client (#onAgentRecord).
    this.agent.setThinkingLevel(level);
  }

  async #setModel(value: string): Promise<void> {
    await this.agent.models.loadCatalog();
    const slash = value.indexOf("/");
    const found = slash > 0 ? this.agent.models.findModel(value.slice(0, slash), value.slice(slash + 1)) : undefined;
    if (!found) throw this.#sdk.RequestError.invalidParams(undefined, `no model ${JSON.stringify(value)} (values are provider/id, see the model option)`);
    this.agent.setModel(found);
  }

  async #configOptions(): Promise<SessionConfigOption[]> {
    await this.agent.models.loadCatalog().catch((error: unknown) => this.#log(`the model catalogue failed to load: ${errorMessage(error)}`));
    return this.#configOptionsNow();
  }

  /** The model (every model with a key, once the catalogue is loaded) and the thinking level. */
  #configOptionsNow(): SessionConfigOption[] {
    const agent = this.agent;
    const current = agent.model;
    const models = agent.models.catalogReady ? agent.models.availableModels() : [current];
    if (!models.some((m) => m.provider === current.provider && m.id === current.id)) models.unshift(current);
    return [
      {
        type: "select",
        id: MODEL_OPTION,
        name: "Model",
        category: "model",
        currentValue: `${current.provider}/${current.id}`,
        options: models.map((m) => ({ value: `${m.provider}/${m.id}`, name: m.name || m.id, description: m.provider })),
      },
      {
        type: "select",
        id: THINKING_OPTION,
        name: "Thinking",
        category: "thought_level",
        currentValue: agent.thinkingLevel,
        options: agent.availableThinkingLevels().map((level) => ({ value: level, name: level })),
      },
    ];
  }

  /** The session's name, as its title (setTitle later replaces it, as a window title would). */
  #sendName(sessionId: string): void {
    const name = this.agent.session.name;
    if (name !== undefined) this.#update(sessionId, { sessionUpdate: "session_info_update", title: name });
  }

  #sendCommands(sessionId: string): void {
    const availableCommands = this.runtime.commandList().map((c) => ({ name: c.name, description: c.description ?? "", input: { hint: "arguments" } }));
    this.#update(sessionId, { sessionUpdate: "available_commands_update", availableCommands });
  }

  // ---- what the agent and the extensions report -------------------------------------------------

  #onAgentRecord(record: Record<string, unknown>): void {
    const sessionId = this.agent.session.id;
    if (record["type"] === "thinking_level_changed") {
      this.#update(sessionId, { sessionUpdate: "current_mode_update", currentModeId: this.agent.thinkingLevel });
      this.#update(sessionId, { sessionUpdate: "config_option_update", configOptions: this.#configOptionsNow() });
      return;
    }
    for (const update of this.#mapper.map(record)) this.#update(sessionId, update);
  }

  /** The host's records (RPC records, as it writes them in RPC mode): fire-and-forget UI, the session's name, extension errors. */
  #onHostRecord(record: object): void {
    const sessionId = this.agent.session.id;
    if (isFireAndForget(record)) this.#fireAndForget(sessionId, record);
    else if (isRecord(record, "session_info_changed")) {
      this.#update(sessionId, { sessionUpdate: "session_info_update", title: typeof record["name"] === "string" ? record["name"] : null });
    } else if (isRecord(record, "extension_error")) {
      this.#notice(sessionId, "error", `Extension error (${String(record["event"])})`, `${String(record["extensionPath"])}: ${String(record["error"])}`);
    }
  }

  /** notify → notice; setTitle → the session's title; status, widgets and editor text → session_info_update _meta. */
  #fireAndForget(sessionId: string, request: FireAndForgetRequest): void {
    switch (request.method) {
      case "notify":
        this.#notice(sessionId, request.notifyType ?? "info", request.message);
        return;
      case "setTitle":
        this.#update(sessionId, { sessionUpdate: "session_info_update", title: request.title });
        return;
      default:
        break;
    }
    // Status, widgets and editor text, which ACP has no update for: the host's UI state (the
    // protocol's reducer) already holds them.
    const { statuses, widgets, editorText } = this.host.uiState();
    const ui = { statuses, widgets, ...(editorText !== undefined ? { editorText } : {}) };
    this.#update(sessionId, { sessionUpdate: "session_info_update", _meta: { parley: { ui } } });
  }

  /** A notice where the client shows them (session.notices), else an agent message. */
  #notice(sessionId: string, severity: "info" | "warning" | "error", title: string, description?: string): void {
    if (this.#clientCapabilities.session?.notices != null) {
      this.#update(sessionId, { sessionUpdate: "notice", severity, title, ...(description !== undefined ? { description } : {}) });
      return;
    }
    const label = severity === "info" ? "" : `${severity}: `;
    this.#update(sessionId, {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: `\n[${label}${title}${description !== undefined ? ` — ${description}` : ""}]\n` },
    });
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

  /** The response naming the session is written once the handler returns; what waits for it goes after. */
  #announceAfterResponse(sessionId: string): void {
    setImmediate(() => this.#markVisible(sessionId));
  }

  // ---- shutdown ----------------------------------------------------------------------------------

  /** Cancels open dialogs, stops the run, runs session_shutdown (bounded), flushes. Idempotent. */
  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      const grace = this.#options.shutdownGraceMs ?? 3000;
      this.dialogs.dismissAll("shutdown");
      if (this.#core.hasAgent) await withTimeout(this.agent.abort(), grace);
      if (this.#begun) await withTimeout(this.runtime.emit({ type: "session_shutdown", reason: "quit" }), grace);
      this.dialogs.dismissAll("shutdown");
      await withTimeout(this.#options.transport.flush(), grace);
      this.#resolveClosed();
    })();
    return this.#shutdown;
  }
}

/**
 * A prompt's blocks as the agent's text and images; resources become references in the text. A
 * reference is its own word: a space separates it from text it would otherwise touch
 * ("explain" + link + "please" reads "explain @/p please", not "explain@/pplease").
 */
function promptInput(blocks: ContentBlock[]): { text: string; images: ImageContent[] } {
  let text = "";
  let afterReference = false;
  const add = (part: string, reference: boolean): void => {
    if (part === "") return;
    const touching = text !== "" && !/\s$/.test(text) && !/^\s/.test(part);
    if (touching && (reference || afterReference)) text += " ";
    text += part;
    afterReference = reference;
  };
  const images: ImageContent[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        add(block.text, false);
        break;
      case "image":
        images.push({ type: "image", data: block.data, mimeType: block.mimeType });
        break;
      case "resource_link":
        add(`@${fileReference(block.uri)}`, true);
        break;
      case "resource": {
        const resource = block.resource;
        if ("text" in resource) add(`\n<context ref="${resource.uri}">\n${resource.text}\n</context>`, false);
        else add(`@${resource.uri}`, true);
        break;
      }
      default:
        break;
    }
  }
  return { text, images };
}

/**
 * A file URI as the path it names; one that names no local path (a bad %-escape, another host)
 * stays the URI it is, so a client's odd link is a reference, never an internal error.
 */
function fileReference(uri: string): string {
  return uri.startsWith("file:") ? (fromFileUrl(uri) ?? uri) : uri;
}

/** The host builds these from the protocol's own types (rpc-ui-context.ts); this tells them apart. */
function isFireAndForget(record: object): record is FireAndForgetRequest {
  return isRecord(record, "extension_ui_request") && isFireAndForgetMethod(record["method"]);
}

function isRecord(record: object, type: string): record is Record<string, unknown> {
  return (record as { type?: unknown }).type === type;
}
