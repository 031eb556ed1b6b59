/**
 * The extension API as pi extensions see it, restricted to what a headless agent can honour.
 * Shapes mirror pi's public `ExtensionAPI` so pi extensions type-check and run unmodified.
 */
import type { ImageContent, TextContent } from "@mariozechner/pi-ai";
import type { NotifyType, ThinkingLevel, WidgetPlacement } from "@parley/protocol";
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

/** A theme whose styling functions return the text unchanged: RPC clients draw their own. */
export type PlainTheme = Record<string, (...args: unknown[]) => string>;

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
  sendUserMessage(content: string | (TextContent | ImageContent)[], options?: { deliverAs?: "steer" | "followUp" }): Promise<void>;
}

/** Runs once the switch is done, with a context bound to the new session (pi's `withSession`). */
export type WithSession = (ctx: ReplacedSessionContext) => Promise<void> | void;

export interface ContextUsage {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

export interface ExtensionContext {
  ui: ExtensionUIContext;
  /** true in RPC mode: dialogs and fire-and-forget calls reach the client. */
  hasUI: boolean;
  /** "rpc" in this mode; guard terminal-only features with `ctx.mode === "tui"`. */
  mode: "rpc";
  cwd: string;
  /** The thinking level when the context was made. */
  thinkingLevel: ThinkingLevel;
  /** Models the session is scoped to (--models / enabledModels); empty when not scoped. */
  scopedModels: readonly ScopedModel[];
  isProjectTrusted(): boolean;
  sessionManager: ReadonlySessionManager;
  modelRegistry: { getAll(): unknown[]; getAvailable(): Promise<unknown[]>; find(provider: string, id: string): unknown };
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
  summary?: { summary: string; details?: unknown };
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

/** Agent-loop events (tool_call, turn_start, …) share this open shape until the loop defines them. */
export interface AgentLoopEvent {
  type: string;
  [key: string]: unknown;
}

export interface ExtensionEventMap {
  session_start: SessionStartEvent;
  session_before_switch: SessionBeforeSwitchEvent;
  session_before_fork: SessionBeforeForkEvent;
  session_shutdown: SessionShutdownEvent;
  session_before_tree: SessionBeforeTreeEvent;
  session_tree: SessionTreeEvent;
  resources_discover: ResourcesDiscoverEvent;
}
export interface ExtensionResultMap {
  session_before_switch: { cancel?: boolean };
  session_before_fork: { cancel?: boolean; skipConversationRestore?: boolean };
  session_before_tree: SessionBeforeTreeResult;
}
export type ExtensionEventName = keyof ExtensionEventMap;
export type ExtensionEvent = ExtensionEventMap[ExtensionEventName];

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
  timeout?: number;
}
export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number;
  killed: boolean;
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

export interface ExtensionAPI {
  on<K extends ExtensionEventName>(
    event: K,
    handler: ExtensionHandler<ExtensionEventMap[K], K extends keyof ExtensionResultMap ? ExtensionResultMap[K] : undefined>,
  ): void;
  on(event: string, handler: ExtensionHandler<AgentLoopEvent, unknown>): void;
  registerTool(tool: { name: string; [key: string]: unknown }): void;
  registerCommand(name: string, options: RegisteredCommandOptions): void;
  registerShortcut(shortcut: string, options: { description?: string; handler: (ctx: ExtensionContext) => Promise<void> | void }): void;
  registerFlag(name: string, options: { description?: string; type: "boolean" | "string"; default?: boolean | string }): void;
  getFlag(name: string): boolean | string | undefined;
  registerMessageRenderer(customType: string, renderer: unknown): void;
  registerMarkdownTransformer(transformer: unknown): void;
  registerEntryRenderer(customType: string, renderer: unknown): void;
  sendMessage<T = unknown>(message: CustomMessageInput<T>, options?: { triggerTurn?: boolean; deliverAs?: "steer" | "followUp" | "nextTurn" }): void;
  sendUserMessage(content: string | (TextContent | ImageContent)[], options?: { deliverAs?: "steer" | "followUp" }): void;
  appendEntry<T = unknown>(customType: string, data?: T): void;
  setSessionName(name: string): void;
  getSessionName(): string | undefined;
  setLabel(entryId: string, label: string | undefined): void;
  exec(command: string, args: string[], options?: ExecOptions): Promise<ExecResult>;
  getActiveTools(): string[];
  getAllTools(): { name: string; description?: string; parameters?: unknown }[];
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
