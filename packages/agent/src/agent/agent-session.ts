/**
 * The agent: pi-agent-core's loop with parley's models, tools, session and extension hooks.
 * Commands call its methods; it reports everything that happens as wire records through `emit`.
 */
import { explainNetworkFailure, watchNetworkFailures } from "../models/network-failures.js";
import type {
  AfterToolCallResult,
  Agent,
  AgentContext,
  AgentEvent,
  AgentLoopTurnUpdate,
  AgentMessage,
  AgentRequestUpdate,
  AgentTool,
  BeforeToolCallResult,
  StreamFn,
} from "@earendil-works/pi-agent-core";
import type {
  Api,
  AssistantMessage,
  AssistantMessageEventStream,
  ImageContent,
  Message,
  Model,
  SimpleStreamOptions,
  TextContent,
  ToolResultMessage,
  TranscriptContext,
} from "@earendil-works/pi-ai";
import type { PromptDisposition, QueueMode, RpcEvent, ThinkingLevel } from "@parley/protocol";
import { convertToLlm } from "../extensions/compat/messages.js";
import type { ExtensionRuntime } from "../extensions/runtime.js";
import type { ContextUsage, CustomMessageInput } from "../extensions/types.js";
import type {} from "./agent-messages.js";
import { registerParleyProviders, withExtensionProviders, type ExtensionProviders, type ModelResolution } from "../models/index.js";
import { closeInterruptedCalls } from "./interrupted-calls.js";
import { refusalText, type SaveNotice, type Session, type SessionEntry } from "../session/session.js";
import type { AgentConfig } from "./agent-config.js";
import { AutoRetry, isRetryableError, RETRY_CANCELLED } from "./auto-retry.js";
import type { SummaryRetry } from "./summary-retry.js";
import type { CompactionReason, CompactionResult } from "./compaction-host.js";
import type { CompactionSettings } from "./compaction-cut.js";
import { Compactor, loadCompactionRun } from "./compactor.js";
import type { ToolsOptions } from "../tools/index.js";
import { blockImages } from "./block-images.js";
import type { ScopedModelChoice } from "../models/model-scope.js";
import { type CycledModel, ModelSelection } from "./model-selection.js";
import { StartModel, type StartupChoice } from "./start-model.js";
import { MessageQueues } from "./message-queues.js";
import { contextUsage } from "./context-usage.js";
import { beforeProviderHeaders, beforeProviderRequest, routedOptions, withProviderRequest } from "./provider-request.js";
import { withRequestAuth } from "../models/request-auth.js";
import { CacheWarmer, type WarmerClock } from "./cache-warmer.js";
import { customMessage, PromptIntake, type PromptOptions, type QueueKind, type UserContent } from "./prompt-intake.js";
import { UserBash, type BashResult } from "./user-bash.js";
import { buildSystemPromptSections, type PromptSections, renderSystemPrompt } from "./system-prompt.js";
import { ToolRegistry } from "./tool-registry.js";
import { afterModelCall, beforeModelCall, completeResultMessage, withAbortGrace } from "./model-tool-calls.js";
import { NestedToolCalls, type NestedCallEvent } from "./nested-tool-calls.js";
import { toolContext } from "./tool-context.js";
import { toolCallVerdict, toolResultChange } from "./tool-hooks.js";
import { toWireEvent } from "./wire-events.js";
import { loopMessages } from "./loop-messages.js";
import { RunBoundaries } from "./run-boundary.js";
import { foldSystemMessages, type RequestSystem, systemPromptPatch, withSystemMessage } from "./system-context.js";
import { customMessage as customEntryMessage, toolName } from "../session/context.js";
import { errorMessage, errorText } from "../error-text.js";
import { type PiAi, loadPiAi, piAiIfLoaded } from "../models/pi-ai.js";
import { isVirtualModel, lastModelChange, latestResponse, type Route } from "../models/virtual-models.js";
import { failedRequest, LoopRouting, stampThinkingLevel } from "./virtual-routing.js";
import { ABORT_GRACE_MS } from "../abort-grace.js";
import { noApiKeyMessage } from "./auth-guidance.js";
import { formatSkillsForPrompt } from "../resources/index.js";
import type { OutputPressure } from "../output-pressure.js";

/** Writes one event record; events are the protocol's, so one that drifts from the wire does not compile. */
export type Emit = (event: RpcEvent) => void;

export interface AgentSessionOptions {
  cwd: string;
  runtime: ExtensionRuntime;
  models: ModelResolution;
  session: Session;
  emit: Emit;
  /**
   * Whether the client keeps up with what `emit` writes. While it does not, the loop waits before
   * taking the model's next event, and the `bash` command stops reading its output.
   */
  output?: OutputPressure;
  /** --system-prompt: replaces the built-in prompt text (config.prompt.custom wins over it). */
  customSystemPrompt?: string | undefined;
  /** pi's settings and start-up flags (queue modes, compaction, retry, shell, prompt, tools). */
  config?: AgentConfig | undefined;
  /** The clock prompt-cache warming waits on (tests move a fake one); the real one by default. */
  warmerClock?: WarmerClock | undefined;
  log: (message: string) => void;
}

import { AgentError } from "./agent-error.js";

export { AgentError };

/** The loop's state before pi-agent-core is loaded; the Agent takes it over when it is created. */
interface LocalLoop {
  state: { model: Model<Api>; thinkingLevel: ThinkingLevel; messages: AgentMessage[] };
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  /** Messages steered or queued while a prompt was being prepared, before the Agent existed. */
  steer: AgentMessage[];
  followUp: AgentMessage[];
}

/**
 * Whether the agent works, as one state: `idle`; `preparing` (a prompt that will start a run is
 * being prepared: input handlers, expansion, before_agent_start; other prompts wait for it);
 * `running` (the loop owns the context until `run` settles, retry and auto-compaction included).
 * Compaction outside a run is the compaction module's own state (`isCompacting`).
 */
type RunState = { name: "idle" } | { name: "preparing"; prepared: Promise<void> } | { name: "running"; run: Promise<void> };

/** The run states each one may move to; #enterRunState() refuses anything else. */
const RUN_TRANSITIONS: Record<RunState["name"], readonly RunState["name"][]> = {
  idle: ["preparing", "running"],
  preparing: ["running", "idle"],
  running: ["idle"],
};

/** settings' shellPath and shellCommandPrefix, for the `bash` command and the bash tool. */
function shellOptions(config: AgentConfig): { shellPath?: string; commandPrefix?: string } {
  return {
    ...(config.shellPath ? { shellPath: config.shellPath } : {}),
    ...(config.shellCommandPrefix ? { commandPrefix: config.shellCommandPrefix } : {}),
  };
}

/** The built-in tools' settings: the shell, and the read tool's image resizing. */
function builtInToolOptions(config: AgentConfig, shell: ReturnType<typeof shellOptions>): ToolsOptions {
  return { bash: shell, ...(config.autoResizeImages !== undefined ? { read: { autoResizeImages: config.autoResizeImages } } : {}) };
}

function retryOptions(config: AgentConfig): { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number } {
  return {
    ...(config.retry?.maxRetries !== undefined ? { maxAttempts: config.retry.maxRetries } : {}),
    ...(config.retry?.baseDelayMs !== undefined ? { baseDelayMs: config.retry.baseDelayMs } : {}),
    ...(config.retry?.maxAgentDelayMs !== undefined ? { maxDelayMs: config.retry.maxAgentDelayMs } : {}),
  };
}

