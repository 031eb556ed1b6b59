/**
 * What `@mariozechner/pi-coding-agent` resolves to for extensions running in
 * parley (the extension loader aliases the package name to this module).
 *
 * Every value export of pi 0.73.1's and pi 1.6.0's package roots exists here, so extension
 * imports always resolve. What works headless is implemented for real (tool
 * factories, truncation, file-mutation queue, message helpers, themes with
 * plain styling, editor/loader components); pi internals and interactive-only
 * pieces are stand-ins that throw "<name> is not available in parley (...)"
 * when used.
 */
import { agentDir as findAgentDir } from "../../config/agent-dir.js";
import { resolve } from "node:path";
import type { TSchema } from "typebox";
import type { AgentTool, ToolDefinition } from "../../tools/index.js";
import type { ExtensionToolContext } from "../types.js";
import { NOT_IN_PARLEY, unavailableAsyncFunction, unavailableClass, unavailableFunction } from "./unavailable.js";
import { PI_VERSION } from "./pi-versions.js";

// ---------------------------------------------------------------------------
// Types extensions import alongside the values.

export type {
  ExecuteToolOptions,
  ExtensionAPI,
  ExtensionCommandContext,
  ExtensionContext,
  ExtensionToolContext,
  ToolCallOutcome as AgentToolCallOutcome,
} from "../types.js";
export type {
  AgentToolResult,
  AgentToolUpdateCallback,
  BashOperations,
  BashSpawnContext,
  BashSpawnHook,
  BashToolDetails,
  BashToolInput,
  BashToolOptions,
  EditOperations,
  EditToolDetails,
  EditToolInput,
  EditToolOptions,
  FindOperations,
  FindToolDetails,
  FindToolInput,
  FindToolOptions,
  GrepOperations,
  GrepToolDetails,
  GrepToolInput,
  GrepToolOptions,
  LsOperations,
  LsToolDetails,
  LsToolInput,
  LsToolOptions,
  ReadOperations,
  ReadToolDetails,
  ReadToolInput,
  ReadToolOptions,
  ToolDefinition,
  ToolExecutionMode,
  ToolsOptions,
  TruncationOptions,
  TruncationResult,
  WriteOperations,
  WriteToolInput,
  WriteToolOptions,
} from "../../tools/index.js";
export type {
  AgentMessage,
  BashExecutionMessage,
  BranchSummaryMessage,
  CompactionSettings,
  CompactionSummaryMessage,
  CustomMessage,
} from "./messages.js";
export type { ThemeColor, VisualTruncateResult } from "./theme.js";

// ---------------------------------------------------------------------------
// Implemented for real.

/** The version of pi's extension API this module mirrors under pi 0.73.1's package name (pi-coding-agent-newest.ts: the newest). */
export const VERSION = PI_VERSION;
/** pi's session file format version (the format parley's sessions follow). */
export const CURRENT_SESSION_VERSION = 3;

export {
  createBashTool,
  createBashToolDefinition,
  createCodingTools,
  createEditTool,
  createEditToolDefinition,
  createFindTool,
  createFindToolDefinition,
  createGrepTool,
  createGrepToolDefinition,
  createLocalBashOperations,
  createLsTool,
  createLsToolDefinition,
  createReadOnlyTools,
  createReadTool,
  createReadToolDefinition,
  createWriteTool,
  createWriteToolDefinition,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  getShellConfig,
  truncateHead,
  truncateLine,
  truncateTail,
  withFileMutationQueue,
} from "../../tools/index.js";
export {
  ArminComponent,
  AssistantMessageComponent,
  BashExecutionComponent,
  BorderedLoader,
  BranchSummaryMessageComponent,
  CompactionSummaryMessageComponent,
  CustomEditor,
  CustomMessageComponent,
  DynamicBorder,
  ExtensionEditorComponent,
  ExtensionInputComponent,
  ExtensionSelectorComponent,
  FooterComponent,
  InteractiveMode,
  LoginDialogComponent,
  ModelSelectorComponent,
  OAuthSelectorComponent,
  SessionSelectorComponent,
  SettingsSelectorComponent,
  ShowImagesSelectorComponent,
  SkillInvocationMessageComponent,
  ThemeSelectorComponent,
  ThinkingSelectorComponent,
  ToolExecutionComponent,
  TreeSelectorComponent,
  UserMessageComponent,
  UserMessageSelectorComponent,
} from "./components.js";
export { parseFrontmatter, stripFrontmatter } from "./frontmatter.js";
export { CONFIG_DIR_NAME, formatReadLineRange, getDocsPath, getExamplesPath, getPackageDir, getReadmePath } from "./install-paths.js";
export { generateDiffString } from "../../tools/diff.js";
export {
  calculateContextTokens,
  convertToLlm,
  DEFAULT_COMPACTION_SETTINGS,
  estimateTokens,
  getLastAssistantUsage,
  getLatestCompactionEntry,
  serializeConversation,
  shouldCompact,
} from "./messages.js";
export {
  getLanguageFromPath,
  getMarkdownTheme,
  getSelectListTheme,
  getSettingsListTheme,
  highlightCode,
  initTheme,
  keyHint,
  keyText,
  rawKeyHint,
  renderDiff,
  Theme,
  truncateToVisualLines,
} from "./theme.js";

