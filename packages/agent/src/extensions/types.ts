/**
 * The extension API as pi extensions see it, restricted to what a headless agent can honour.
 * Shapes mirror pi's public `ExtensionAPI` so pi extensions type-check and run unmodified.
 */
import type { AgentEvent, AgentMessage } from "@earendil-works/pi-agent-core";
import type {
  Api,
  AssistantImages,
  AssistantMessage,
  AssistantMessageEventStream,
  ClassifierApi,
  ClassifierContext,
  ClassifierModel,
  ClassifierResult,
  Context,
  ImageApi,
  ImageModel,
  ImagesContext,
  ModelsClassifierOptions,
  ModelsImagesOptions,
  ModelType,
  ModelTypeMap,
  ImageContent,
  Message,
  Model,
  JsonValue,
  ProviderResponse,
  SimpleStreamOptions,
  StreamOptions,
  TextContent,
  ThinkingContent,
  Tool,
  ToolCall,
  ToolResultMessage,
  Usage,
} from "@earendil-works/pi-ai";
import type { CompactionReason, NotifyType, ThinkingLevel, WidgetPlacement } from "@parley/protocol";
import type { RouteReason, RouteRequest } from "../models/virtual-models.js";
import type { sessionProjection } from "../session/context.js";
import type { SessionEntry, SessionTreeNode, SessionView } from "../session/session.js";

export type { ThinkingLevel };

export interface ExtensionUIDialogOptions {
  /** Dismisses the dialog (it resolves with its default) when aborted. */
  signal?: AbortSignal;
  /** Milliseconds; the dialog resolves with its default when it elapses. */
  timeout?: number;
}

export interface ExtensionWidgetOptions {
  placement?: WidgetPlacement;
}

/**
 * ctx.ui.theme in RPC mode: pi's Theme members that return text give it back unstyled, its escape
 * getters give "", and its border colour getters give a function that returns its text unchanged.
 */
export type PlainTheme = {
  fg(color: string, text: string): string;
  bg(color: string, text: string): string;
  bold(text: string): string;
  italic(text: string): string;
  underline(text: string): string;
  inverse(text: string): string;
  strikethrough(text: string): string;
  style(text: string, options?: unknown): string;
  getFgAnsi(color: string): string;
  getBgAnsi(color: string): string;
  getThinkingBorderColor(level: string): (text: string) => string;
  getBashModeBorderColor(): (text: string) => string;
} & { readonly [member: string]: (...args: unknown[]) => string };

export interface ExtensionUIContext {
  select(title: string, options: string[], opts?: ExtensionUIDialogOptions): Promise<string | undefined>;
  confirm(title: string, message: string, opts?: ExtensionUIDialogOptions): Promise<boolean>;
  input(title: string, placeholder?: string, opts?: ExtensionUIDialogOptions): Promise<string | undefined>;
  /** parley: takes the same timeout and signal as the other dialogs. */
  editor(title: string, prefill?: string, opts?: ExtensionUIDialogOptions): Promise<string | undefined>;
  notify(message: string, type?: NotifyType): void;
  setStatus(key: string, text: string | undefined): void;
  setWidget(key: string, content: string[] | ((...args: never[]) => unknown) | undefined, options?: ExtensionWidgetOptions): void;
  setTitle(title: string): void;
  setEditorText(text: string): void;
  pasteToEditor(text: string): void;
  getEditorText(): string;
  onTerminalInput(handler: (data: string) => unknown): () => void;
  setWorkingMessage(message?: string): void;
  setWorkingVisible(visible: boolean): void;
  setWorkingIndicator(options?: unknown): void;
  setHiddenThinkingLabel(label?: string): void;
  setFooter(factory: unknown): void;
  setHeader(factory: unknown): void;
  custom<T>(factory: unknown, options?: unknown): Promise<T | undefined>;
  addAutocompleteProvider(factory: unknown): void;
  setEditorComponent(factory: unknown): void;
  getEditorComponent(): undefined;
  readonly theme: PlainTheme;
  getAllThemes(): { name: string; path: string | undefined }[];
  getTheme(name: string): undefined;
  setTheme(theme: unknown): { success: boolean; error?: string };
  getToolsExpanded(): boolean;
  setToolsExpanded(expanded: boolean): void;
}

export interface ReadonlySessionManager {
  getSessionId(): string;
  getSessionFile(): string | undefined;
  getSessionName(): string | undefined;
  getCwd(): string;
  getEntries(): SessionEntry[];
  getBranch(): SessionEntry[];
  getLeafId(): string | null;
  getEntry(id: string): SessionEntry | undefined;
  getLeafEntry(): SessionEntry | undefined;
  getLabel(id: string): string | undefined;
  getTree(): SessionTreeNode[];
  /** The folder session files are written to ("" for an in-memory session). */
  getSessionDir(): string;
  getHeader(): SessionView["header"];
  /** The entries whose parent is `parentId`. */
  getChildren(parentId: string): SessionEntry[];
  getEntryCount(): number;
  /** Whether the session is written to a file (false with --no-session). */
  isPersisted(): boolean;
  /** The newest pi's: the entries the context is built from (see session/context.ts). */
  buildContextEntries(): SessionEntry[];
  /** The newest pi's: each context entry with the messages it contributes. */
  buildSessionProjection(): ReturnType<typeof sessionProjection>;
}

