/**
 * One ACP session and the agent that serves it: its own agent core (agent, extension runtime,
 * dialog registry), its dialog bridge, the mapping of its records to session/update, its prompt
 * turn, modes and config options. The server (server.ts) owns what sessions share: the
 * connection, which session ids the client knows, the session files, and which session a request
 * names.
 */
import type {
  AgentContext,
  ClientCapabilities,
  ContentBlock,
  NewSessionResponse,
  PromptResponse,
  SessionConfigOption,
  SessionModeState,
  SessionUpdate,
  StopReason,
} from "@agentclientprotocol/sdk";
import type { FireAndForgetRequest } from "@parley/protocol";
import { isThinkingLevel } from "@parley/protocol/constants";
import { isFireAndForgetMethod } from "@parley/protocol/ui-methods";
import { AgentError } from "../../agent/agent-error.js";
import { errorMessage } from "../../error-text.js";
import { AgentCore, type AgentCoreSettings, type AgentView } from "../../core/agent-core.js";
import type { OutputPressure } from "../../core/transport.js";
import { DialogRegistry } from "../../ui/dialog-registry.js";
import { withTimeout } from "../../with-timeout.js";
import { DialogBridge } from "./dialog-bridge.js";
import { promptInput } from "./prompt-input.js";
import { replayUpdates, UpdateMapper } from "./updates.js";

export type AcpSdk = typeof import("@agentclientprotocol/sdk");

const MODEL_OPTION = "model";
const THINKING_OPTION = "thinking";

/** What the server lends each session. */
export interface AcpSessionLink {
  sdk: AcpSdk;
  client: () => AgentContext | undefined;
  clientCapabilities: () => ClientCapabilities;
  output: OutputPressure;
  /** Sends an update once the client knows the session (server.ts holds it until then). */
  update: (sessionId: string, update: SessionUpdate) => void;
  whenVisible: (sessionId: string, send: (sessionId: string) => void) => void;
  /** ctx.shutdown(): the whole process stops, every session with it. */
  requestShutdown: () => void;
  log: (message: string) => void;
}

/**
 * The agent as an ACP session uses it: prompts and their replies, cancel, the session it is in,
 * and the model and thinking level the client's config options pick.
 */
export type AcpAgent = AgentView<
  | "session"
  | "useSession"
  | "messages"
  | "prompt"
  | "waitForIdle"
  | "abort"
  | "gatingToolCall"
  | "model"
  | "models"
  | "setModel"
  | "thinkingLevel"
  | "availableThinkingLevels"
  | "setThinkingLevel"
>;

export class AcpSession {
  readonly core: AgentCore;
  readonly dialogs: DialogRegistry;
  readonly #link: AcpSessionLink;
  readonly #sdk: AcpSdk;
  readonly #bridge: DialogBridge;
  #mapper: UpdateMapper;
  #turn: { cancelled: boolean } | undefined;
  /** session_start "startup" has been asked for (session_shutdown then follows at the end). */
  #started = false;
  /**
   * Its session_start handlers, which run after the response that names the session; prompts wait
   * for them, as RPC commands wait for start-up (answers to their dialogs never wait).
   */
  #sessionStart: Promise<void> = Promise.resolve();
  #ended: Promise<void> | undefined;
  /** When a request last named it (errors reported outside any session go to the one used last). */
  lastUsed = 0;

  constructor(settings: AgentCoreSettings, link: AcpSessionLink) {
    this.#link = link;
    this.#sdk = link.sdk;
    // The registry and the bridge refer to each other: the registry's output is read lazily.
    this.dialogs = new DialogRegistry({ send: (record) => this.#bridge.receive(record) });
    this.#bridge = new DialogBridge({
      dialogs: this.dialogs,
      client: link.client,
      elicitation: () => link.clientCapabilities().elicitation?.form != null,
      sessionId: () => this.id,
      gatingToolCall: () => this.agent.gatingToolCall,
      whenVisible: link.whenVisible,
      update: link.update,
      notice: (sessionId, severity, title, description) => this.#notice(sessionId, severity, title, description),
      log: link.log,
    });
    this.core = new AgentCore(settings, {
      dialogs: this.dialogs,
      send: (record) => this.#onHostRecord(record),
      emit: (record) => this.#onAgentRecord(record),
      output: link.output,
      requestShutdown: link.requestShutdown,
      afterReload: () => this.sendCommands(),
    });
    this.#mapper = new UpdateMapper(settings.cwd);
  }

  /**
   * The id the client knows this session by (the last one it created or loaded it as). An
   * extension may move the agent to another pi session (ctx.newSession, ctx.fork,
   * ctx.switchSession) the client was never told of; the client's id keeps naming the agent, as
   * a pi process behind an RPC client stays the same process.
   */
  #clientId: string | undefined;