type AnyToolDefinition = ToolDefinition<any, any, any, any>;

/**
 * Identity helper that keeps parameter inference for tools defined outside a
 * `registerTool` call (e.g. stored in a variable or array).
 */
export function defineTool<TParams extends TSchema, TDetails = unknown, TState = any>(
  tool: ToolDefinition<TParams, TDetails, TState, ExtensionToolContext>,
): ToolDefinition<TParams, TDetails, TState, ExtensionToolContext> & AnyToolDefinition {
  return tool as ToolDefinition<TParams, TDetails, TState, ExtensionToolContext> & AnyToolDefinition;
}

/** pi's agent directory, which parley shares: $PI_CODING_AGENT_DIR, or ~/.pi/agent. */
export function getAgentDir(): string {
  return resolve(findAgentDir());
}

export interface EventBus {
  emit(channel: string, data: unknown): void;
  on(channel: string, handler: (data: unknown) => void): () => void;
}

export interface EventBusController extends EventBus {
  clear(): void;
}

/**
 * Synchronous pub/sub between extensions. A throwing handler is reported on
 * stderr (stdout carries the RPC protocol) and does not stop the others.
 */
export function createEventBus(): EventBusController {
  const handlers = new Map<string, Set<(data: unknown) => void>>();
  return {
    emit(channel, data) {
      for (const handler of [...(handlers.get(channel) ?? [])]) {
        try {
          handler(data);
        } catch (error) {
          console.error(`Event handler error (${channel}):`, error);
        }
      }
    },
    on(channel, handler) {
      let set = handlers.get(channel);
      if (!set) handlers.set(channel, (set = new Set()));
      set.add(handler);
      return () => {
        set.delete(handler);
      };
    },
    clear() {
      handlers.clear();
    },
  };
}

export interface SourceInfo {
  path: string;
  source: string;
  scope: "user" | "project" | "temporary";
  origin: "package" | "top-level";
  baseDir?: string;
}

/** Provenance record for resources an extension creates at runtime. */
export function createSyntheticSourceInfo(
  path: string,
  options: { source: string; scope?: SourceInfo["scope"]; origin?: SourceInfo["origin"]; baseDir?: string },
): SourceInfo {
  const info: SourceInfo = { path, source: options.source, scope: options.scope ?? "temporary", origin: options.origin ?? "top-level" };
  if (options.baseDir !== undefined) info.baseDir = options.baseDir;
  return info;
}

interface ToolEventLike {
  toolName?: string;
}

// Narrowing helpers for tool_call / tool_result events.
export const isBashToolResult = (e: ToolEventLike): boolean => e?.toolName === "bash";
export const isReadToolResult = (e: ToolEventLike): boolean => e?.toolName === "read";
export const isEditToolResult = (e: ToolEventLike): boolean => e?.toolName === "edit";
export const isWriteToolResult = (e: ToolEventLike): boolean => e?.toolName === "write";
export const isGrepToolResult = (e: ToolEventLike): boolean => e?.toolName === "grep";
export const isFindToolResult = (e: ToolEventLike): boolean => e?.toolName === "find";
export const isLsToolResult = (e: ToolEventLike): boolean => e?.toolName === "ls";
export const isPowerShellToolResult = (e: ToolEventLike): boolean => e?.toolName === "powershell";
export function isToolCallEventType(toolName: string, event: ToolEventLike): boolean {
  return event?.toolName === toolName;
}