/**
 * What ctx.newSession's `setup` gets: the new session's manager, readable and appendable (the
 * append methods of pi's SessionManager an extension uses to seed a session; each returns the id).
 */
export interface SetupSessionManager extends ReadonlySessionManager {
  appendMessage(message: { role: string; [key: string]: unknown }): string;
  appendThinkingLevelChange(thinkingLevel: string): string;
  appendModelChange(provider: string, modelId: string): string;
  appendCustomEntry(customType: string, data?: unknown): string;
  appendCustomMessageEntry(customType: string, content: string | (TextContent | ImageContent)[], display: boolean, details?: unknown): string;
  appendSessionInfo(name: string): string;
  appendLabelChange(targetId: string, label: string | undefined): string;
}

/** The context `withSession` gets after a session switch: bound to the new session. */
export interface ReplacedSessionContext extends ExtensionCommandContext {
  sendMessage<T = unknown>(message: CustomMessageInput<T>, options?: { triggerTurn?: boolean; deliverAs?: "steer" | "followUp" | "nextTurn" }): Promise<void>;
  sendUserMessage(
    content: string | (TextContent | ImageContent)[],
    options?: { deliverAs?: "steer" | "followUp"; expandPromptTemplates?: boolean },
  ): Promise<void>;
}

/** Runs once the switch is done, with a context bound to the new session (pi's `withSession`). */
export type WithSession = (ctx: ReplacedSessionContext) => Promise<void> | void;

