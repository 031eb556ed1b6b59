/**
 * What extensions reach through in RPC mode: the ExtensionHost their runtime calls back into, and
 * the UiBridge behind each ctx.ui. Session moves are the agent's (agent/session-switching.ts,
 * agent/tree-navigation.ts); the host holds the SessionSwitching that its front door shares.
 */
import type { VirtualModelDefinition } from "../models/virtual-models.js";
import { extensionStack } from "../extensions/extension-stack.js";
import type { Api, ImageContent, Model, TextContent } from "@earendil-works/pi-ai";
import type { FireAndForgetRequest, UiState } from "@parley/protocol";
import { applyUiRecord, copyUiState, emptyUiState } from "@parley/protocol/ui-state";
import { SessionSwitching, type SwitchingAgent } from "../agent/session-switching.js";
import type { ToolRegistry } from "../agent/tool-registry.js";
import type { CompactionReason, CompactionResult } from "../agent/compaction-host.js";
import type { UserContent } from "../agent/prompt-intake.js";
import type { ScopedModelChoice } from "../models/model-scope.js";
import type { SessionFactory } from "../session/session-factory.js";
import { navigateTree, type TreeNavigationHost, type TreeNavigationResult } from "../agent/tree-navigation.js";
import type { ExtensionErrorReport, ExtensionHost } from "../extensions/host.js";
import { ExtensionRuntime } from "../extensions/runtime.js";
import type {
  ContextUsage,
  CustomMessageInput,
  ExtensionContext,
  ExtensionMode,
  ExtensionUIContext,
  NavigateTreeOptions,
  ScopedModel,
  ThinkingLevel,
  ToolInfo,
} from "../extensions/types.js";
import type { ExtensionProviders, ModelResolution, ProviderConfig } from "../models/index.js";
import { isNativeProvider, nativeProviderConfig } from "../models/native-provider.js";
import type { Session, SessionEntry } from "../session/session.js";
import type { DialogRegistry } from "../ui/dialog-registry.js";
import { noUiContext } from "../ui/no-ui-context.js";
import { createRpcUiContext, type UiBridge } from "../ui/rpc-ui-context.js";
import type { Transport } from "./transport.js";
import { errorMessage } from "../error-text.js";

/**
 * The agent as the host sees it: what extensions reach through pi's API and ctx (the session,
 * models, tools, messages, compaction), and what session switching and tree navigation take.
 */
export interface HostAgent extends SwitchingAgent, TreeNavigationHost {
  readonly session: Session;
  readonly isRunning: boolean;
  readonly signal: AbortSignal | undefined;
  readonly model: Model<Api>;
  readonly models: ModelResolution & ExtensionProviders;
  readonly tools: ToolRegistry;
  readonly thinkingLevel: ThinkingLevel;
  readonly scopedModels: ScopedModelChoice[];
  abort(): Promise<void>;
  waitForIdle(): Promise<void>;
  availableThinkingLevels(): ThinkingLevel[];
  setThinkingLevel(level: ThinkingLevel): void;
  setModel(model: Model<Api>): void;
  sendMessage(input: CustomMessageInput, options?: { triggerTurn?: boolean; deliverAs?: string }): void;
  sendUserMessage(content: UserContent, options?: { deliverAs?: string; expandPromptTemplates?: boolean }): Promise<void>;
  hasPendingMessages(): boolean;
  contextUsage(): ContextUsage | undefined;
  compact(customInstructions: string | undefined, reason: CompactionReason): Promise<CompactionResult>;
  currentSystemPrompt(): string;
}

export interface RpcExtensionHostOptions {
  cwd: string;
  /** The agent is made after the host (its runtime must exist first), so it is reached lazily. */
  agent: () => HostAgent;
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
  /** A session switch: the extensions loaded again, fresh, without reload's events (SessionSwitching). */
  reloadForSession?: (() => Promise<void>) | undefined;
  /** Where relative session paths from the client start (the folder parley was started in); default `cwd`. */
  launchCwd?: string | undefined;
  /** A switch to a session of another folder: the agent moves there (this host's `cwd` already has). */
  moveTo?: ((cwd: string) => Promise<void>) | undefined;
  /** ctx.mode (default "rpc"). In print and JSON mode there is no client: ctx.ui answers nothing, as pi's does (ui/no-ui-context.ts). */
  mode?: ExtensionMode | undefined;
}

export class RpcExtensionHost implements ExtensionHost, UiBridge {
  #cwd: string;
  readonly #onMove: ((cwd: string) => Promise<void>) | undefined;
  readonly dialogs: DialogRegistry;
  /** Made here because it calls back into this host. */
  readonly runtime: ExtensionRuntime;
  /** New, stored, forked and cloned sessions: the RPC commands and ACP switch through it too. */
  readonly switching: SessionSwitching;
  readonly #getAgent: () => HostAgent;
  readonly #send: Transport["send"];
  readonly #log: (message: string) => void;
  readonly #requestShutdown: () => void;
  readonly #reload: () => Promise<void>;
  readonly #uiState: UiState = emptyUiState();
  readonly #uiContexts = new Map<string, ExtensionUIContext>();
  readonly #diagnosed = new Set<string>();
  #extensionFlags = new Map<string, string | boolean>();
  readonly mode: ExtensionMode;