interface RegisteredToolLike {
  definition: AnyToolDefinition;
}

interface ContextSource {
  createContext?: () => unknown;
}

/** Adapt a registered extension tool to a runtime tool, with contexts from `runner`. */
export function wrapRegisteredTool(registeredTool: RegisteredToolLike, runner?: ContextSource): AgentTool<any, any> {
  const def = registeredTool.definition;
  return {
    name: def.name,
    label: def.label,
    description: def.description,
    parameters: def.parameters,
    prepareArguments: def.prepareArguments,
    executionMode: def.executionMode,
    execute: (toolCallId, params, signal, onUpdate) => def.execute(toolCallId, params, signal, onUpdate, runner?.createContext?.()),
  };
}

export function wrapRegisteredTools(registeredTools: RegisteredToolLike[], runner?: ContextSource): AgentTool<any, any>[] {
  return registeredTools.map((t) => wrapRegisteredTool(t, runner));
}

// ---------------------------------------------------------------------------
// Stand-ins. Reason texts say why; the UI ones use the default "RPC mode has
// no terminal UI".

export const copyToClipboard = unavailableAsyncFunction("copyToClipboard");

// pi's own runtime, session, auth and resource machinery: parley implements
// these itself and does not expose pi's classes.
export const AgentSession = unavailableClass("AgentSession", NOT_IN_PARLEY);
export const AgentSessionRuntime = unavailableClass("AgentSessionRuntime", NOT_IN_PARLEY);
export const AuthStorage = unavailableClass("AuthStorage", NOT_IN_PARLEY);
export const FileAuthStorageBackend = unavailableClass("FileAuthStorageBackend", NOT_IN_PARLEY);
export const InMemoryAuthStorageBackend = unavailableClass("InMemoryAuthStorageBackend", NOT_IN_PARLEY);
export const DefaultPackageManager = unavailableClass("DefaultPackageManager", NOT_IN_PARLEY);
export const DefaultResourceLoader = unavailableClass("DefaultResourceLoader", NOT_IN_PARLEY);
export const ExtensionRunner = unavailableClass("ExtensionRunner", NOT_IN_PARLEY);
export const ModelRegistry = unavailableClass("ModelRegistry", NOT_IN_PARLEY);
export const RpcClient = unavailableClass("RpcClient", NOT_IN_PARLEY);
export const SessionManager = unavailableClass("SessionManager", NOT_IN_PARLEY);
export const SettingsManager = unavailableClass("SettingsManager", NOT_IN_PARLEY);

export const createAgentSession = unavailableAsyncFunction("createAgentSession", NOT_IN_PARLEY);
export const createAgentSessionFromServices = unavailableAsyncFunction("createAgentSessionFromServices", NOT_IN_PARLEY);
export const createAgentSessionRuntime = unavailableAsyncFunction("createAgentSessionRuntime", NOT_IN_PARLEY);
export const createAgentSessionServices = unavailableAsyncFunction("createAgentSessionServices", NOT_IN_PARLEY);
export const createExtensionRuntime = unavailableFunction("createExtensionRuntime", NOT_IN_PARLEY);
export const discoverAndLoadExtensions = unavailableAsyncFunction("discoverAndLoadExtensions", NOT_IN_PARLEY);
export const main = unavailableAsyncFunction("main", NOT_IN_PARLEY);
export const runPrintMode = unavailableAsyncFunction("runPrintMode", NOT_IN_PARLEY);
export const runRpcMode = unavailableAsyncFunction("runRpcMode", NOT_IN_PARLEY);

// Session-tree and compaction internals (they need pi's SessionManager or call an LLM).
export const buildSessionContext = unavailableFunction("buildSessionContext", NOT_IN_PARLEY);
export const collectEntriesForBranchSummary = unavailableFunction("collectEntriesForBranchSummary", NOT_IN_PARLEY);
export const compact = unavailableAsyncFunction("compact", NOT_IN_PARLEY);
export const findCutPoint = unavailableFunction("findCutPoint", NOT_IN_PARLEY);
export const findTurnStartIndex = unavailableFunction("findTurnStartIndex", NOT_IN_PARLEY);
export const generateBranchSummary = unavailableAsyncFunction("generateBranchSummary", NOT_IN_PARLEY);
export const generateSummary = unavailableAsyncFunction("generateSummary", NOT_IN_PARLEY);
export const migrateSessionEntries = unavailableFunction("migrateSessionEntries", NOT_IN_PARLEY);
export const parseSessionEntries = unavailableFunction("parseSessionEntries", NOT_IN_PARLEY);
export const prepareBranchEntries = unavailableFunction("prepareBranchEntries", NOT_IN_PARLEY);