export class AgentSession {
  readonly tools: ToolRegistry;
  readonly models: ModelResolution & ExtensionProviders;
  #session: Session;
  #options: AgentSessionOptions;
  readonly #runtime: ExtensionRuntime;
  readonly #emit: Emit;
  /**
   * pi-agent-core's Agent, created on first need: loading it (and the tools' schemas, and pi-ai)
   * costs ~250 ms that start-up and the first get_state should not pay.
   */
  #core: Agent | undefined;
  /** The system prompt the next request is sent with (the Agent keeps its tools; the prompt stays here, see #request). */
  #prompt = "";
  /** The prompt's sections as the run records them (a before_agent_start handler's forced text is sent, never recorded). */
  #promptSections: PromptSections = {};
  /** The text a before_agent_start handler forced for the current run, if any. */
  #forcedPrompt: string | undefined;
  #coreLoading: Promise<Agent> | undefined;
  readonly #local: LocalLoop;
  readonly #listeners = new Set<(event: AgentEvent) => void>();
  /** Steering messages and follow-ups waiting for the loop (message-queues.ts). */
  readonly #queues: MessageQueues;
  /** Custom messages sent with deliverAs "nextTurn": they ride along with the next prompt. */
  #nextTurn: AgentMessage[] = [];
  #runState: RunState = { name: "idle" };
  /** Settles when the session switch under way ends (new_session, switch_session, fork, clone). */
  #switch: Promise<unknown> | undefined;
  #turnIndex = 0;
  /** turn_end and agent_before_settle with their entry drafts and continuations (run-boundary.ts). */
  readonly #boundaries: RunBoundaries;
  /** A boundary appended entries during this run: the loop's own copy of the context is stale. */
  #contextFromSession = false;
  autoCompactionEnabled = true;
  autoRetryEnabled = true;