  constructor(options: RpcExtensionHostOptions) {
    this.#cwd = options.cwd;
    this.mode = options.mode ?? "rpc";
    this.dialogs = options.dialogs;
    this.#getAgent = options.agent;
    this.#send = options.send;
    this.#log = options.log;
    this.#requestShutdown = options.requestShutdown;
    this.#reload = options.reload;
    this.runtime = new ExtensionRuntime(this);
    this.#onMove = options.moveTo;
    this.switching = new SessionSwitching({
      cwd: () => this.#cwd,
      pathBase: options.launchCwd,
      moveTo: (cwd) => this.moveTo(cwd),
      agent: options.agent,
      runtime: this.runtime,
      sessions: options.sessions,
      reloadExtensions: options.reloadForSession,
    });
  }

  /** The folder the agent works in (ctx.cwd): the current session's, as in pi. */
  get cwd(): string {
    return this.#cwd;
  }

  /** The agent works in another folder from now on (a session of that folder was switched to). */
  async moveTo(cwd: string): Promise<void> {
    this.#cwd = cwd;
    await this.#onMove?.(cwd);
  }

  get #agent(): HostAgent {
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

  waitForIdle(): Promise<void> {
    return this.#agent.waitForIdle();
  }

  // Session moves are the agent's (agent/session-switching.ts, agent/tree-navigation.ts): the
  // same for every front door.

  forkSession(entryId: string, position: "before" | "at"): Promise<{ cancelled: boolean; text?: string }> {
    return this.switching.forkSession(entryId, position);
  }

  cloneSession(): Promise<{ cancelled: boolean }> {
    return this.switching.cloneSession();
  }

  switchSession(path: string): Promise<{ cancelled: boolean }> {
    return this.switching.switchSession(path);
  }

  navigateTree(targetId: string, options: NavigateTreeOptions = {}): Promise<TreeNavigationResult> {
    return navigateTree(this.#agent, this.runtime, targetId, options);
  }

  newSession(
    options: { parentSession?: string | undefined; setup?: ((session: Session) => Promise<void> | void) | undefined } = {},
  ): Promise<{ cancelled: boolean }> {
    return this.switching.newSession(options);
  }

  // ---- ExtensionHost ------------------------------------------------------------

  ui(extensionPath: string): ExtensionUIContext {
    let ui = this.#uiContexts.get(extensionPath);
    if (!ui) {
      ui = this.mode === "rpc" ? createRpcUiContext(this, extensionPath) : noUiContext();
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

  sendUserMessage(content: string | (TextContent | ImageContent)[], options?: { deliverAs?: string; expandPromptTemplates?: boolean }): void {
    this.#agent.sendUserMessage(content, options).catch((error: unknown) => this.diagnostic(`pi.sendUserMessage(): ${errorMessage(error)}`));
  }

  model(): ExtensionContext["model"] {
    return this.#agent.model;
  }

  models(): ModelResolution & ExtensionProviders {
    return this.#agent.models;
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

  /** pi.getAllTools(): with the newest pi's exposure, namespace, annotations and reachesTools. */
  allTools(): ToolInfo[] {
    this.#agent.tools.sync(this.runtime.tools);
    return this.#agent.tools.all().map(({ definition, extensionPath }) => ({
      name: definition.name,
      description: definition.description,
      parameters: definition.parameters,
      ...(definition.promptGuidelines ? { promptGuidelines: definition.promptGuidelines } : {}),
      exposure: definition.exposure ?? "direct",
      ...(definition.namespace !== undefined ? { namespace: definition.namespace } : {}),
      ...(definition.annotations !== undefined ? { annotations: { ...definition.annotations } } : {}),
      ...(definition.reachesTools !== undefined ? { reachesTools: definition.reachesTools } : {}),
      sourceInfo: extensionPath
        ? { path: extensionPath, source: "extension", scope: "temporary", origin: "top-level" }
        : { path: `<builtin:${definition.name}>`, source: "builtin", scope: "temporary", origin: "top-level" },
    }));
  }

  registerProvider(name: string, config: unknown): void {
    // A provider object (pi-ai 1.6's createProvider) is read into the config form.
    this.#agent.models.register(name, isNativeProvider(config) ? nativeProviderConfig(config) : ((config ?? {}) as ProviderConfig));
  }

  unregisterProvider(name: string): void {
    this.#agent.models.unregister(name);
  }

  registerVirtualModel(definition: VirtualModelDefinition): void {
    this.#agent.models.registerVirtual(definition);
  }

  unregisterVirtualModel(provider: string, id: string): void {
    this.#agent.models.unregisterVirtual(provider, id);
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