// Skills and context files are discovered by parley itself.
export const formatSkillsForPrompt = unavailableFunction("formatSkillsForPrompt", NOT_IN_PARLEY);
export const loadProjectContextFiles = unavailableFunction("loadProjectContextFiles", NOT_IN_PARLEY);
export const loadSkills = unavailableFunction("loadSkills", NOT_IN_PARLEY);
export const loadSkillsFromDir = unavailableFunction("loadSkillsFromDir", NOT_IN_PARLEY);
export const parseSkillBlock = unavailableFunction("parseSkillBlock", NOT_IN_PARLEY);

// The newest pi's (1.x) additions. Names only: an import of a missing name would stop the
// extension from loading at all, while a stand-in fails only where it is used.
/** The custom entry type pi's virtual models keep their routing state in. */
export const VIRTUAL_MODEL_STATE_ENTRY = "pi.virtual-model-state";
export const CredentialSynchronizationError = unavailableClass("CredentialSynchronizationError", NOT_IN_PARLEY);
export const ModelRuntime = unavailableClass("ModelRuntime", NOT_IN_PARLEY);
export const ProjectTrustStore = unavailableClass("ProjectTrustStore", NOT_IN_PARLEY);
export const buildContextEntries = unavailableFunction("buildContextEntries", NOT_IN_PARLEY);
export const buildSessionProjection = unavailableFunction("buildSessionProjection", NOT_IN_PARLEY);
export const sessionEntryToContextMessages = unavailableFunction("sessionEntryToContextMessages", NOT_IN_PARLEY);
export const generateSummaryWithUsage = unavailableAsyncFunction("generateSummaryWithUsage", NOT_IN_PARLEY);
export const generateUnifiedPatch = unavailableFunction("generateUnifiedPatch", NOT_IN_PARLEY);
export const hasTrustRequiringProjectResources = unavailableFunction("hasTrustRequiringProjectResources", NOT_IN_PARLEY);
export const parseArgs = unavailableFunction("parseArgs", NOT_IN_PARLEY);
export const readStoredCredential = unavailableFunction("readStoredCredential", NOT_IN_PARLEY);
export const resolveCliModel = unavailableFunction("resolveCliModel", NOT_IN_PARLEY);
export const resolveModelScopeWithDiagnostics = unavailableFunction("resolveModelScopeWithDiagnostics", NOT_IN_PARLEY);
export { createCodemodeExtension } from "../codemode-extension.js";
export const createMcpExtension = unavailableFunction("createMcpExtension", NOT_IN_PARLEY);
export const createToolSearchExtension = unavailableFunction("createToolSearchExtension", NOT_IN_PARLEY);
// Images are passed through to the model as given.
export const convertToPng = unavailableAsyncFunction("convertToPng", NOT_IN_PARLEY);
export const resizeImage = unavailableAsyncFunction("resizeImage", NOT_IN_PARLEY);
export const formatDimensionNote = unavailableFunction("formatDimensionNote", NOT_IN_PARLEY);
export const detectSupportedImageMimeTypeFromFile = unavailableAsyncFunction("detectSupportedImageMimeTypeFromFile", NOT_IN_PARLEY);
// parley has no PowerShell tool (pi's is for Windows).
const NO_POWERSHELL = "parley has no PowerShell tool";
export const getPowerShellConfig = unavailableFunction("getPowerShellConfig", NO_POWERSHELL);
export const createPowerShellTool = unavailableFunction("createPowerShellTool", NO_POWERSHELL);
export const createPowerShellToolDefinition = unavailableFunction("createPowerShellToolDefinition", NO_POWERSHELL);
export const createLocalPowerShellOperations = unavailableFunction("createLocalPowerShellOperations", NO_POWERSHELL);
