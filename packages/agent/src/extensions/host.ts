/**
 * What the extension runtime needs from the agent around it. RpcExtensionHost (core/extension-host.ts)
 * implements it for the RPC server; keeping it an interface lets tests and other modes host
 * extensions too.
 */
import type { ExtensionProviders, ModelResolution } from "../models/index.js";
import type { VirtualModelDefinition } from "../models/virtual-models.js";
import type { Session } from "../session/session.js";
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
} from "./types.js";
import type { SessionEntry } from "../session/session.js";
import type { TextContent, ImageContent } from "@earendil-works/pi-ai";

export interface ExtensionErrorReport {
  extensionPath: string;
  event: string;
  error: string;
  stack?: string | undefined;
}

export interface ExtensionHost {
  readonly cwd: string;
  /** ctx.mode; ctx.hasUI is true in RPC mode only (print and JSON mode answer every dialog at once, as pi does). */
  readonly mode: ExtensionMode;
  session(): Session;
  /** The ctx.ui for one extension (diagnostics name that extension). */
  ui(extensionPath: string): ExtensionUIContext;
  reportError(report: ExtensionErrorReport): void;
  /** Exit after the command being handled (ctx.shutdown()). */
  requestShutdown(): void;
  /** ctx.reload(): session_shutdown, drop every registration, load the extensions again, session_start. */
  reload(): Promise<void>;
  /** `setup` seeds the new session before its session_start, as in pi (ctx.newSession). */
  newSession(options?: { parentSession?: string; setup?: (session: Session) => Promise<void> | void }): Promise<{ cancelled: boolean }>;
  forkSession(entryId: string, position: "before" | "at"): Promise<{ cancelled: boolean }>;
  switchSession(path: string): Promise<{ cancelled: boolean }>;
  navigateTree(targetId: string, options?: NavigateTreeOptions): Promise<{ cancelled: boolean; aborted?: boolean; editorText?: string }>;
  waitForIdle(): Promise<void>;
  sendMessage(message: CustomMessageInput, options?: { triggerTurn?: boolean; deliverAs?: string }): void;
  sendUserMessage(content: string | (TextContent | ImageContent)[], options?: { deliverAs?: string; expandPromptTemplates?: boolean }): void;
  isIdle(): boolean;
  model(): ExtensionContext["model"];
  /** The agent's models: ctx.modelRegistry works over them (model-registry.ts). */
  models(): ModelResolution & ExtensionProviders;
  /** The running agent turn's abort signal, if one is running. */
  signal(): AbortSignal | undefined;
  hasPendingMessages(): boolean;
  contextUsage(): ContextUsage | undefined;
  compact(options: Parameters<ExtensionContext["compact"]>[0] & object): void;
  systemPrompt(): string;
  activeToolNames(): string[];
  setActiveTools(names: string[]): void;
  allTools(): ToolInfo[];
  /** Switches model if it is one parley can use; false otherwise. */
  setModel(model: unknown): Promise<boolean>;
  registerProvider(name: string, config: unknown): void;
  unregisterProvider(name: string): void;
  /** pi.registerVirtualModel (checked); throws when a physical model has its provider and id. */
  registerVirtualModel(definition: VirtualModelDefinition): void;
  unregisterVirtualModel(provider: string, id: string): void;
  /** Names the session and tells the client (session_info_changed). */
  setSessionName(name: string): void;
  abort(): void;
  thinkingLevel(): ThinkingLevel;
  /** ctx.scopedModels: the models the session is limited to; empty when it is not. */
  scopedModels(): readonly ScopedModel[];
  /** pi.appendEntry saved an entry: the client hears of it (entry_appended). */
  emitEntryAppended(entry: SessionEntry): void;
  setThinkingLevel(level: ThinkingLevel): void;
  /** Value of a CLI flag given for an extension-registered flag name, if any. */
  cliFlag(name: string): string | boolean | undefined;
  diagnostic(message: string): void;
}