  get id(): string {
    return this.#clientId ?? this.piSessionId;
  }

  /** The pi session the agent is in now: its file is the one it writes. */
  get piSessionId(): string {
    return this.core.hasAgent ? this.agent.session.id : this.core.initialSession.id;
  }

  /** The client now knows the session by `id` (a response named it, or it loaded it by that id). */
  knownAs(id: string): void {
    this.#clientId = id;
  }

  /** Whether a request naming `id` means this session: the client's id, or the pi session its agent is in. */
  answersTo(id: string): boolean {
    return id === this.id || id === this.piSessionId;
  }

  get agent(): AcpAgent {
    return this.core.agent;
  }

  /** Its file holds all of it: persisted, written (pi writes a session once it has a reply), nothing else pending. */
  savedInFull(): boolean {
    return this.core.hasAgent && this.agent.session.written;
  }

  /** A prompt runs or a dialog waits: not a session to close for room. */
  get busy(): boolean {
    return this.#turn !== undefined || this.dialogs.size > 0;
  }

  /** The folder moved (the first session's load of another folder's session): tool paths follow it. */
  resetMapper(): void {
    this.#mapper = new UpdateMapper(this.core.cwd);
  }

  /** The conversation so far, as session/load replays it before its response. */
  replay(): SessionUpdate[] {
    return replayUpdates(this.agent.messages, this.core.cwd);
  }