  constructor(options: AgentSessionOptions) {
    const agent = this;
    this.#options = options;
    this.#runtime = options.runtime;
    this.#runtime.awaited.windingDown = () => this.#core?.signal?.aborted === true;
    this.#emit = options.emit;
    this.models = withExtensionProviders(options.models);
    this.#selection = new ModelSelection({
      models: this.models,
      runtime: options.runtime,
      state: () => this.#state,
      session: () => this.#session,
      config: () => this.#options.config,
      checkAuth: (model) => this.#checkAuth(model),
      emit: (event) => this.#emit(event),
    });
    this.#session = options.session;
    options.session.onSave = this.#onSave;
    closeInterruptedCalls(options.session);
    this.#boundaries = new RunBoundaries({
      session: () => this.#session,
      runtime: options.runtime,
      pendingMessages: () => this.#queues.pending(),
      appended: (entries) => {
        // A compaction or a context edit reshapes the context (rebuilt from the session); other entries add their message, if any.
        if (entries.some((e) => e.type === "compaction" || e.type === "context_edit")) this.#state.messages = loopMessages(this.#session.buildContext());
        else this.#state.messages = [...this.#state.messages, ...entries.flatMap((e) => (e.type === "custom_message" ? [customEntryMessage(e)] : []))];
        this.#contextFromSession = true;
      },
      emit: (event) => this.#emit(event),
    });
    // Built once: a resumed session's context can be large, and settings come from the same path.
    const context = options.session.buildSessionContext();
    const config = options.config ?? {};
    const shell = shellOptions(config);
    this.#bash = new UserBash(this, options.cwd, shell);
    this.#retry = new AutoRetry(retryOptions(config));
    this.autoRetryEnabled = config.retry?.enabled ?? true;
    this.autoCompactionEnabled = config.compaction?.enabled ?? true;
    this.tools = new ToolRegistry(
      options.cwd,
      (path, toolCallId, signal) => toolContext(this.#runtime.contextFor(path), toolCallId, signal, this.#nestedRunner),
      config.tools,
      builtInToolOptions(config, shell),
    );
    this.tools.onLoadoutError = (extensionPath, error) =>
      this.#runtime.reportError({ extensionPath: extensionPath ?? "<builtin>", event: "prepare_loadout", ...errorText(error) });
    this.#local = {
      state: {
        model: options.models.model,
        thinkingLevel: options.models.thinkingLevel,
        messages: loopMessages(context.messages),
      },
      steeringMode: config.steeringMode ?? "one-at-a-time",
      followUpMode: config.followUpMode ?? "one-at-a-time",
      steer: [],
      followUp: [],
    };
    this.#queues = new MessageQueues({
      loop: () => this.#core,
      local: () => this.#local,
      emit: (event) => this.#emit(event),
    });
    this.#intake = new PromptIntake({
      runtime: options.runtime,
      cwd: () => this.#options.cwd,
      session: () => this.#session,
      get isSwitching() {
        return agent.isSwitching;
      },
      afterSwitches: () => this.afterSwitches(),
      get isCompacting() {
        return agent.isCompacting;
      },
      get isStreaming() {
        return agent.isStreaming;
      },
      preparation: () => (this.#runState.name === "preparing" ? this.#runState.prepared : undefined),
      beginPreparing: () => this.#beginPreparing(),
      unlessAborted: (work, onAbort) => this.#unlessAborted(work, onAbort),
      checkAuth: () => this.#checkAuth(),
      ensureCore: () => this.ensureCore(),
      systemPrompt: () => this.systemPrompt(),
      setEffectivePrompt: (prompt) => {
        this.#effectivePrompt = prompt;
      },
      takeNextTurn: () => this.#nextTurn.splice(0),
      startPrompt: (forcedPrompt, messages) => {
        this.#takePrompt(forcedPrompt);
        const patched = [...this.#promptPatch(), ...messages];
        this.#startRun((core) => core.prompt(patched));
      },
      enqueue: (kind, text, images) => this.#queues.enqueue(kind, text, images),
    });
    this.#start = new StartModel(
      {
        models: this.models,
        state: () => this.#state,
        modelLevel: (model) => this.#selection.modelLevel(model),
        log: (message) => this.#options.log(message),
      },
      options.session,
      context,
      options.models,
    );
  }

  /**
   * Settings known only after the agent was made: a project trusted by an extension's
   * project_trust handler, whose settings and SYSTEM.md apply from then on (before any prompt).
   */
  async configure(config: AgentConfig): Promise<void> {
    this.#options = { ...this.#options, config };
    const shell = shellOptions(config);
    this.#bash = new UserBash(this, this.#options.cwd, shell);
    this.#retry = new AutoRetry(retryOptions(config));
    this.autoRetryEnabled = config.retry?.enabled ?? true;
    this.autoCompactionEnabled = config.compaction?.enabled ?? true;
    this.tools.setPolicy(config.tools ?? {});
    await this.tools.setBuiltInOptions(builtInToolOptions(config, shell));
    this.#syncTools();
    this.steeringMode = config.steeringMode ?? "one-at-a-time";
    this.followUpMode = config.followUpMode ?? "one-at-a-time";
  }

  /** A new session's tools: the start-up selection again, as pi's fresh runtime has them (tool-registry.ts). */
  restartTools(): void {
    this.tools.restart();
    this.#syncTools();
  }

  /**
   * The tools the current branch's system messages record, taken up as pi 1.6 does (a stored
   * session opened: `atStart`; the tree navigated), so that the next run declares only what
   * changed since the model last saw them. A branch without any keeps the current tools.
   */
  restoreTools(atStart: boolean): void {
    const recorded = new Map<string, true>();
    const mentioned = new Set<string>();
    let any = false;
    for (const entry of this.#session.branch()) {
      if (entry.type !== "message" || entry.message.role !== "system") continue;
      any = true;
      // Declarations come from the file: one without a name is passed over.
      for (const tool of entry.message.toolsRemoved ?? []) {
        const name = toolName(tool);
        if (name === undefined) continue;
        recorded.delete(name);
        mentioned.add(name);
      }
      for (const tool of entry.message.toolsAdded ?? []) {
        const name = toolName(tool);
        if (name === undefined) continue;
        recorded.set(name, true);
        mentioned.add(name);
      }
    }
    if (!any) return;
    this.#syncTools();
    this.tools.restore([...recorded.keys()], mentioned, atStart);
    this.#syncTools();
  }

  /** A switch to a session of another folder (as in pi): user bash, the built-in tools and the system prompt work there from now on. */
  async moveTo(cwd: string): Promise<void> {
    this.#options = { ...this.#options, cwd };
    this.#bash = new UserBash(this, cwd, shellOptions(this.#options.config ?? {}));
    await this.tools.moveTo(cwd);
  }

  /** The loop's state: the Agent's once it exists, the local copy before. */
  get #state(): LocalLoop["state"] {
    return this.#core?.state ?? this.#local.state;
  }

  /** Loads pi-agent-core and the built-in tools (once) and creates the Agent from the local state. */
  ensureCore(): Promise<Agent> {
    this.#coreLoading ??= (async () => {
      // Compaction loads with the loop: the check after each run must not wait for a file.
      const [{ Agent }] = await Promise.all([
        import("@earendil-works/pi-agent-core"),
        this.tools.load(),
        this.models.loadCatalog(),
        loadCompactionRun(),
        // parley's local models reach the loop through pi-ai's provider registry.
        registerParleyProviders(),
      ]);
      const local = this.#local;
      const config = this.#options.config ?? {};
      const request = config.provider ?? {};
      const { streamSimple } = await loadPiAi();
      // The Agent gets no prompt and no tools at first, so its transcript holds no system message:
      // the request's leading system message is made per request (#request).
      const core = new Agent({
        initialState: { ...local.state },
        streamFn: (selected, context, options) => this.#send(streamSimple, selected, context, options),
        prepareRequest: (request, signal) => this.#prepareRoute(request.model, request.context.messages, signal),
        prepareNextTurnWithContext: (turn) => this.#nextTurnPrompt(turn.context),
        convertToLlm: config.blockImages ? (messages) => blockImages(convertToLlm(messages)) : (messages) => convertToLlm(messages),
        transformContext: (messages) => this.#transformContext(messages),
        beforeToolCall: (context) => this.#beforeToolCall(context.toolCall.id, context.toolCall.name, context.args),
        // Extension hooks as the loop's own (model-tool-calls.ts): the loop keeps terminate, isError, structuredContent and usage.
        afterToolCall: (context) => this.#afterToolCall(context.toolCall.id, context.toolCall.name, context.args, context.result, context.isError),
        steeringMode: local.steeringMode,
        followUpMode: local.followUpMode,
        sessionId: this.#session.id,
        // settings.json's transport, thinking budgets and provider retry cap, as pi gives them to its Agent.
        ...(request.transport !== undefined ? { transport: request.transport } : {}),
        ...(request.thinkingBudgets !== undefined ? { thinkingBudgets: request.thinkingBudgets } : {}),
        ...(request.maxRetryDelayMs !== undefined ? { maxRetryDelayMs: request.maxRetryDelayMs } : {}),
        // The newest pi's provider hooks: a handler may replace the request's payload, and hears
        // the response's status and headers before its body is read.
        onPayload: (payload) => beforeProviderRequest(this.#runtime, payload),
        onResponse: async (response) => {
          if (this.#runtime.hasHandlers("after_provider_response"))
            await this.#runtime.emit({ type: "after_provider_response", status: response.status, headers: response.headers });
        },
        // Each parsed provider event before pi-ai normalises it, awaited in stream order (pi 1.6).
        onProviderStreamEvent: async (data, model) => {
          if (this.#runtime.hasHandlers("provider_stream_event"))
            await this.#runtime.emit({ type: "provider_stream_event", data, provider: model.provider, api: model.api, model: model.id });
        },
      });
      core.subscribe(async (event) => {
        await this.#onAgentEvent(event);
        for (const listener of [...this.#listeners]) listener(event);
      });
      for (const m of local.steer.splice(0)) core.steer(m);
      for (const m of local.followUp.splice(0)) core.followUp(m);
      this.#core = core;
      return core;
    })();
    return this.#coreLoading;
  }

  /** Loop events for the modules that extend the agent (retry watches for the next reply). */
  subscribe(listener: (event: AgentEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The running turn's abort signal, if a turn runs. */
  get signal(): AbortSignal | undefined {
    return this.#core?.signal;
  }

  /** The model and level each session starts with (start-model.ts). */
  readonly #start: StartModel;

  /** Records what the current session starts with, once, before session_start (its handlers see the entries). */
  recordSessionStart(): void {
    this.#start.recordSessionStart(this.#session);
  }

  // ---- state -------------------------------------------------------------------------

  get session(): Session {
    return this.#session;
  }
  get model(): Model<Api> {
    return this.#state.model;
  }

  /**
   * The model whose limits apply to `message`, undefined when another model produced it. Under a
   * virtual selection, the physical model that answered.
   */
  modelForMessage(message: AssistantMessage): Model<Api> | undefined {
    const model = this.model;
    if (isVirtualModel(model)) return this.models.physicalModel(message.provider, message.model);
    return model.provider === message.provider && model.id === message.model ? model : undefined;
  }

  /** The model whose context window counts: under a virtual selection, the one behind the latest response (else the virtual model's own limits). */
  get limitsModel(): Model<Api> {
    const model = this.model;
    if (!isVirtualModel(model)) return model;
    const latest = latestResponse(this.messages);
    return (latest && this.models.physicalModel(latest.provider, latest.model)) ?? model;
  }

  /** The context window a reply is judged against (a context overflow is not retried). */
  contextWindowFor(message: AssistantMessage): number {
    return (this.modelForMessage(message) ?? this.model).contextWindow ?? 0;
  }

  /** A request outside the loop (a compaction or branch summary) under a virtual selection: the router picks its model. */
  routeDirect(messages: Message[], signal: AbortSignal): Promise<Route> {
    return this.#routing.direct(this.model, messages, signal);
  }

  readonly #routing = new LoopRouting(this);
  /**
   * A model call made beside the loop (a summary) gets what the loop's own requests get: settings'
   * timeouts and retries, and the headers `before_provider_headers` handlers leave (the newest pi
   * sends summaries through its session's stream function for the same reason).
   */
  requestOptions(model: Model<Api>, options: SimpleStreamOptions): Promise<SimpleStreamOptions | undefined> {
    return beforeProviderHeaders(this.#runtime, model.headers, withProviderRequest(options, this.#options.config?.provider ?? {}));
  }
  /** settings.json `branchSummary.reserveTokens` (branch summaries of ctx.navigateTree). */
  get branchSummaryReserveTokens(): number | undefined {
    return this.#options.config?.branchSummaryReserveTokens;
  }
  get thinkingLevel(): ThinkingLevel {
    return this.#state.thinkingLevel;
  }
  /** The system prompt in effect: the running turn's, or what before_agent_start has made of it so far. */
  #effectivePrompt: string | undefined;

  currentSystemPrompt(): string {
    return this.#effectivePrompt ?? this.systemPrompt();
  }

  /** A run is going, or a prompt is being prepared to start one. */
  get isStreaming(): boolean {
    return this.#runState.name !== "idle";
  }
  /**
   * The loop owns the context: a run has started and not settled. A prompt still being prepared
   * does not count (it adds its messages only when it starts the run).
   */
  get isRunning(): boolean {
    return this.#runState.name === "running";
  }

  /** Where the agent is: idle, preparing a prompt's run, or running (see RunState). */
  get runState(): RunState["name"] {
    return this.#runState.name;
  }

  /** Every run-state change goes through here, so RUN_TRANSITIONS are the only ones. */
  #enterRunState(next: RunState): void {
    if (!RUN_TRANSITIONS[this.#runState.name].includes(next.name)) throw new Error(`AgentSession: cannot go from ${this.#runState.name} to ${next.name}`);
    this.#runState = next;
  }
  get steeringMode(): QueueMode {
    return this.#core?.steeringMode ?? this.#local.steeringMode;
  }
  set steeringMode(mode: QueueMode) {
    this.#local.steeringMode = mode;
    if (this.#core) this.#core.steeringMode = mode;
  }
  get followUpMode(): QueueMode {
    return this.#core?.followUpMode ?? this.#local.followUpMode;
  }
  set followUpMode(mode: QueueMode) {
    this.#local.followUpMode = mode;
    if (this.#core) this.#core.followUpMode = mode;
  }
  get pendingMessageCount(): number {
    return this.#queues.count;
  }
  get messages(): AgentMessage[] {
    // With the system messages the transcript records (the prompt and tool declarations), as pi 1.6 returns them.
    return this.#state.messages;
  }

  /** Replaces the context the next model call sees (compaction, retries, the bash command). */
  set messages(messages: AgentMessage[]) {
    this.#state.messages = messages;
  }

  /**
   * A switch under way is a barrier for what a client sends after it: `new_session` then `prompt`
   * in one write means "prompt in the new session" (a prompt prepared before the switch came is
   * refused instead: see prompt()). Extensions' own messages do not wait: a session_start handler
   * may send one while the switch awaits it.
   */
  async switching<T>(work: () => Promise<T>): Promise<T> {
    const done = work();
    const barrier = done.then(
      () => undefined,
      () => undefined,
    );
    this.#switch = barrier;
    try {
      return await done;
    } finally {
      if (this.#switch === barrier) this.#switch = undefined;
    }
  }

  /**
   * Waits until no switch is under way (one may follow another): what a client sends after a
   * switch belongs to the new session (an extension command too: the new instances run it).
   */
  async afterSwitches(): Promise<void> {
    while (this.#switch) await this.#switch;
  }

  /** A switch is under way: only then wait for it (waiting when none is would let a later switch go first). */
  get isSwitching(): boolean {
    return this.#switch !== undefined;
  }

  /**
   * Replaces the session (new, switch, fork): the agent continues from its context, with the model
   * and level pi would start it with, recorded in it.
   */
  useSession(session: Session, resumed = false): void {
    // The session left is no longer written by this agent: its file's lock goes (counted, so a
    // switch to the same file keeps it).
    if (this.#session !== session) this.#session.release();
    // As pi disposes the session it leaves: pi-ai's per-session state (an Anthropic message
    // thread's continuation among it) goes, so a session taken up again starts a new thread.
    piAiIfLoaded()?.cleanupSessionResources(this.#session.id);
    // The cache entry being warmed was the session left's.
    this.#warmer?.cancel();
    this.#session = session;
    session.onSave = this.#onSave;
    // A stored session taken up again (not a new, forked or cloned one, whose open call may still
    // be running in the session it was copied from, as in pi, which writes nothing for it).
    if (resumed) closeInterruptedCalls(session);
    if (this.#core) this.#core.sessionId = session.id;
    const context = session.buildSessionContext();
    this.#state.messages = loopMessages(context.messages);
    this.#nextTurn = [];
    this.#start.sessionChanged(session, context);
    this.recordSessionStart();
  }

  /** The current session's path changed (tree navigation, a new session's seed): the context follows; model and level stay, as in pi. */
  refreshContext(): void {
    this.#state.messages = loopMessages(this.#session.buildSessionContext().messages);
    this.#nextTurn = [];
  }

  /**
   * The model chosen at start-up, once extensions have registered their providers. Unless the
   * command line chose it, a resumed session's own model (when still usable) wins, as in pi.
   */
  applyStartupModel(choice: StartupChoice): void {
    this.#start.applyStartupModel(choice);
  }

  systemPrompt(): string {
    return renderSystemPrompt(this.systemPromptSections());
  }

  /** The prompt's named sections for the tools now declared and the resources now loaded (system-prompt.ts). */
  systemPromptSections(): PromptSections {
    this.#syncTools();
    const prompt = this.#options.config?.prompt;
    const active = this.tools.activeNames();
    const hidden = this.tools.hiddenDeclarations();
    const declared = active.filter((name) => !hidden.has(name));
    // Skills are offered when the model can read their files, as in pi: with read or bash, or
    // through another tool when that one is active but not declared (then the hint names none).
    const readers = ["read", "bash"] as const;
    const reader = readers.find((name) => declared.includes(name)) ?? (readers.some((name) => active.includes(name)) ? "indirect" : undefined);
    const definitions = new Map(this.tools.all().map((t) => [t.definition.name, t.definition]));
    return buildSystemPromptSections({
      skillsSection: reader ? formatSkillsForPrompt(this.#runtime.resources.skills, reader) : "",
      cwd: this.#options.cwd,
      custom: prompt?.custom ?? this.#options.customSystemPrompt,
      append: prompt?.append,
      contextFiles: prompt?.contextFiles,
      tools: declared.flatMap((name) => {
        const definition = definitions.get(name);
        return definition ? [{ name, promptSnippet: definition.promptSnippet, promptGuidelines: definition.promptGuidelines }] : [];
      }),
    });
  }

  /** Tokens in the context as pi reckons them (context-usage.ts). */
  contextUsage(): ContextUsage | undefined {
    return contextUsage(this.limitsModel.contextWindow, this.messages, this.#session.branch());
  }

  // ---- prompting ---------------------------------------------------------------------

  /** Prompts, steering and follow-ups on their way in (prompt-intake.ts). */
  readonly #intake: PromptIntake;

  /** Accepts a prompt: runs it, or queues it while the agent streams (prompt-intake.ts). */
  prompt(text: string, images: ImageContent[] | undefined, options: PromptOptions): Promise<PromptDisposition> {
    return this.#intake.prompt(text, images, options);
  }

  /** Queues a steering message or a follow-up, after extensions' input handlers (prompt-intake.ts). */
  queue(kind: QueueKind, text: string, images: ImageContent[] | undefined): "queued" | Promise<"queued" | "handled"> {
    return this.#intake.queue(kind, text, images);
  }

  /** `/skill:name args` and `/template args` → the text the model gets; anything else unchanged. */
  expandCommands(text: string): string {
    return this.#intake.expandCommands(text);
  }

  /** pi.sendUserMessage: a prompt from an extension (prompt-intake.ts). */
  sendUserMessage(content: UserContent, options: { deliverAs?: string; expandPromptTemplates?: boolean } = {}): Promise<void> {
    return this.#intake.sendUserMessage(content, options);
  }

  /** Enters the `preparing` run state; what it gives back leaves it, unless the prompt started a run. */
  #beginPreparing(): () => void {
    let prepared!: () => void;
    this.#enterRunState({ name: "preparing", prepared: new Promise<void>((resolve) => (prepared = resolve)) });
    return () => {
      if (this.#runState.name === "preparing") this.#enterRunState({ name: "idle" });
      prepared();
    };
  }

  clearQueue(): { steering: string[]; followUp: string[] } {
    return this.#queues.clear();
  }

  hasPendingMessages(): boolean {
    return this.#queues.hasPending();
  }

  /**
   * Stops the run, its retry and a compaction in progress (manual or automatic, as the newest pi:
   * it ends with "Compaction cancelled" and appends nothing). Queued steering and follow-up
   * messages stay queued, as in pi: the next prompt's run delivers them (clear_queue drops them).
   */
  async abort(): Promise<void> {
    if (this.#runState.name === "running") this.#runAborted = true;
    this.#retry.abort();
    this.#compactor.abort();
    this.#core?.abort();
    // A route prepared for a request the abort ends before it is sent answers for no later one.
    this.#routing.dropPrepared();
    // Any other extension code being waited on (a tool_call or session_before_compact handler, a command) ends within the grace.
    this.#runtime.awaited.letGo();
    // Extension handlers the run or a prompt's preparation waits on are waited on no longer.
    for (const release of [...this.#waiting]) release();
    if (this.#runState.name === "running") await this.#runState.run;
  }

  /** Releases of the extension handlers being waited on (see #unlessAborted). */
  readonly #waiting = new Set<() => void>();

  /**
   * Waits for extension handlers, but not past an abort: a handler that never returns must not
   * keep a run (or a prompt's preparation) from ending. On abort, `onAbort` answers instead (it
   * may throw); a result the handler gives later is not used. pi waits for ever here.
   */
  #unlessAborted<T>(work: Promise<T>, onAbort: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const release = (): void => {
        try {
          resolve(onAbort());
        } catch (error) {
          reject(error);
        }
      };
      this.#waiting.add(release);
      // After the run's abort, its remaining events' handlers get a grace period each (one that
      // hangs on every event would otherwise need an abort per event).
      const grace = this.#core?.signal?.aborted ? setTimeout(release, ABORT_GRACE_MS) : undefined;
      grace?.unref();
      work.then(resolve, reject).finally(() => {
        this.#waiting.delete(release);
        clearTimeout(grace);
      });
    });
  }

  /**
   * Resolves when no run is going (`isRunning` is false). Each turn of the loop waits for a run
   * to settle, so a caller looping on `isRunning` always waits for something real.
   */
  async waitForIdle(): Promise<void> {
    for (let state = this.#runState; state.name === "running"; state = this.#runState) await state.run;
  }

  sendMessage(input: CustomMessageInput, options: { triggerTurn?: boolean; deliverAs?: string } = {}): void {
    const message = customMessage(input);
    if (this.isStreaming) {
      if (options.deliverAs === "followUp") this.#queues.hand("followUp", message);
      else if (options.deliverAs === "nextTurn") this.#nextTurn.push(message);
      else this.#queues.hand("steer", message);
      return;
    }
    if (options.deliverAs === "nextTurn") {
      this.#nextTurn.push(message);
      return;
    }
    if (options.triggerTurn) {
      this.#checkAuth();
      this.#startRun((core) => {
        this.#takePrompt(undefined);
        return core.prompt([...this.#promptPatch(), message]);
      });
      return;
    }
    // Idle and no turn wanted: the message joins the context and the client sees it.
    this.#state.messages = [...this.#state.messages, message];
    void this.#onAgentEvent({ type: "message_start", message }).then(() => this.#onAgentEvent({ type: "message_end", message }));
  }

  // ---- model and thinking (model-selection.ts) ----------------------------------------------

  readonly #selection: ModelSelection;

  setModel(model: Model<Api>, source: "set" | "cycle" = "set", level?: ThinkingLevel): void {
    this.#selection.setModel(model, source, level);
  }
  /** The models cycle_model is limited to (ctx.scopedModels); empty when not scoped. */
  get scopedModels(): ScopedModelChoice[] {
    return this.#selection.scopedModels;
  }
  set scopedModels(scope: ScopedModelChoice[]) {
    this.#selection.scopedModels = scope;
  }
  cycleModel(): CycledModel | null {
    return this.#selection.cycleModel();
  }
  availableThinkingLevels(): ThinkingLevel[] {
    return this.#selection.availableThinkingLevels();
  }
  setThinkingLevel(level: ThinkingLevel, options: { force?: boolean } = {}): void {
    this.#selection.setThinkingLevel(level, options);
  }
  cycleThinkingLevel(): ThinkingLevel | null {
    return this.#selection.cycleThinkingLevel();
  }

  // ---- compaction ----------------------------------------------------------------------------

  readonly #compactor = new Compactor(this);

  get isCompacting(): boolean {
    return this.#compactor.isCompacting;
  }

  /** Summarises older context (see compactor.ts); the agent continues from the compacted context. */
  compact(customInstructions: string | undefined, reason: CompactionReason): Promise<CompactionResult> {
    // settings.json's compaction (keepRecentTokens, reserveTokens) applies to a compaction asked for too, as in pi.
    const settings = this.#compactionSettings();
    return this.#compactor.compact({ customInstructions, reason, ...(settings !== undefined ? { settings } : {}) });
  }

  /**
   * settings.json's compaction for the model in use, as the newest pi resolves it: each token
   * value from `modelOverrides["provider/modelId"]`, else the ordinary setting (else the default).
   */
  #compactionSettings(): Partial<CompactionSettings> | undefined {
    const configured = this.#options.config?.compaction;
    if (configured === undefined) return undefined;
    const { modelOverrides, ...ordinary } = configured;
    const own = modelOverrides?.[`${this.model.provider}/${this.model.id}`];
    return own === undefined ? ordinary : { ...ordinary, ...own };
  }

  // ---- the user's shell commands and retries ---------------------------------------------------

  #bash: UserBash;
  #retry: AutoRetry;

  /** Runs a command for the user (the `bash` RPC command); its output joins the next prompt's context. */
  executeBash(command: string, options: { onDelta: (delta: string) => void; excludeFromContext?: boolean }): Promise<BashResult> {
    return this.#bash.run(command, { ...options, ...(this.#options.output ? { output: this.#options.output } : {}) });
  }

  abortBash(): void {
    this.#bash.abort();
  }

  abortRetry(): void {
    this.#retry.abort();
  }

  /** A failed compaction or branch summary call is retried with the same settings as a run (summary-retry.ts). */
  get summaryRetry(): SummaryRetry {
    return {
      enabled: this.autoRetryEnabled,
      maxRetries: this.#retry.maxAttempts,
      baseDelayMs: this.#retry.baseDelayMs,
      maxDelayMs: this.#retry.maxDelayMs,
      emit: (record) => this.emit(record),
    };
  }

  /** Emits one wire record (for the modules that extend the agent: compaction, bash, retry). */
  emit(event: RpcEvent): void {
    // A retry cycle that gave up is said on stderr too, where someone watching a log looks.
    if (event.type === "auto_retry_end" && !event.success && event.finalError !== RETRY_CANCELLED)
      this.#options.log(`giving up on the request: ${event.finalError}`);
    this.#emit(event);
  }

  get runtime(): ExtensionRuntime {
    return this.#runtime;
  }

  // ---- internals --------------------------------------------------------------------------

  #checkAuth(model: Model<Api> = this.model): void {
    if (this.models.hasAuth(model)) return;
    throw new AgentError(noApiKeyMessage(model.provider));
  }

  /** The tools a request declares: the loop's, less those a `prepareLoadout` hook hides (codemode's mode `only`). */
  #declaredTools(): AgentTool<any, any>[] {
    const hidden = this.tools.hiddenDeclarations();
    return (this.#core?.state.tools ?? []).filter((tool) => !hidden.has(tool.name));
  }

  #syncTools(): void {
    this.tools.sync(this.#runtime.tools);
    if (this.#core) this.#core.state.tools = this.tools.activeTools().map(withAbortGrace);
  }

  /** Calls tools make through ctx.executeTool (created when the first is made, as in pi). */
  #nestedCalls: NestedToolCalls | undefined;

  /** The callable tools with the extensions' current registrations (an MCP server's tools registered while a call waited for it). */
  #callableTools(): AgentTool<any, any>[] {
    this.tools.sync(this.#runtime.tools);
    return this.tools.callableTools();
  }

  readonly #nestedRunner = {
    callableTools: () => this.#callableTools(),
    execute: (callerId: string, name: string, args: unknown, options: { signal?: AbortSignal; onUpdate?: (partial: unknown) => void }) => {
      this.#nestedCalls ??= new NestedToolCalls({
        callableTools: () => this.#callableTools(),
        sequential: () => this.#core?.toolExecution === "sequential",
        emit: (event) => this.#emitNestedCallEvent(event),
        hooks: {
          before: (call, callArgs) => toolCallVerdict(this.#runtime, call, callArgs),
          after: (call, callArgs, result, isError) => toolResultChange(this.#runtime, call, callArgs, result, isError),
        },
      });
      return this.#nestedCalls.execute(callerId, name, args, options);
    },
  };

  /** A nested call's tool_execution_* event: to extensions first, then the wire, as loop events go. */
  async #emitNestedCallEvent(event: NestedCallEvent): Promise<void> {
    await this.#runtime.emit(event);
    this.#emit(event);
  }

  /**
   * As the newest pi, before a run: records the selected model on the branch when the branch
   * implies another one, which only a virtual model on either side can bring about (responses name
   * physical models; tree navigation can leave the branch's latest model_change behind).
   */
  #recordSelection(): void {
    const model = this.model;
    // No virtual model on either side: nothing to record (and no branch to walk, each run).
    if (!isVirtualModel(model) && !this.models.hasVirtualModels()) return;
    const change = lastModelChange(this.#session.branch());
    if (change?.provider === model.provider && change.modelId === model.id) return;
    const recordedVirtual = change !== undefined && this.models.virtualModel(change.provider, change.modelId) !== undefined;
    if (isVirtualModel(model) || recordedVirtual) this.#session.append({ type: "model_change", provider: model.provider, modelId: model.id });
  }

  /** An abort was asked for while the current run went on (agent_settled reports it). */
  #runAborted = false;

  #startRun(run: (core: Agent) => Promise<void>): void {
    this.#recordSelection();
    this.#routing.dropPrepared();
    this.#runAborted = false;
    this.#contextFromSession = false;
    this.#boundaries.runStarted();
    const work = (async () => {
      try {
        const core = await this.ensureCore();
        this.#syncTools();
        await run(core);
      } catch (error) {
        this.#options.log(`agent run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      }
    })();
    // Retry and auto-compaction belong to the run: the agent is not idle until they are done.
    const whole = work.then(() => this.#afterRun());
    this.#enterRunState({ name: "running", run: whole });
    void whole.finally(() => {
      if (this.#runState.name !== "running" || this.#runState.run !== whole) return;
      this.#enterRunState({ name: "idle" });
      this.#effectivePrompt = undefined;
      // Nothing runs now and nothing starts by itself: messages still queued (after an abort)
      // wait for the next prompt.
      // `aborted`, as in the newest pi: the run ended because it was aborted.
      const aborted = this.#runAborted;
      this.#warmer?.onAgentSettled();
      this.#emit({ type: "agent_settled", aborted });
      void this.#runtime.emit({ type: "agent_settled", aborted });
    });
  }

  /** After each run: retry a transient failure, or compact when the context is nearly full. */
  async #afterRun(): Promise<void> {
    try {
      await this.#retryOrCompact();
      // The newest pi's run boundaries: a continuation a turn_end handler asked for that no turn
      // made, messages queued after the loop drained its queues (by agent_end handlers), then
      // agent_before_settle (skipped once the run was aborted), until none asks for more.
      while (!this.#runAborted) {
        const queued = this.#core?.hasQueuedMessages() ?? false;
        const again = this.#boundaries.takeContinuation() || queued || (await this.#boundaries.beforeSettle(() => this.#runAborted));
        if (!again || this.#runAborted) break;
        await this.continueRun();
        await this.#retryOrCompact();
      }
    } catch (error) {
      this.#options.log(`before the run settles: ${errorMessage(error)}`);
    } finally {
      await this.#releaseHeldRun();
    }
  }

  async #retryOrCompact(): Promise<void> {
    const lastReply = (): AssistantMessage | undefined => [...this.messages].reverse().find((m): m is AssistantMessage => m.role === "assistant");
    try {
      let last = lastReply();
      if (!last) return;
      // A successful retry ends with a fresh reply, which may itself fill the context.
      if (this.autoRetryEnabled && (await this.#retry.afterRun(this, last))) last = lastReply();
      if (last && this.autoCompactionEnabled) await this.#compactor.afterRun(last, this.#compactionSettings());
    } catch (error) {
      this.#options.log(`after the run: ${errorMessage(error)}`);
    }
  }

  /**
   * Continues the run from the current context: a retry after the failed reply `failed` (given
   * so a virtual model's router hears of it), or a continuation.
   */
  continueRun(failed?: AssistantMessage): Promise<void> {
    this.#routing.retrying(failed);
    return this.ensureCore().then((core) => {
      this.#syncTools();
      return core.continue();
    });
  }

  /**
   * The messages of a run whose agent_end is held: a turn_end handler asked to go on, and the loop
   * is not asked (parley hands it no `finishTurn`, as pi 1.6 does), so the run continues after the
   * loop ends (#afterRun). Holding its
   * agent_end, and not announcing the continuation's agent_start, shows one run, as pi's loop makes
   * it; the held messages lead the run's final agent_end.
   */
  #heldRun: AgentMessage[] | undefined;

  /** A held agent_end goes out after all (the continuation was not made: an abort came first). */
  async #releaseHeldRun(): Promise<void> {
    const messages = this.#heldRun;
    if (messages === undefined) return;
    this.#heldRun = undefined;
    this.#boundaries.takeContinuation();
    await this.#onAgentEvent({ type: "agent_end", messages });
  }

  async #onAgentEvent(loopEvent: AgentEvent): Promise<void> {
    if (loopEvent.type === "agent_start" && this.#heldRun !== undefined) return;
    let event = loopEvent;
    if (event.type === "agent_end") {
      const messages = [...(this.#heldRun ?? []), ...event.messages];
      this.#heldRun = undefined;
      if (this.#boundaries.owesContinuation() && !this.#runAborted) {
        this.#heldRun = messages;
        return;
      }
      event = { ...event, messages };
    }
    // A failed request is said on stderr as well as in the reply (a client may show neither).
    if (event.type === "message_end" && event.message.role === "assistant" && event.message.stopReason === "error") {
      this.#options.log(`the request to ${event.message.provider}/${event.message.model} failed: ${event.message.errorMessage ?? "no reason given"}`);
    }
    // A queued message leaves its queue when it starts (as pi shows it).
    if (event.type === "message_start") this.#queues.started(event.message);
    let wire: AgentEvent | (AgentEvent & { willRetry: boolean }) = event;
    if (event.type === "agent_start") this.#turnIndex = 0;
    // A tool's result message carries the calls it made, their usage counted in its own (newest pi).
    if (event.type === "message_start" && event.message.role === "toolResult")
      completeResultMessage(event.message, this.#nestedCalls?.take(event.message.toolCallId));
    if (event.type === "agent_end") this.#nestedCalls?.clear();
    if (event.type === "agent_end") {
      // Says whether auto-retry will continue this run, so a client knows agent_end is not final.
      const last = [...event.messages].reverse().find((m): m is AssistantMessage => m.role === "assistant");
      const willRetry = this.autoRetryEnabled && this.#retry.maxAttempts > 0 && last !== undefined && isRetryableError(last, this.contextWindowFor(last));
      wire = { ...event, willRetry };
    }
    if (event.type === "turn_start") {
      this.#boundaries.turnStarted();
      await this.#unlessAborted(this.#runtime.emit({ type: "turn_start", turnIndex: this.#turnIndex, timestamp: Date.now() }), () => undefined);
    } else if (event.type === "turn_end") {
      // Before the client's turn_end: entries the handlers append are announced first, as in pi.
      await this.#unlessAborted(this.#boundaries.turnEnd(event.message, event.toolResults, this.#turnIndex++), () => undefined);
    } else if (event.type === "message_end") {
      const final = await this.#unlessAborted(
        this.#runtime.emitChained({ type: "message_end", message: event.message }, (e, result) => ({
          event: result.message ? { ...e, message: result.message } : e,
        })),
        () => ({ type: "message_end" as const, message: event.message }),
      );
      if (final.message !== event.message) {
        // The loop keeps the object it emitted: update it in place so state and session agree.
        Object.assign(event.message, final.message);
      }
      wire = { ...event, message: event.message };
    } else {
      await this.#unlessAborted(this.#runtime.emit(wire.type === "tool_execution_end" ? wire : event), () => undefined);
    }
    this.#emit(toWireEvent(wire));
    if (event.type === "message_end") this.#persist(event.message);
    // The loop pulls the model's next event only after this returns: while the client is not
    // reading, the reply waits at its source. A tool's progress does not wait on this (the
    // loop does not await it), and each snapshot replaces the last one still unsent.
    const output = this.#options.output;
    if (output?.backedUp && event.type !== "tool_execution_update") await output.whenWritable();
  }

  /**
   * A session file that cannot be written must not go unnoticed by the client: the first failure
   * of an episode is an `extension_error` record (event "session_save") as well as a line on
   * stderr; the agent goes on, and the unsaved entries are appended once writing works again. A
   * refusal (the file is no longer this session's) is told the same way, once, saying the
   * entries stay in memory only and how to keep them.
   */
  readonly #onSave = (notice: SaveNotice): void => {
    if (notice.kind === "resumed") {
      this.#options.log(`saving to the session file ${notice.file} works again; the entries that waited are written`);
      return;
    }
    this.#runtime.reportError({
      extensionPath: "<session>",
      event: "session_save",
      error:
        notice.kind === "refused"
          ? refusalText(notice)
          : `could not save to the session file ${notice.file}: ${notice.error}. The conversation goes on in memory; ${notice.unsaved} unsaved entries are appended to the file once writing to it works again (tried with every new entry).`,
    });
  };

  #persist(message: AgentMessage): void {
    try {
      if (message.role === "custom") {
        const entry = this.#session.append({
          type: "custom_message",
          customType: message.customType,
          content: message.content,
          display: message.display,
          ...(message.details !== undefined ? { details: message.details } : {}),
        });
        this.#boundaries.saved(message, entry.id);
      } else {
        this.#boundaries.saved(message, this.#session.append({ type: "message", message }).id);
      }
    } catch (error) {
      this.#options.log(`could not save the message to the session file: ${errorMessage(error)}`);
    }
  }

  /**
   * A run starts with a system message when its prompt is not the one the transcript records, as
   * pi 1.6 stores it; pi-agent-core's loop adds the tool declarations to it (or makes its own when
   * only the tools changed). Old sessions without one get it at their next run, as in pi 1.6.
   */
  #promptPatch(transcript: readonly AgentMessage[] = this.#state.messages): AgentMessage[] {
    const patch = systemPromptPatch(this.#promptSections, transcript, Date.now());
    return patch ? [patch] : [];
  }

  /**
   * Before each later turn of a run, as pi 1.6: tools activated or deactivated during the turn
   * reach the next request (the loop declares the change), and the prompt's sections they change
   * are patched in the same system message. A forced prompt stays the run's.
   */
  #nextTurnPrompt(context: AgentContext): AgentLoopTurnUpdate {
    this.#promptSections = this.systemPromptSections();
    this.#prompt = this.#forcedPrompt ?? renderSystemPrompt(this.#promptSections);
    const patch = this.#promptPatch(context.messages);
    const tools = this.#core?.state.tools ?? context.tools ?? [];
    return { context: { ...context, tools: [...tools] }, ...(patch.length > 0 ? { messages: patch } : {}) };
  }

  /** The prompt a run starts with: its sections from the current tools and resources; the text sent, unless a handler forced one. */
  #takePrompt(forcedPrompt: string | undefined): void {
    this.#promptSections = this.systemPromptSections();
    this.#forcedPrompt = forcedPrompt;
    this.#prompt = forcedPrompt ?? renderSystemPrompt(this.#promptSections);
  }

  async #transformContext(loopMessages: AgentMessage[]): Promise<AgentMessage[]> {
    // Entries a turn_end handler appended are in the agent's state, not in the loop's own copy.
    // context handlers see no system messages, as in pi 1.6; the request gets its prompt and tools in #send.
    const messages = (this.#contextFromSession ? this.#state.messages : loopMessages).filter((m) => m.role !== "system");
    const context = this.#runtime.hasHandlers("context")
      ? (
          await this.#unlessAborted(
            this.#runtime.emitChained({ type: "context", messages }, (event, r) => ({
              event: Array.isArray(r.messages) ? { ...event, messages: r.messages } : event,
            })),
            () => ({ type: "context" as const, messages }),
          )
        ).messages
      : messages;
    this.#routing.sawContext(context);
    if (!this.#runtime.hasHandlers("context_with_system")) return context;
    // The newest pi's second phase: the transcript with its leading system message, used as returned.
    const transcript = withSystemMessage(this.#prompt, this.#declaredTools(), context);
    const folded = foldSystemMessages(await this.#unlessAborted(this.#runtime.emitContextWithSystem(transcript), () => transcript));
    this.#requestSystem = folded.system;
    return folded.messages;
  }

  /**
   * One model request. The loop's transcript may hold system messages (its tool declarations,
   * a pi 1.6 session's); the request leads with one made from the current prompt and tools, or
   * what context_with_system handlers left, as parley has sent it so far.
   */
  async #send(
    stream: StreamFn,
    selected: Model<Api>,
    context: TranscriptContext,
    options: SimpleStreamOptions | undefined,
  ): Promise<AssistantMessageEventStream> {
    const pi = await loadPiAi();
    const system = this.#requestSystem ?? { systemPrompt: this.#prompt, tools: this.#declaredTools().map(pi.toToolDeclaration) };
    this.#requestSystem = undefined;
    const sent = pi.normalizeContext({ systemPrompt: system.systemPrompt, tools: system.tools, messages: context.messages.filter((m) => m.role !== "system") });
    let model = selected;
    let routed: Route | undefined;
    if (isVirtualModel(selected)) {
      const prepared = this.#routing.takePrepared(selected, options?.signal);
      try {
        routed = await (prepared ?? this.#routing.route(selected, sent.messages, options?.signal));
      } catch (error) {
        return failedRequest(pi, selected, error, options?.signal?.aborted === true);
      }
      model = routed.model;
    } else this.#routing.requestMade();
    const requestOptions = routed ? routedOptions(options, routed.thinkingLevel) : (options ?? {});
    // As pi 1.6, each session request restarts warming from its own cache entry (a routed one is
    // not the selected model's, so its warming stops at the first check).
    this.#warmerFor(pi, stream).start({ model, context: sent, options: requestOptions }, this.#requestIsCurrent(model));
    const response = await this.#dispatch(stream, model, sent, requestOptions);
    return routed ? stampThinkingLevel(pi, response, model, routed.thinkingLevel) : response;
  }

  /** A request to the provider: its auth, the settings' request options, before_provider_headers, then the stream. */
  async #dispatch(stream: StreamFn, target: Model<Api>, sent: TranscriptContext, options: SimpleStreamOptions): Promise<AssistantMessageEventStream> {
    // A routed request has its model's key and level, never the virtual provider's. An OAuth login
    // about to expire is refreshed (and saved) before the request, as pi does.
    const authed = withRequestAuth(target, options, await this.models.getRequestAuth(target.provider));
    const model = authed.model;
    // This agent's own extension instance answers for its provider (see ExtensionProviders.ownStream).
    const send = this.models.ownStream(model) ?? stream;
    const request = this.#options.config?.provider ?? {};
    watchNetworkFailures();
    const since = Date.now();
    const response = await send(model, sent, await beforeProviderHeaders(this.#runtime, model.headers, withProviderRequest(authed.options, request)));
    // "Connection error." says nothing of why: the cause fetch saw (DNS, refused, TLS) joins the reply's message.
    const result = response.result.bind(response);
    response.result = async () => explainNetworkFailure(await result(), model.baseUrl, since);
    return response;
  }

  /** Keeps the last session request's prompt cache entry warm (cache-warmer.ts); made with the first request. */
  #warmer: CacheWarmer | undefined;

  #warmerFor(pi: PiAi, stream: StreamFn): CacheWarmer {
    this.#warmStream = stream;
    this.#warmer ??= new CacheWarmer(
      {
        mode: () => this.#options.config?.cacheWarming ?? "idle",
        send: async (request) => {
          const send = this.#warmStream ?? stream;
          return (await this.#dispatch(send, request.model, request.context, request.options)).result();
        },
        lastPromptTokens: () => lastPromptTokens(this.#session.branch()),
        recordUsage: (kind, provider, model, usage, note) => {
          const entry = this.#session.append({ type: "usage", kind, provider, model, usage, ...(note !== undefined ? { note } : {}) });
          this.#emit({ type: "entry_appended", entry });
        },
        decide: async (event) => {
          if (!this.#runtime.hasHandlers("cache_warming_decision")) return undefined;
          // pi hands every handler the same event; the last one that returns an action wins.
          let action: "warm" | "stop" | undefined;
          await this.#runtime.emitChained(event, (current, result) => {
            if (result.action === "warm" || result.action === "stop") action = result.action;
            return { event: current };
          });
          return action;
        },
      },
      pi,
      this.#options.warmerClock,
    );
    return this.#warmer;
  }

  /** The stream function the loop last used: a refresh goes through it. */
  #warmStream: StreamFn | undefined;

  /** Whether the conversation still extends a request to `model`: the selected model unchanged, its messages a prefix of the current ones. */
  #requestIsCurrent(model: Model<Api>): () => boolean {
    const sentWith = [...this.#state.messages];
    return () => {
      const { model: now, messages } = this.#state;
      return now.provider === model.provider && now.id === model.id && sentWith.length <= messages.length && sentWith.every((m, i) => messages[i] === m);
    };
  }

  /**
   * A virtual model is routed before the loop's request, as pi 1.6 routes it (prepareRequest), so
   * the loop asks for and records the level the route chose; #send takes the route made here.
   */
  async #prepareRoute(selected: Model<Api>, messages: AgentMessage[], signal: AbortSignal | undefined): Promise<AgentRequestUpdate | undefined> {
    this.#routing.dropPrepared();
    if (!isVirtualModel(selected)) return undefined;
    const pi = await loadPiAi();
    // Routed before transformContext runs: whose turn it is comes from the request's own context.
    this.#routing.sawContext(messages);
    // The same messages #send would route on: the conversation without the loop's system messages.
    const conversation = convertToLlm(messages.filter((m) => m.role !== "system"));
    const routing = this.#routing.prepare(selected, pi.normalizeContext({ messages: conversation }).messages, signal);
    // A failed route is answered by #send, which fails the request with its reason.
    const routed = await routing.catch(() => undefined);
    return routed ? { thinkingLevel: routed.thinkingLevel } : undefined;
  }

  /** The prompt and tools context_with_system handlers left for the next request (taken by the stream function). */
  #requestSystem: RequestSystem | undefined;

  async #beforeToolCall(toolCallId: string, toolName: string, args: unknown): Promise<BeforeToolCallResult | undefined> {
    if (!this.#runtime.hasHandlers("tool_call")) return undefined;
    this.#gating = { toolCallId, toolName, args };
    try {
      return await beforeModelCall(this.#runtime, { id: toolCallId, name: toolName }, args);
    } finally {
      this.#gating = undefined;
    }
  }

  /**
   * The tool call whose tool_call handlers are running: a dialog opened now decides whether it
   * runs (ACP shows such a confirm as a permission request on that tool call).
   */
  get gatingToolCall(): { toolCallId: string; toolName: string; args: unknown } | undefined {
    return this.#gating;
  }

  #gating: { toolCallId: string; toolName: string; args: unknown } | undefined;

  #afterToolCall(
    toolCallId: string,
    toolName: string,
    args: unknown,
    result: { content: (TextContent | ImageContent)[]; details: unknown },
    isError: boolean,
  ): Promise<AfterToolCallResult | undefined> {
    return afterModelCall(this.#runtime, { id: toolCallId, name: toolName }, args, result, isError);
  }
}

/** Prompt size of the branch's last reply, as the provider reported it (what a refresh would read from the cache). */
function lastPromptTokens(branch: readonly SessionEntry[]): number {
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i];
    if (entry?.type === "message" && entry.message.role === "assistant") {
      const { input, cacheRead, cacheWrite } = entry.message.usage;
      return input + cacheRead + cacheWrite;
    }
  }
  return 0;
}

export type { ToolResultMessage };
