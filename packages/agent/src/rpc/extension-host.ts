/**
 * What extensions reach through in RPC mode: the ExtensionHost their runtime calls back into, and
 * the UiBridge behind each ctx.ui. Session switches live here too, so that the RPC commands that
 * switch sessions run the same extension events as an extension that switches.
 */
import { extensionStack } from "../extensions/extension-stack.js";
import type { Api, ImageContent, Model, TextContent } from "@mariozechner/pi-ai";
import type { FireAndForgetRequest, UiState } from "@parley/protocol";
import { applyUiRecord, copyUiState, emptyUiState } from "@parley/protocol/ui-state";
import type { AgentSession } from "../agent/agent-session.js";
import type { ExtensionErrorReport, ExtensionHost } from "../extensions/host.js";
import { ExtensionRuntime } from "../extensions/runtime.js";
import type {
  ContextUsage,
  CustomMessageInput,
  ExtensionContext,
  ExtensionUIContext,
  NavigateTreeOptions,
  ScopedModel,
  SessionBeforeTreeResult,
  ThinkingLevel,
  TreePreparation,
} from "../extensions/types.js";
import type { ProviderConfig } from "../models/index.js";
import { userText } from "../session/context.js";
import type { Session, SessionEntry } from "../session/session.js";
import type { DialogRegistry } from "../ui/dialog-registry.js";
import { createRpcUiContext, type UiBridge } from "../ui/rpc-ui-context.js";
import type { SessionFactory } from "./server.js";
import type { Transport } from "./transport.js";
import { errorMessage } from "../error-text.js";

export interface RpcExtensionHostOptions {
  cwd: string;
  /** The agent is made after the host (its runtime must exist first), so it is reached lazily. */
  agent: () => AgentSession;
  sessions: SessionFactory;
  dialogs: DialogRegistry;
  /** Writes one record to the client. */
  send: Transport["send"];
  /** Diagnostics for humans; never the protocol stream. */
  log: (message: string) => void;
  /** ctx.shutdown(): the server decides when stopping is safe (after the running command answers). */
  requestShutdown: () => void;
  /** ctx.reload(): the server reloads the extensions. */
  reload: () => Promise<void>;
}

export type SessionSwitchEvents = {
  before:
    | { type: "session_before_switch"; reason: "new" | "resume"; targetSessionFile?: string }
    | { type: "session_before_fork"; entryId: string; position: "before" | "at" };
  reason: "new" | "resume" | "fork";
  /** Throws when the target is not valid; runs after the before-event, before anything changes. */
  check?: () => void;
};

export class RpcExtensionHost implements ExtensionHost, UiBridge {
  readonly cwd: string;
  readonly dialogs: DialogRegistry;
  /** Made here because it calls back into this host. */
  readonly runtime: ExtensionRuntime;
  readonly #getAgent: () => AgentSession;
  readonly #sessions: SessionFactory;
  readonly #send: Transport["send"];
  readonly #log: (message: string) => void;
  readonly #requestShutdown: () => void;
  readonly #reload: () => Promise<void>;
  readonly #uiState: UiState = emptyUiState();
  readonly #uiContexts = new Map<string, ExtensionUIContext>();
  readonly #diagnosed = new Set<string>();
  #extensionFlags = new Map<string, string | boolean>();

  constructor(options: RpcExtensionHostOptions) {
    this.cwd = options.cwd;
    this.dialogs = options.dialogs;
    this.#getAgent = options.agent;
    this.#sessions = options.sessions;
    this.#send = options.send;
    this.#log = options.log;
    this.#requestShutdown = options.requestShutdown;
    this.#reload = options.reload;
    this.runtime = new ExtensionRuntime(this);
  }