  /** session_start "startup" once the response naming the session has gone, then the command list. */
  startAfterResponse(announce: () => void): void {
    this.#started = true;
    this.#sessionStart = new Promise<void>((resolve) => {
      setImmediate(() => {
        announce();
        this.sendName();
        void (async () => {
          await this.core.startSession();
          this.sendCommands();
        })()
          .catch((error: unknown) => this.#link.log(`session start: ${errorMessage(error)}`))
          .finally(resolve);
      });
    });
  }

  // ---- requests ----------------------------------------------------------------------

  async prompt(prompt: ContentBlock[]): Promise<PromptResponse> {
    // Only what initialize advertised: a block parley cannot read is refused, not silently dropped.
    const unreadable = prompt.find((block) => block.type === "audio");
    if (unreadable) {
      throw this.#sdk.RequestError.invalidParams(undefined, `${unreadable.type} prompts are not supported (promptCapabilities.${unreadable.type} is false)`);
    }
    if (this.#turn) throw this.#sdk.RequestError.invalidRequest(undefined, "A prompt is already running: wait for its response or send session/cancel");
    const turn = { cancelled: false };
    this.#turn = turn;
    try {
      await this.#sessionStart;
      if (turn.cancelled) return { stopReason: "cancelled" };
      const before = this.agent.messages.length;
      const { text, images } = promptInput(prompt);
      if (this.core.runtime.findCommand(text)) {
        await this.core.runtime.runCommand(text);
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

  /** session/cancel: this session's turn and its open dialogs; other sessions go on. */
  cancel(): void {
    if (this.#turn) this.#turn.cancelled = true;
    this.#bridge.cancelSession(this.id);
    if (this.core.hasAgent) void this.agent.abort();
  }

  /**
   * session/close and shutdown: open dialogs resolve (once, by the registry), the run stops, the
   * extensions hear session_shutdown (bounded by `graceMs`), and dialogs opened meanwhile resolve
   * too. Idempotent.
   */
  end(graceMs: number): Promise<void> {
    this.#ended ??= (async () => {
      if (this.#turn) this.#turn.cancelled = true;
      this.dialogs.dismissAll("shutdown");
      if (this.core.hasAgent) await withTimeout(this.agent.abort(), graceMs);
      if (this.#started) await withTimeout(this.core.runtime.emit({ type: "session_shutdown", reason: "quit" }), graceMs);
      this.dialogs.dismissAll("shutdown");
      // Another process may open the file now.
      if (this.core.hasAgent) this.agent.session.release();
    })();
    return this.#ended;
  }

  // ---- modes and config options --------------------------------------------------------

  /** The response that names the session: from now on the client knows it by this id. */
  state(): NewSessionResponse {
    this.#clientId ??= this.piSessionId;
    return { sessionId: this.id, modes: this.#modes(), configOptions: this.#configOptionsNow() };
  }

  #modes(): SessionModeState {
    return {
      currentModeId: this.agent.thinkingLevel,
      availableModes: this.agent
        .availableThinkingLevels()
        .map((level) => ({ id: level, name: `Thinking: ${level}`, description: `Reasoning effort ${level}` })),
    };
  }

  setThinking(level: string): void {
    const available = this.agent.availableThinkingLevels();
    if (!isThinkingLevel(level) || !available.includes(level)) {
      throw this.#sdk.RequestError.invalidParams(undefined, `${JSON.stringify(level)} is not a thinking level of this model (${available.join(", ")})`);
    }
    // thinking_level_changed follows, which tells the client (#onAgentRecord).
    this.agent.setThinkingLevel(level);
  }

  async setConfigOption(configId: string, value: unknown): Promise<SessionConfigOption[]> {
    if (typeof value !== "string") throw this.#sdk.RequestError.invalidParams(undefined, `config option ${configId} takes a string value`);
    if (configId === MODEL_OPTION) await this.#setModel(value);
    else if (configId === THINKING_OPTION) this.setThinking(value);
    else throw this.#sdk.RequestError.invalidParams(undefined, `no config option ${configId} (options: ${MODEL_OPTION}, ${THINKING_OPTION})`);
    return this.#configOptions();
  }

  async #setModel(value: string): Promise<void> {
    await this.agent.models.loadCatalog();
    const slash = value.indexOf("/");
    const found = slash > 0 ? this.agent.models.findModel(value.slice(0, slash), value.slice(slash + 1)) : undefined;
    if (!found) throw this.#sdk.RequestError.invalidParams(undefined, `no model ${JSON.stringify(value)} (values are provider/id, see the model option)`);
    this.agent.setModel(found);
  }

  async #configOptions(): Promise<SessionConfigOption[]> {
    await this.agent.models.loadCatalog().catch((error: unknown) => this.#link.log(`the model catalogue failed to load: ${errorMessage(error)}`));
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
  sendName(): void {
    const name = this.agent.session.name;
    if (name !== undefined) this.#link.update(this.id, { sessionUpdate: "session_info_update", title: name });
  }

  sendCommands(): void {
    const availableCommands = this.core.runtime.commandList().map((c) => ({ name: c.name, description: c.description ?? "", input: { hint: "arguments" } }));
    this.#link.update(this.id, { sessionUpdate: "available_commands_update", availableCommands });
  }

  // ---- what the agent and the extensions report -------------------------------------------------

  #onAgentRecord(record: Record<string, unknown>): void {
    const sessionId = this.id;
    if (record["type"] === "thinking_level_changed") {
      this.#link.update(sessionId, { sessionUpdate: "current_mode_update", currentModeId: this.agent.thinkingLevel });
      this.#link.update(sessionId, { sessionUpdate: "config_option_update", configOptions: this.#configOptionsNow() });
      return;
    }
    for (const update of this.#mapper.map(record)) this.#link.update(sessionId, update);
  }

  /** The host's records (RPC records, as it writes them in RPC mode): fire-and-forget UI, the session's name, extension errors. */
  #onHostRecord(record: object): void {
    const sessionId = this.id;
    if (isFireAndForget(record)) this.#fireAndForget(sessionId, record);
    else if (isRecord(record, "session_info_changed")) {
      this.#link.update(sessionId, { sessionUpdate: "session_info_update", title: typeof record["name"] === "string" ? record["name"] : null });
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
        this.#link.update(sessionId, { sessionUpdate: "session_info_update", title: request.title });
        return;
      default:
        break;
    }
    // Status, widgets and editor text, which ACP has no update for: the host's UI state (the
    // protocol's reducer) already holds them.
    const { statuses, widgets, editorText } = this.core.host.uiState();
    const ui = { statuses, widgets, ...(editorText !== undefined ? { editorText } : {}) };
    this.#link.update(sessionId, { sessionUpdate: "session_info_update", _meta: { parley: { ui } } });
  }

  /** A notice where the client shows them (session.notices), else an agent message. */
  #notice(sessionId: string, severity: "info" | "warning" | "error", title: string, description?: string): void {
    if (this.#link.clientCapabilities().session?.notices != null) {
      this.#link.update(sessionId, { sessionUpdate: "notice", severity, title, ...(description !== undefined ? { description } : {}) });
      return;
    }
    const label = severity === "info" ? "" : `${severity}: `;
    this.#link.update(sessionId, {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: `\n[${label}${title}${description !== undefined ? ` — ${description}` : ""}]\n` },
    });
  }
}

/** The host builds these from the protocol's own types (rpc-ui-context.ts); this tells them apart. */
function isFireAndForget(record: object): record is FireAndForgetRequest {
  return isRecord(record, "extension_ui_request") && isFireAndForgetMethod(record["method"]);
}

function isRecord(record: object, type: string): record is Record<string, unknown> {
  return (record as { type?: unknown }).type === type;
}