export interface ContextUsage {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

/** pi's request credentials for a model (ctx.modelRegistry.getApiKeyAndHeaders). */
export type ResolvedRequestAuth = { ok: true; apiKey?: string; headers?: Record<string, string>; baseUrl?: string } | { ok: false; error: string };

/**
 * ctx.modelRegistry: pi 0.73.1's ModelRegistry, and the newest pi's request methods (stream,
 * streamSimple, complete: credentials resolved at request time, a virtual model routed first).
 */
export interface ExtensionModelRegistry {
  /** Nothing to reload: parley reads models.json at start-up (pi's refresh re-reads it). */
  refresh(): Promise<void>;
  getAll(): Model<Api>[];
  getAvailable(): Model<Api>[];
  find(provider: string, id: string): Model<Api> | undefined;
  /** A model of a type (chat, image, classifier); image and classifier models are pi-ai's built-in ones. */
  findOfType<T extends ModelType>(type: T, provider: string, id: string): ModelTypeMap[T] | undefined;
  getModelOfType<T extends ModelType>(type: T, provider: string, id: string): ModelTypeMap[T] | undefined;
  /** Every known model of a type, optionally of one provider. */
  getModelsOfType<T extends ModelType>(type: T, provider?: string): readonly ModelTypeMap[T][];
  /** Models of a type whose provider has credentials. */
  getAvailableOfType<T extends ModelType>(type: T, provider?: string): Promise<readonly ModelTypeMap[T][]>;
  /** Classify structured state, auth resolved as for a prompt. Never rejects: a failure is an error result. */
  classify(model: ClassifierModel<ClassifierApi>, context: ClassifierContext, options?: ModelsClassifierOptions): Promise<ClassifierResult>;
  /** Generate images, auth resolved as for a prompt. Never rejects: a failure is an error result. */
  generateImages(model: ImageModel<ImageApi>, context: ImagesContext, options?: ModelsImagesOptions): Promise<AssistantImages>;
  hasConfiguredAuth(model: Model<Api>): boolean;
  getApiKeyAndHeaders(model: Model<Api>): Promise<ResolvedRequestAuth>;
  getProviderAuthStatus(provider: string): { configured: boolean; source?: string };
  getApiKeyForProvider(provider: string): Promise<string | undefined>;
  /** The newest pi's: a provider's current credentials without a model; undefined when it has none. */
  getProviderAuth(provider: string): Promise<{ auth: { apiKey?: string; headers?: Record<string, string>; baseUrl?: string }; source?: string } | undefined>;
  isUsingOAuth(model: Model<Api>): boolean;
  getError(): string | undefined;
  getProviderDisplayName(provider: string): string;
  stream(model: Model<Api>, context: Context, options?: StreamOptions): AssistantMessageEventStream;
  streamSimple(model: Model<Api>, context: Context, options?: SimpleStreamOptions): AssistantMessageEventStream;
  complete(model: Model<Api>, context: Context, options?: SimpleStreamOptions): Promise<AssistantMessage>;
  registerProvider(nameOrProvider: unknown, config?: unknown): void;
  unregisterProvider(name: string): void;
  registerVirtualModel<TState = unknown>(model: VirtualModelRegistration<TState>): void;
  unregisterVirtualModel(provider: string, id: string): void;
}

/** Why a virtual model's router is asked: see models/virtual-models.ts. */
export type ModelRouteReason = RouteReason;

/** What `pi.registerVirtualModel` takes (the newest pi's VirtualModelDefinition, with the router's `ctx`). */
export interface VirtualModelRegistration<TState = unknown> {
  /** The provider it is listed under: any id, one with physical models too. */
  provider: string;
  /** Must not be the id of a physical model of `provider`. */
  id: string;
  name: string;
  /** Levels offered for selection; ["off"] when not given. */
  thinkingLevels?: readonly (ThinkingLevel | "max")[];
  /** Limits shown before the first response; the answering model's apply after it. */
  contextWindow?: number;
  maxTokens?: number;
  input?: ("text" | "image")[];
  route(
    request: Omit<RouteRequest, "state"> & { state?: TState },
    ctx: ExtensionContext,
  ):
    | { model: Model<Api>; thinkingLevel: ThinkingLevel | "max"; state?: TState }
    | Promise<{ model: Model<Api>; thinkingLevel: ThinkingLevel | "max"; state?: TState }>;
}

/** Where a prompt came from (the input event's `source`): pi's print and JSON mode prompt as "interactive". */
export type InputSource = "rpc" | "extension" | "interactive";

/** The mode extensions run in, as pi names it (`ctx.mode`): parley has no "tui". */
export type ExtensionMode = "rpc" | "print" | "json";

export interface ExtensionContext {
  ui: ExtensionUIContext;
  /** true in RPC mode (dialogs and fire-and-forget calls reach the client); false in print and JSON mode, as in pi. */
  hasUI: boolean;
  /** "rpc", "print" or "json"; guard terminal-only features with `ctx.mode === "tui"`. */
  mode: ExtensionMode;
  cwd: string;
  /** The thinking level when the context was made. */
  thinkingLevel: ThinkingLevel;
  /** Models the session is scoped to (--models / enabledModels); empty when not scoped. */
  scopedModels: readonly ScopedModel[];
  isProjectTrusted(): boolean;
  sessionManager: ReadonlySessionManager;
  /** pi's ModelRegistry, the reading part: synchronous, as in pi. */
  modelRegistry: ExtensionModelRegistry;
  model: unknown;
  isIdle(): boolean;
  signal: AbortSignal | undefined;
  abort(): void;
  hasPendingMessages(): boolean;
  /** Ask the agent to exit once the current command is done. */
  shutdown(): void;
  getContextUsage(): ContextUsage | undefined;
  compact(options?: { customInstructions?: string; onComplete?: (result: unknown) => void; onError?: (error: Error) => void }): void;
  getSystemPrompt(): string;
}

/** A model the session is scoped to, with the thinking level chosen for it (pi's ScopedModel). */
export interface ScopedModel {
  model: unknown;
  thinkingLevel?: ThinkingLevel;
}

export interface ExtensionCommandContext extends ExtensionContext {
  /** What the system prompt is built from (parley: cwd, the skills, and no separate context files). */
  getSystemPromptOptions(): { cwd: string; skills: readonly unknown[]; contextFiles: readonly unknown[] };
  waitForIdle(): Promise<void>;
  newSession(options?: {
    parentSession?: string;
    /** Seeds the new session before `withSession` runs. */
    setup?: (sessionManager: SetupSessionManager) => Promise<void> | void;
    withSession?: WithSession;
  }): Promise<{ cancelled: boolean }>;
  fork(entryId: string, options?: { position?: "before" | "at"; withSession?: WithSession }): Promise<{ cancelled: boolean }>;
  navigateTree(targetId: string, options?: NavigateTreeOptions): Promise<{ cancelled: boolean }>;
  switchSession(sessionPath: string, options?: { withSession?: WithSession }): Promise<{ cancelled: boolean }>;
  reload(): Promise<void>;
}

// ---- events ------------------------------------------------------------------

export interface SessionStartEvent {
  type: "session_start";
  reason: "startup" | "reload" | "new" | "resume" | "fork";
  previousSessionFile?: string;
}
export interface SessionBeforeSwitchEvent {
  type: "session_before_switch";
  reason: "new" | "resume";
  targetSessionFile?: string;
}
export interface SessionBeforeForkEvent {
  type: "session_before_fork";
  entryId: string;
  position: "before" | "at";
}
export interface SessionShutdownEvent {
  type: "session_shutdown";
  reason: "quit" | "reload" | "new" | "resume" | "fork";
  targetSessionFile?: string;
}
export interface ResourcesDiscoverEvent {
  type: "resources_discover";
  cwd: string;
  reason: "startup" | "reload";
}
/** pi's answer to resources_discover: skill, prompt-template and theme folders (parley has none of these). */
export interface ResourcesDiscoverResult {
  skillPaths?: string[];
  promptPaths?: string[];
  themePaths?: string[];
}

/** What a tree move leaves behind, shown to session_before_tree handlers (pi's TreePreparation). */
export interface TreePreparation {
  targetId: string;
  oldLeafId: string | null;
  commonAncestorId: string | null;
  entriesToSummarize: SessionEntry[];
  userWantsSummary: boolean;
  customInstructions?: string;
  replaceInstructions?: boolean;
  label?: string;
}
export interface SessionBeforeTreeEvent {
  type: "session_before_tree";
  preparation: TreePreparation;
  signal: AbortSignal;
}
export interface SessionTreeEvent {
  type: "session_tree";
  newLeafId: string | null;
  oldLeafId: string | null;
  summaryEntry?: SessionEntry;
  fromExtension?: boolean;
}
export interface SessionBeforeTreeResult {
  cancel?: boolean;
  /** Used as the branch summary when the move asked for one (no model call then). */
  summary?: { summary: string; details?: unknown; usage?: Usage };
  customInstructions?: string;
  replaceInstructions?: boolean;
  label?: string;
}
export interface NavigateTreeOptions {
  /** Summarise the branch being left, at the new position. */
  summarize?: boolean;
  customInstructions?: string;
  /** customInstructions replace the default summary prompt instead of adding to it. */
  replaceInstructions?: boolean;
  /** Label for the summary entry, or for the target when there is no summary. */
  label?: string;
}

/** An event extensions may subscribe to that parley does not emit (or a newer pi's): an open shape. */
export interface AgentLoopEvent {
  type: string;
  [key: string]: unknown;
}

// ---- the events of the agent and its loop, as handlers get them ----

/** The loop's own events, passed to handlers as pi-agent-core emits them (turns and message_end have their own entries). */
type LoopEvent<K extends AgentEvent["type"]> = Extract<AgentEvent, { type: K }>;

export interface TurnStartEvent {
  type: "turn_start";
  turnIndex: number;
  timestamp: number;
}
/** How the run's latest response ended (the newest pi's AgentActivityOutcome). */
export type AgentActivityOutcome = "completed" | "aborted" | "error";
export interface CustomEntryDraft {
  type: "custom";
  customType: string;
  data?: unknown;
}
export interface CustomMessageEntryDraft {
  type: "custom_message";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: unknown;
}
/** An edit of an earlier message in the model's context (newest pi): null leaves it out, content replaces its content. */
export interface ContextEditEntryDraft {
  type: "context_edit";
  targetId: string;
  replacement: { content: string | (TextContent | ImageContent | ThinkingContent | ToolCall)[] } | null;
}
export interface CompactionEntryDraft {
  type: "compaction";
  summary: string;
  /** Null: the compaction keeps none of the entries before it. */
  firstKeptEntryId: string | null;
  details?: unknown;
  usage?: Usage;
}
/** An entry a turn_end or agent_before_settle handler proposes to append. */
export type SessionBoundaryDraft = CustomEntryDraft | CustomMessageEntryDraft | ContextEditEntryDraft | CompactionEntryDraft;
/** One entry's part of the model context (pi's ProjectedSessionEntry). */
export interface ProjectedSessionEntry {
  sourceEntry: SessionEntry;
  messages: AgentMessage[];
}
/** What the next request would see with the proposed entries appended. */
export interface BoundaryContextPreview {
  contextEntries: ProjectedSessionEntry[];
  contextMessages: AgentMessage[];
  llmMessages: Message[];
  /** Steering and follow-up messages waiting for the loop. */
  pendingMessages: AgentMessage[];
  /** Whether a next request has something to answer. */
  canContinue: boolean;
}
export interface BoundaryState {
  entries: SessionBoundaryDraft[];
  continue: boolean;
  context: BoundaryContextPreview;
  outcome: AgentActivityOutcome;
}
/** Each field replaces the proposal's; an omitted field keeps it. */
export interface BoundaryResult {
  entries?: SessionBoundaryDraft[];
  continue?: boolean;
}
export interface TurnEndEvent extends BoundaryState {
  type: "turn_end";
  turnIndex: number;
  message: AgentMessage;
  toolResults: ToolResultMessage[];
  /** The session entry ids of the turn's assistant message and tool results. */
  messageEntryId: string;
  toolResultEntryIds: string[];
}
/** The run is about to settle: the last point to append entries and ask for one more request. */
export interface AgentBeforeSettleEvent extends BoundaryState {
  type: "agent_before_settle";
}
/** The request's messages with a leading system message holding the prompt and tool declarations. */
export interface ContextWithSystemEvent {
  type: "context_with_system";
  messages: (AgentMessage | SystemMessage)[];
}
export interface ContextWithSystemResult {
  messages?: (AgentMessage | SystemMessage)[];
}
/** pi-ai 1.6's system message, as context_with_system handlers get and return it. */
export interface SystemMessage {
  role: "system";
  content: string | TextContent[];
  sections?: Record<string, string | null>;
  toolsAdded?: Tool[];
  toolsRemoved?: { name: string }[];
  timestamp: number;
}
/** An extension registered or removed an MCP server after the extensions were bound. */
export interface McpServersChangeEvent {
  type: "mcp_servers_change";
  servers: RegisteredMcpServer[];
}
export interface MessageEndEvent {
  type: "message_end";
  message: AgentMessage;
}
/** A handler may replace the finished message (the loop, the session file and the client get the replacement). */
export interface MessageEndResult {
  message?: AgentMessage;
}
export interface InputEvent {
  type: "input";
  text: string;
  images: ImageContent[] | undefined;
  source: InputSource;
  /** How the message will be queued: set only while a run goes on (newest pi). */
  streamingBehavior?: "steer" | "followUp";
}
export interface InputResult {
  action?: "continue" | "transform" | "handled";
  text?: string;
  images?: ImageContent[];
}
export interface BeforeAgentStartEvent {
  type: "before_agent_start";
  /** What starts the run: the newest pi also starts runs from custom messages; parley's are user prompts. */
  messageType: "user";
  prompt: string;
  images: ImageContent[] | undefined;
  systemPrompt: string;
  systemPromptOptions: { cwd: string };
  /** Messages earlier handlers asked to inject (their results' `message`), in order. */
  injected?: AgentMessage[];
}
export interface BeforeAgentStartResult {
  systemPrompt?: string;
  message?: CustomMessageInput;
}
export interface ContextEvent {
  type: "context";
  messages: AgentMessage[];
}
export interface ContextResult {
  messages?: AgentMessage[];
}
export interface ToolCallEvent {
  type: "tool_call";
  /** For a call another tool made (`ctx.executeTool`), `<calling id>/<n>`. */
  toolCallId: string;
  /** Set when another tool made this call through `ctx.executeTool` (newest pi). */
  parentToolCallId?: string;
  toolName: string;
  input: unknown;
  /** Whether a handler so far blocked the call, and why (the chain stops at the first block). */
  block: boolean;
  reason: string | undefined;
}
export interface ToolCallResult {
  block?: boolean;
  reason?: string;
  /** With `block`: stop after this tool batch when every result in it says so (newest pi). */
  terminate?: boolean;
}
export interface ToolResultEvent {
  type: "tool_result";
  toolCallId: string;
  /** Set when another tool made this call through `ctx.executeTool` (newest pi). */
  parentToolCallId?: string;
  toolName: string;
  input: unknown;
  content: (TextContent | ImageContent)[];
  /** The tool's machine-readable result; replacing `content` alone drops it (newest pi). */
  structuredContent?: unknown;
  details: unknown;
  isError: boolean;
  /** What the tool's own model calls cost, if it says. */
  usage?: Usage;
}
/** Fields left undefined stay as they are; new `content` without `structuredContent` drops the old one. */
export interface ToolResultChange {
  content?: (TextContent | ImageContent)[];
  details?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  usage?: Usage;
}
/** What `ctx.executeTool` resolves to (pi-agent-core's AgentToolCallOutcome). */
export interface ToolCallOutcome {
  toolCall: { type: "toolCall"; id: string; name: string; arguments: Record<string, unknown> };
  result: ToolCallOutcomeResult;
  isError: boolean;
  /** How long the tool's execute() ran; absent when it did not run. */
  durationMs?: number;
}
export interface ToolCallOutcomeResult {
  content: (TextContent | ImageContent)[];
  details: unknown;
  structuredContent?: JsonValue;
  usage?: Usage;
  isError?: boolean;
  terminate?: boolean;
}
export interface ExecuteToolOptions {
  /** Defaults to the calling tool's signal. */
  signal?: AbortSignal;
  /** Receives the nested tool's partial results (besides the tool_execution_update events). */
  onUpdate?: (partialResult: unknown) => void;
}
/** The context a tool's execute() gets: the extension context plus the tools it may call (newest pi). */
export interface ExtensionToolContext extends ExtensionContext {
  /** The tools executeTool can call. */
  readonly tools: readonly CallableTool[];
  /** Runs another tool as a model-issued call runs (hooks included); never rejects for tool failures. */
  executeTool(name: string, args: unknown, options?: ExecuteToolOptions): Promise<ToolCallOutcome>;
}
/** A tool as `ctx.tools` lists it (pi-agent-core's AgentTool). */
export interface CallableTool {
  name: string;
  label: string;
  description: string;
  parameters: unknown;
  /** JSON Schema of the tool's `structuredContent` (a codemode script's call resolves to it). */
  outputSchema?: object;
}
export interface BeforeProviderRequestEvent {
  type: "before_provider_request";
  payload: unknown;
}
/** Handlers edit the headers in place; a null value removes one. */
export interface BeforeProviderHeadersEvent {
  type: "before_provider_headers";
  headers: Record<string, string | null>;
}
export interface AfterProviderResponseEvent extends ProviderResponse {
  type: "after_provider_response";
}
/** A provider's parsed stream event before pi-ai normalises it (read-only; not persisted), as pi 1.6 sends it. */
export interface ProviderStreamEvent {
  type: "provider_stream_event";
  data: unknown;
  provider: string;
  api: string;
  model: string;
}
export interface ModelSelectEvent {
  type: "model_select";
  model: Model<Api>;
  previousModel: Model<Api>;
  /**
   * "set": set_model or pi.setModel; "cycle": cycle_model. pi 1.6.0 declares "restore" too but
   * never emits it (restoring a session's model fires nothing), and neither does parley.
   */
  source: "set" | "cycle" | "restore";
}
export interface ThinkingLevelSelectEvent {
  type: "thinking_level_select";
  level: ThinkingLevel;
  previousLevel: ThinkingLevel;
}
/**
 * Before each prompt-cache refresh (pi 1.6): pi's figures for this refresh and its decision. A
 * handler may return `{ action }` to override it; the last handler that returns one wins, and
 * "stop" ends warming until the next real request.
 */
export interface CacheWarmingDecisionEvent {
  type: "cache_warming_decision";
  /** Price of this refresh: a cache read of the prompt plus one output token. */
  warmCost: number;
  /** Extra price of the next real request if the cache entry is lost. */
  missCost: number;
  /** Estimated chance that a real request arrives before the entry expires. */
  continuationProbability: number;
  action: "warm" | "stop";
}

export interface AgentSettledEvent {
  type: "agent_settled";
  /** The run ended because it was aborted (newest pi). */
  aborted: boolean;
}
export interface SessionInfoChangedEvent {
  type: "session_info_changed";
  name: string | undefined;
}
export type UIPromptKind = "select" | "confirm" | "input" | "editor" | "custom";
/** A dialog opened (the outermost, when dialogs nest). */
export interface UIPromptStartEvent {
  type: "ui_prompt_start";
  reason: "ui_prompt";
  kind: UIPromptKind;
  title?: string;
}
/** That dialog was answered, dismissed or failed. */
export interface UIPromptEndEvent {
  type: "ui_prompt_end";
  reason: "ui_prompt";
  kind: UIPromptKind;
  title?: string;
}
export interface UserBashEvent {
  type: "user_bash";
  command: string;
  excludeFromContext: boolean;
  cwd: string;
}
/** Checked by user-bash.ts: a result to use, or operations to run the command with. */
export interface UserBashResult {
  result?: unknown;
  operations?: unknown;
}
export interface SessionBeforeCompactEvent {
  type: "session_before_compact";
  /** compaction.ts's CompactionPreparation (named there: importing it here would close an import cycle). */
  preparation: object;
  branchEntries: SessionEntry[];
  customInstructions: string | undefined;
  reason: CompactionReason;
  willRetry: boolean;
  signal: AbortSignal;
}
/** A compaction an extension supplies instead of the model's; compaction.ts checks each field. */
export interface ExtensionCompaction {
  summary?: unknown;
  firstKeptEntryId?: unknown;
  tokensBefore?: unknown;
  details?: unknown;
}
export interface SessionBeforeCompactResult {
  cancel?: boolean;
  compaction?: ExtensionCompaction;
}
export interface SessionCompactEvent {
  type: "session_compact";
  compactionEntry: SessionEntry;
  fromExtension: boolean;
  reason: CompactionReason;
  willRetry: boolean;
}
export interface SessionCompactFailedEvent {
  type: "session_compact_failed";
  reason: CompactionReason;
  aborted: boolean;
  willRetry: boolean;
  fromExtension: boolean;
  errorMessage?: string;
}

/**
 * The newest pi's project_trust: asked once at start-up, before the project's resources load,
 * of the user's and -e extensions only. Its context is not ExtensionContext: nothing is loaded yet.
 */
export interface ProjectTrustEvent {
  type: "project_trust";
  cwd: string;
}
export interface ProjectTrustEventResult {
  /** The first "yes" or "no" decides; "undecided" asks the next handler. */
  trusted: "yes" | "no" | "undecided";
  /** Save the decision to pi's trust.json in the agent directory. */
  remember?: boolean;
}
export interface ProjectTrustContext {
  cwd: string;
  mode: ExtensionMode;
  /** RPC mode cannot prompt before the session exists: the dialogs answer nothing. */
  hasUI: boolean;
  ui: Pick<ExtensionUIContext, "select" | "confirm" | "input" | "notify">;
}
export type ProjectTrustHandler = (event: ProjectTrustEvent, ctx: ProjectTrustContext) => Promise<ProjectTrustEventResult> | ProjectTrustEventResult;

/** tool_execution_* of a call another tool made carry the calling tool's id (newest pi). */
export interface NestedCallMark {
  parentToolCallId?: string;
}

/**
 * Every event parley emits to extension handlers: its event and what a handler may return
 * (`undefined`: the result is ignored). The runtime's emit and emitChained are typed by it, so an
 * emitter and a handler cannot disagree on an event's shape. To add an event: an entry here.
 */
export interface ExtensionHookMap {
  session_start: { event: SessionStartEvent; result: undefined };
  session_before_switch: { event: SessionBeforeSwitchEvent; result: { cancel?: boolean } };
  session_before_fork: { event: SessionBeforeForkEvent; result: { cancel?: boolean; skipConversationRestore?: boolean } };
  session_shutdown: { event: SessionShutdownEvent; result: undefined };
  session_before_tree: { event: SessionBeforeTreeEvent; result: SessionBeforeTreeResult };
  session_tree: { event: SessionTreeEvent; result: undefined };
  resources_discover: { event: ResourcesDiscoverEvent; result: ResourcesDiscoverResult };
  session_info_changed: { event: SessionInfoChangedEvent; result: undefined };
  session_before_compact: { event: SessionBeforeCompactEvent; result: SessionBeforeCompactResult };
  session_compact: { event: SessionCompactEvent; result: undefined };
  session_compact_failed: { event: SessionCompactFailedEvent; result: undefined };
  input: { event: InputEvent; result: InputResult };
  before_agent_start: { event: BeforeAgentStartEvent; result: BeforeAgentStartResult };
  context: { event: ContextEvent; result: ContextResult };
  before_provider_request: { event: BeforeProviderRequestEvent; result: unknown };
  before_provider_headers: { event: BeforeProviderHeadersEvent; result: undefined };
  after_provider_response: { event: AfterProviderResponseEvent; result: undefined };
  provider_stream_event: { event: ProviderStreamEvent; result: undefined };
  agent_start: { event: LoopEvent<"agent_start">; result: undefined };
  agent_end: { event: LoopEvent<"agent_end">; result: undefined };
  agent_settled: { event: AgentSettledEvent; result: undefined };
  cache_warming_decision: { event: CacheWarmingDecisionEvent; result: { action?: "warm" | "stop" } };
  turn_start: { event: TurnStartEvent; result: undefined };
  turn_end: { event: TurnEndEvent; result: BoundaryResult };
  agent_before_settle: { event: AgentBeforeSettleEvent; result: BoundaryResult };
  context_with_system: { event: ContextWithSystemEvent; result: ContextWithSystemResult };
  mcp_servers_change: { event: McpServersChangeEvent; result: undefined };
  message_start: { event: LoopEvent<"message_start">; result: undefined };
  message_update: { event: LoopEvent<"message_update">; result: undefined };
  message_end: { event: MessageEndEvent; result: MessageEndResult };
  tool_execution_start: { event: LoopEvent<"tool_execution_start"> & NestedCallMark; result: undefined };
  tool_execution_update: { event: LoopEvent<"tool_execution_update"> & NestedCallMark; result: undefined };
  tool_execution_end: { event: LoopEvent<"tool_execution_end"> & NestedCallMark & { durationMs?: number }; result: undefined };
  tool_call: { event: ToolCallEvent; result: ToolCallResult };
  tool_result: { event: ToolResultEvent; result: ToolResultChange };
  model_select: { event: ModelSelectEvent; result: undefined };
  thinking_level_select: { event: ThinkingLevelSelectEvent; result: undefined };
  user_bash: { event: UserBashEvent; result: UserBashResult };
  ui_prompt_start: { event: UIPromptStartEvent; result: undefined };
  ui_prompt_end: { event: UIPromptEndEvent; result: undefined };
}
export type HookName = keyof ExtensionHookMap;
export type HookEvent<K extends HookName> = ExtensionHookMap[K]["event"];
export type HookResult<K extends HookName> = ExtensionHookMap[K]["result"];

/** The session events, as pi's ExtensionAPI names them (kept for extensions that import these names). */
export type ExtensionEventMap = { [K in HookName]: HookEvent<K> };
export type ExtensionEventName = HookName;
export type ExtensionEvent = HookEvent<HookName>;

export type ExtensionHandler<E, R = undefined> = (event: E, ctx: ExtensionContext) => Promise<R | void> | R | void;

export interface RegisteredCommandOptions {
  description?: string;
  /** Completion is a terminal feature: parley keeps it but never calls it in RPC mode. */
  getArgumentCompletions?: (prefix: string) => unknown;
  handler: (args: string, ctx: ExtensionCommandContext) => Promise<void> | void;
}

export interface SourceInfo {
  path: string;
  /** "cli" for -e files, "local" for discovered ones. */
  source: string;
  scope: "temporary" | "user" | "project";
  origin: "top-level" | "package";
  baseDir?: string;
}

export interface SlashCommandInfo {
  name: string;
  description?: string;
  source: "extension" | "prompt" | "skill";
  sourceInfo: SourceInfo;
}

export interface ExecOptions {
  cwd?: string;
  signal?: AbortSignal;
  /** Milliseconds. */
  timeout?: number;
  /** Combined stdout+stderr byte limit; past it the command is stopped and the result is `truncated` (default 256 MiB). */
  maxBuffer?: number;
}
export interface ExecResult {
  stdout: string;
  stderr: string;
  /** The exit code, or 128 + the signal's number when a signal ended the command (143 for SIGTERM). */
  code: number;
  /** parley stopped the command: timeout, abort, or output over `maxBuffer`. */
  killed: boolean;
  /** The output went over `maxBuffer`: stdout and stderr are incomplete and `code` is not 0. */
  truncated: boolean;
}

export interface CustomMessageInput<T = unknown> {
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display?: boolean;
  details?: T;
}

export interface EventBus {
  on(channel: string, handler: (data: unknown) => void): () => void;
  emit(channel: string, data: unknown): void;
}

/** An MCP server an extension registered (pi's RegisteredMcpServer). */
export interface RegisteredMcpServer {
  name: string;
  config: Record<string, unknown>;
  extensionPath: string;
}

/** A registered tool as pi.getAllTools() describes it (with the newest pi's exposure fields). */
export interface ToolInfo {
  name: string;
  description?: string;
  parameters?: unknown;
  promptGuidelines?: string[];
  exposure?: "direct" | "model-only" | "codemode" | "deferred" | "hidden";
  namespace?: { name: string; aliases?: readonly string[]; description?: string; instructions?: string };
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  reachesTools?: (input: Record<string, unknown>) => "all" | readonly string[];
  sourceInfo?: unknown;
}

/** Each `on` returns a function that removes that handler again (newest pi). */
export interface ExtensionAPI {
  on(event: "project_trust", handler: ProjectTrustHandler): () => void;
  on<K extends HookName>(event: K, handler: ExtensionHandler<HookEvent<K>, HookResult<K>>): () => void;
  on(event: string, handler: ExtensionHandler<AgentLoopEvent, unknown>): () => void;
  registerTool(tool: { name: string; [key: string]: unknown }): void;
  registerCommand(name: string, options: RegisteredCommandOptions): void;
  registerShortcut(shortcut: string, options: { description?: string; handler: (ctx: ExtensionContext) => Promise<void> | void }): void;
  registerFlag(name: string, options: { description?: string; type: "boolean" | "string"; default?: boolean | string }): void;
  getFlag(name: string): boolean | string | undefined;
  registerMessageRenderer(customType: string, renderer: unknown): void;
  registerMarkdownTransformer(transformer: unknown): void;
  registerEntryRenderer(customType: string, renderer: unknown): void;
  /** How tool calls are drawn: a terminal UI's concern, accepted and unused as in pi's RPC mode. */
  registerToolRenderer(resolver: unknown): void;
  /** Checked as pi checks it, then connected by the built-in MCP support (or an extension handling mcp_servers_change). */
  registerMcpServer(name: string, config: unknown): void;
  /**
   * A model that routes each request to a physical model (the newest pi's; see
   * models/virtual-models.ts). One that cannot be registered is reported as an extension_error.
   */
  registerVirtualModel<TState = unknown>(model: VirtualModelRegistration<TState>): void;
  unregisterVirtualModel(provider: string, id: string): void;
  unregisterMcpServer(name: string): void;
  getMcpServers(): RegisteredMcpServer[];
  sendMessage<T = unknown>(message: CustomMessageInput<T>, options?: { triggerTurn?: boolean; deliverAs?: "steer" | "followUp" | "nextTurn" }): void;
  /** The text is used as given unless `expandPromptTemplates` (commands, skills and templates then apply). */
  sendUserMessage(content: string | (TextContent | ImageContent)[], options?: { deliverAs?: "steer" | "followUp"; expandPromptTemplates?: boolean }): void;
  appendEntry<T = unknown>(customType: string, data?: T): void;
  setSessionName(name: string): void;
  getSessionName(): string | undefined;
  setLabel(entryId: string, label: string | undefined): void;
  exec(command: string, args: string[], options?: ExecOptions): Promise<ExecResult>;
  /** A copy of the effective settings.json (global and project merged, as written). */
  getSettings(): Record<string, unknown>;
  getActiveTools(): string[];
  getAllTools(): ToolInfo[];
  setActiveTools(toolNames: string[]): void;
  getCommands(): SlashCommandInfo[];
  setModel(model: unknown): Promise<boolean>;
  getThinkingLevel(): ThinkingLevel;
  setThinkingLevel(level: ThinkingLevel): void;
  registerProvider(name: string, config: unknown): void;
  registerProvider(provider: { id?: string; name?: string; [key: string]: unknown }): void;
  unregisterProvider(name: string): void;
  events: EventBus;
}

export type ExtensionFactory = (pi: ExtensionAPI) => void | Promise<void>;