  get #agent(): AgentSession {
    return this.#getAgent();
  }

  /** Values given on the command line for the flags extensions registered. */
  setExtensionFlags(flags: Map<string, string | boolean>): void {
    this.#extensionFlags = flags;
  }

  /** A snapshot: the live state keeps changing in place as extensions call ctx.ui. */
  uiState(): UiState {
    return copyUiState(this.#uiState);
  }

  // ---- session and agent state ---------------------------------------------------

  session(): Session {
    return this.#agent.session;
  }

  /**
   * Agrees with waitForIdle(): `while (!ctx.isIdle()) await ctx.waitForIdle()` must wait for
   * something real each time round, never spin on a settled promise.
   */
  isIdle(): boolean {
    return !this.#agent.isRunning;
  }

  abort(): void {
    void this.#agent.abort();
  }

  scopedModels(): readonly ScopedModel[] {
    // --models / enabledModels, resolved at start-up; empty means "not scoped".
    return this.#agent.scopedModels.map((s) => ({ ...s }));
  }

  emitEntryAppended(entry: SessionEntry): void {
    this.#send({ type: "entry_appended", entry });
  }

  thinkingLevel(): ThinkingLevel {
    return this.#agent.thinkingLevel;
  }

  availableThinkingLevels(): ThinkingLevel[] {
    return this.#agent.availableThinkingLevels();
  }

  setThinkingLevel(level: ThinkingLevel): void {
    this.#agent.setThinkingLevel(level);
  }

  setSessionName(name: string): void {
    this.#agent.session.setName(name);
    this.#send({ type: "session_info_changed", ...(name ? { name } : {}) });
    void this.runtime.emit({ type: "session_info_changed", name: name || undefined });
  }

  /**
   * Leaves the current session for another (new, opened or forked), unless a
   * session_before_switch/fork handler cancels: session_shutdown, swap, session_start — once each.
   */
  async switchTo(make: () => Session, events: SessionSwitchEvents): Promise<{ cancelled: boolean }> {
    const verdict = await this.runtime.emit(events.before);
    if (verdict?.cancel === true) return { cancelled: true };
    // As in pi, the target is checked only once the extensions have let the switch go ahead.
    events.check?.();
    // The old session's run and queued messages end with it.
    await this.#agent.abort();
    if (this.#agent.hasPendingMessages()) this.#agent.clearQueue();
    // The session may name a built-in model to continue with.
    await this.#agent.models.loadCatalog();
    const next = make();
    const previous = this.#agent.session.file;
    await this.runtime.emit({ type: "session_shutdown", reason: events.reason, ...(next.file !== undefined ? { targetSessionFile: next.file } : {}) });
    this.#agent.useSession(next);
    await this.runtime.emit({ type: "session_start", reason: events.reason, ...(previous !== undefined ? { previousSessionFile: previous } : {}) });
    // pi builds a new runtime for the new session, which discovers resources as at start-up.
    await this.runtime.emitResourcesDiscover(this.cwd, "startup");
    return { cancelled: false };
  }

  waitForIdle(): Promise<void> {
    return this.#agent.waitForIdle();
  }

  /** Continues in a new session holding the branch up to (or at) an entry; `text` is the forked user message. */
  async forkSession(entryId: string, position: "before" | "at"): Promise<{ cancelled: boolean; text?: string }> {
    const current = this.#agent.session;
    // pi's words: a client may match on them.
    const check = (): void => {
      const entry = current.entry(entryId);
      if (!entry || (position === "before" && (entry.type !== "message" || entry.message.role !== "user"))) throw new Error("Invalid entry ID for forking");
    };
    let text: string | undefined;
    const result = await this.switchTo(
      () => {
        const forked = current.fork(entryId, position);
        text = forked.selectedText;
        return forked.session;
      },
      { before: { type: "session_before_fork", entryId, position }, reason: "fork", check },
    );
    return { ...(text !== undefined ? { text } : {}), cancelled: result.cancelled };
  }

  /** pi's order: session_before_switch names the path as given, then the file is opened. */
  async switchSession(path: string): Promise<{ cancelled: boolean }> {
    let next: Session | undefined;
    return this.switchTo(() => next ?? this.#sessions.open(path), {
      before: { type: "session_before_switch", reason: "resume", targetSessionFile: path },
      reason: "resume",
      check: () => {
        next = this.#sessions.open(path);
      },
    });
  }

  /**
   * Moves the active branch to another entry of the same session, as pi does: a user message as
   * target puts the leaf on its parent and hands its text back as `editorText`; with `summarize`
   * the branch left behind is summarised (by a session_before_tree handler's `summary`, or by the
   * model) into a branch_summary entry at the new position; `label` names that entry, or the
   * target when there is no summary.
   */
  async navigateTree(targetId: string, options: NavigateTreeOptions = {}): Promise<{ cancelled: boolean; aborted?: boolean; editorText?: string }> {
    const agent = this.#agent;
    const session = agent.session;
    const oldLeafId = session.leafId;
    if (targetId === oldLeafId) return { cancelled: false };
    const target = session.entry(targetId);
    if (!target) throw new Error(`No entry with id ${targetId}`);
    // Loaded here: the summariser shares compaction's model call, which start-up does not need.
    const { collectBranchEntries, generateBranchSummary, CompactionCancelledError } = await import("../agent/branch-summary.js");
    const { entries, commonAncestorId } = collectBranchEntries(session, oldLeafId, targetId);
    const wantsSummary = options.summarize === true;
    let { customInstructions, replaceInstructions, label } = options;
    const preparation: TreePreparation = {
      targetId,
      oldLeafId,
      commonAncestorId,
      entriesToSummarize: entries,
      userWantsSummary: wantsSummary,
      ...(customInstructions !== undefined ? { customInstructions } : {}),
      ...(replaceInstructions !== undefined ? { replaceInstructions } : {}),
      ...(label !== undefined ? { label } : {}),
    };
    const controller = new AbortController();
    const verdict = await this.runtime.emit<SessionBeforeTreeResult>({ type: "session_before_tree", preparation, signal: controller.signal });
    if (verdict?.cancel === true) return { cancelled: true };
    if (verdict?.customInstructions !== undefined) customInstructions = verdict.customInstructions;
    if (verdict?.replaceInstructions !== undefined) replaceInstructions = verdict.replaceInstructions;
    if (verdict?.label !== undefined) label = verdict.label;

    let summary: { text: string; details: unknown; fromExtension: boolean } | undefined;
    if (wantsSummary && verdict?.summary && typeof verdict.summary.summary === "string") {
      summary = { text: verdict.summary.summary, details: verdict.summary.details, fromExtension: true };
    } else if (wantsSummary && entries.length > 0) {
      try {
        const written = await generateBranchSummary(agent, entries, { customInstructions, replaceInstructions, signal: controller.signal });
        summary = { text: written.summary, details: { readFiles: written.readFiles, modifiedFiles: written.modifiedFiles }, fromExtension: false };
      } catch (error) {
        if (error instanceof CompactionCancelledError) return { cancelled: true, aborted: true };
        throw error;
      }
    }

    // A user (or injected) message is re-typed rather than kept: the leaf goes to its parent.
    let newLeafId: string | null = targetId;
    let editorText: string | undefined;
    if (target.type === "message" && target.message.role === "user") {
      newLeafId = target.parentId;
      editorText = userText(target.message.content);
    } else if (target.type === "custom_message") {
      newLeafId = target.parentId;
      editorText = userText(target.content);
    }

    let summaryEntry: SessionEntry | undefined;
    if (summary) {
      summaryEntry = session.branchWithSummary(newLeafId, summary.text, {
        ...(summary.details !== undefined ? { details: summary.details } : {}),
        ...(summary.fromExtension ? { fromHook: true } : {}),
      });
      if (label) session.setLabel(summaryEntry.id, label);
    } else {
      session.moveLeaf(newLeafId);
      if (label) session.setLabel(targetId, label);
    }
    agent.useSession(session);
    await this.runtime.emit({
      type: "session_tree",
      newLeafId: session.leafId,
      oldLeafId,
      ...(summaryEntry ? { summaryEntry, fromExtension: summary?.fromExtension ?? false } : {}),
    });
    return { cancelled: false, ...(editorText !== undefined ? { editorText } : {}) };
  }

  resyncSession(): void {
    this.#agent.useSession(this.#agent.session);
  }

  newSession(options: { parentSession?: string | undefined } = {}): Promise<{ cancelled: boolean }> {
    return this.switchTo(() => this.#sessions.create({ parentSession: options.parentSession }), {
      before: { type: "session_before_switch", reason: "new" },
      reason: "new",
    });
  }

  // ---- ExtensionHost ------------------------------------------------------------

  ui(extensionPath: string): ExtensionUIContext {
    let ui = this.#uiContexts.get(extensionPath);
    if (!ui) {
      ui = createRpcUiContext(this, extensionPath);
      this.#uiContexts.set(extensionPath, ui);
    }
    return ui;
  }

  reportError(report: ExtensionErrorReport): void {
    this.#log(`extension error (${report.event}) in ${report.extensionPath}: ${report.stack !== undefined ? extensionStack(report.stack) : report.error}`);
    this.#send({ type: "extension_error", extensionPath: report.extensionPath, event: report.event, error: report.error });
  }

  reload(): Promise<void> {
    return this.#reload();
  }

  requestShutdown(): void {
    this.#requestShutdown();
  }

  sendMessage(message: CustomMessageInput, options?: { triggerTurn?: boolean; deliverAs?: string }): void {
    this.#agent.sendMessage(message, options);
  }

  sendUserMessage(content: string | (TextContent | ImageContent)[], options?: { deliverAs?: string }): void {
    this.#agent.sendUserMessage(content, options).catch((error: unknown) => this.diagnostic(`pi.sendUserMessage(): ${errorMessage(error)}`));
  }

  model(): ExtensionContext["model"] {
    return this.#agent.model;
  }

  modelRegistry(): ExtensionContext["modelRegistry"] {
    const models = this.#agent.models;
    return {
      getAll: () => models.availableModels(),
      getAvailable: async () => models.availableModels(),
      find: (provider: string, id: string) => models.findModel(provider, id),
    };
  }

  signal(): AbortSignal | undefined {
    return this.#agent.signal;
  }

  hasPendingMessages(): boolean {
    return this.#agent.hasPendingMessages();
  }

  contextUsage(): ContextUsage | undefined {
    return this.#agent.contextUsage();
  }

  compact(options: { customInstructions?: string; onComplete?: (result: unknown) => void; onError?: (error: Error) => void }): void {
    void this.#agent.compact(options.customInstructions, "manual").then(
      (result) => options.onComplete?.(result),
      (error: unknown) => options.onError?.(error instanceof Error ? error : new Error(String(error))),
    );
  }

  systemPrompt(): string {
    return this.#agent.currentSystemPrompt();
  }

  activeToolNames(): string[] {
    this.#agent.tools.sync(this.runtime.tools);
    return this.#agent.tools.activeNames();
  }

  setActiveTools(names: string[]): void {
    this.#agent.tools.sync(this.runtime.tools);
    this.#agent.tools.setActive(names);
  }

  allTools(): { name: string; description?: string; parameters?: unknown; sourceInfo?: unknown }[] {
    this.#agent.tools.sync(this.runtime.tools);
    return this.#agent.tools.all().map(({ definition, extensionPath }) => ({
      name: definition.name,
      description: definition.description,
      parameters: definition.parameters,
      sourceInfo: extensionPath
        ? { path: extensionPath, source: "extension", scope: "temporary", origin: "top-level" }
        : { path: `<builtin:${definition.name}>`, source: "builtin", scope: "temporary", origin: "top-level" },
    }));
  }

  registerProvider(name: string, config: unknown): void {
    this.#agent.models.register(name, (config ?? {}) as ProviderConfig);
  }

  unregisterProvider(name: string): void {
    this.#agent.models.unregister(name);
  }

  async setModel(model: unknown): Promise<boolean> {
    const m = model as Partial<Model<Api>> | undefined;
    const found = m?.provider && m.id ? this.#agent.models.findModel(m.provider, m.id) : undefined;
    if (!found) return false;
    try {
      this.#agent.setModel(found);
      return true;
    } catch {
      return false;
    }
  }

  cliFlag(name: string): string | boolean | undefined {
    return this.#extensionFlags.get(name);
  }

  diagnostic(message: string): void {
    this.#log(message);
  }

  // ---- UiBridge -------------------------------------------------------------------

  fireAndForget(spec: Parameters<UiBridge["fireAndForget"]>[0]): void {
    const record = { type: "extension_ui_request", id: this.dialogs.newFireAndForgetId(), ...spec } as FireAndForgetRequest;
    applyUiRecord(this.#uiState, record);
    this.#send(record);
  }

  diagnose(extensionPath: string, method: string, behaviour: string): void {
    this.warnOnce(extensionPath, `degraded:${method}`, `ctx.ui.${method}() is not supported in RPC mode and ${behaviour}`);
  }

  warnOnce(extensionPath: string, key: string, message: string): void {
    const seen = `${extensionPath}\0${key}`;
    if (this.#diagnosed.has(seen)) return;
    this.#diagnosed.add(seen);
    this.#log(`${extensionPath}: ${message}`);
  }
}
