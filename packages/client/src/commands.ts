/**
 * One typed method per command. Each is a thin call of `issue()`; results that are a single
 * list or value are unwrapped (as pi's own client does), the others are the response's `data`.
 */
import type {
  AgentMessage,
  BashResult,
  CancelledData,
  CommandType,
  CompactionResult,
  CycleModelData,
  CycleThinkingLevelData,
  ForkData,
  GetEntriesData,
  GetTreeData,
  GetUiStateData,
  ListFilesData,
  ListSessionsData,
  ImageContent,
  Model,
  PromptData,
  PromptDisposition,
  QueueContents,
  QueuedInputData,
  QueuedInputDisposition,
  QueueMode,
  ResponseData,
  SessionState,
  SessionStats,
  SlashCommand,
  StreamingBehavior,
  ThinkingLevel,
} from "@parley/protocol";
import type { Disposable } from "@parley/protocol/disposable";
import type { AgentEventMap } from "./records.js";
import type { CommandInput, IssuedRequest, RequestOptions } from "./requests.js";

export interface PromptOptions extends RequestOptions {
  images?: ImageContent[];
  /** Required while the agent is streaming: deliver as a steering or a follow-up message. */
  streamingBehavior?: StreamingBehavior;
}

export interface MessageOptions extends RequestOptions {
  images?: ImageContent[];
}

export interface BashOptions extends RequestOptions {
  /** Keep the output in the session but never send it to the model. */
  excludeFromContext?: boolean;
  /** Each chunk of output as it streams (the `bash_execution_update` events of this command). */
  onOutput?: (delta: string) => void;
}

export abstract class CommandMethods {
  /** Sends a command with a fresh id; the typed methods below all go through here. */
  protected abstract issue<K extends CommandType>(command: CommandInput<K>, options?: RequestOptions): IssuedRequest<K>;

  abstract on<K extends keyof AgentEventMap>(type: K, listener: (event: AgentEventMap[K]) => void): Disposable;

  /** Sends any command and resolves with its response's `data` (typed per command). */
  request<K extends CommandType>(command: CommandInput<K>, options?: RequestOptions): Promise<ResponseData<K>> {
    return this.issue(command, options).response;
  }

  // ---- prompting ----------------------------------------------------------------------

  /**
   * Sends a prompt. Resolves when the agent accepted it (a plain prompt; events follow) or,
   * for `/command`, when the command finished, which may be after dialogs were answered.
   */
  /**
   * Resolves with what became of it (`"started"`, `"queued"` or `"handled"`; wait for
   * agent_settled only after `"started"`), or undefined from an agent older than the newest pi,
   * which answers without data.
   */
  async prompt(message: string, options: PromptOptions = {}): Promise<PromptDisposition | undefined> {
    const { images, streamingBehavior, ...rest } = options;
    const data: PromptData | undefined = await this.request({ type: "prompt", message, ...defined({ images, streamingBehavior }) }, rest);
    return data?.disposition;
  }

  /** Resolves with `"queued"` or `"handled"` (undefined from an older agent); see prompt(). */
  async steer(message: string, options: MessageOptions = {}): Promise<QueuedInputDisposition | undefined> {
    const { images, ...rest } = options;
    const data: QueuedInputData | undefined = await this.request({ type: "steer", message, ...defined({ images }) }, rest);
    return data?.disposition;
  }

  async followUp(message: string, options: MessageOptions = {}): Promise<QueuedInputDisposition | undefined> {
    const { images, ...rest } = options;
    const data: QueuedInputData | undefined = await this.request({ type: "follow_up", message, ...defined({ images }) }, rest);
    return data?.disposition;
  }

  abort(options?: RequestOptions): Promise<void> {
    return this.request({ type: "abort" }, options);
  }

  clearQueue(options?: RequestOptions): Promise<QueueContents> {
    return this.request({ type: "clear_queue" }, options);
  }

  newSession(options: RequestOptions & { parentSession?: string } = {}): Promise<CancelledData> {
    const { parentSession, ...rest } = options;
    return this.request({ type: "new_session", ...defined({ parentSession }) }, rest);
  }

  // ---- state --------------------------------------------------------------------------

  getState(options?: RequestOptions): Promise<SessionState> {
    return this.request({ type: "get_state" }, options);
  }

  async getMessages(options?: RequestOptions): Promise<AgentMessage[]> {
    return (await this.request({ type: "get_messages" }, options)).messages;
  }

  // ---- model --------------------------------------------------------------------------

  setModel(provider: string, modelId: string, options?: RequestOptions): Promise<Model> {
    return this.request({ type: "set_model", provider, modelId }, options);
  }

  cycleModel(options?: RequestOptions): Promise<CycleModelData> {
    return this.request({ type: "cycle_model" }, options);
  }

  async getAvailableModels(options?: RequestOptions): Promise<Model[]> {
    return (await this.request({ type: "get_available_models" }, options)).models;
  }

  // ---- thinking -----------------------------------------------------------------------

  setThinkingLevel(level: ThinkingLevel, options?: RequestOptions): Promise<void> {
    return this.request({ type: "set_thinking_level", level }, options);
  }

  cycleThinkingLevel(options?: RequestOptions): Promise<CycleThinkingLevelData> {
    return this.request({ type: "cycle_thinking_level" }, options);
  }

  async getAvailableThinkingLevels(options?: RequestOptions): Promise<ThinkingLevel[]> {
    return (await this.request({ type: "get_available_thinking_levels" }, options)).levels;
  }

  // ---- queue modes, compaction, retry -----------------------------------------------------

  setSteeringMode(mode: QueueMode, options?: RequestOptions): Promise<void> {
    return this.request({ type: "set_steering_mode", mode }, options);
  }

  setFollowUpMode(mode: QueueMode, options?: RequestOptions): Promise<void> {
    return this.request({ type: "set_follow_up_mode", mode }, options);
  }

  compact(options: RequestOptions & { customInstructions?: string } = {}): Promise<CompactionResult> {
    const { customInstructions, ...rest } = options;
    return this.request({ type: "compact", ...defined({ customInstructions }) }, rest);
  }

  setAutoCompaction(enabled: boolean, options?: RequestOptions): Promise<void> {
    return this.request({ type: "set_auto_compaction", enabled }, options);
  }

  setAutoRetry(enabled: boolean, options?: RequestOptions): Promise<void> {
    return this.request({ type: "set_auto_retry", enabled }, options);
  }

  abortRetry(options?: RequestOptions): Promise<void> {
    return this.request({ type: "abort_retry" }, options);
  }

  // ---- bash ---------------------------------------------------------------------------

  async bash(command: string, options: BashOptions = {}): Promise<BashResult> {
    const { excludeFromContext, onOutput, ...rest } = options;
    const issued = this.issue({ type: "bash", command, ...defined({ excludeFromContext }) }, rest);
    // Records arrive on later ticks, so subscribing right after sending misses nothing.
    const subscription = onOutput
      ? this.on("bash_execution_update", (event) => {
          if (event.id === issued.id) onOutput(event.delta);
        })
      : undefined;
    try {
      return await issued.response;
    } finally {
      subscription?.dispose();
    }
  }

  abortBash(options?: RequestOptions): Promise<void> {
    return this.request({ type: "abort_bash" }, options);
  }

  // ---- session ------------------------------------------------------------------------

  getSessionStats(options?: RequestOptions): Promise<SessionStats> {
    return this.request({ type: "get_session_stats" }, options);
  }

  async exportHtml(options: RequestOptions & { outputPath?: string } = {}): Promise<string> {
    const { outputPath, ...rest } = options;
    return (await this.request({ type: "export_html", ...defined({ outputPath }) }, rest)).path;
  }

  switchSession(sessionPath: string, options?: RequestOptions): Promise<CancelledData> {
    return this.request({ type: "switch_session", sessionPath }, options);
  }

  fork(entryId: string, options?: RequestOptions): Promise<ForkData> {
    return this.request({ type: "fork", entryId }, options);
  }

  clone(options?: RequestOptions): Promise<CancelledData> {
    return this.request({ type: "clone" }, options);
  }

  async getForkMessages(options?: RequestOptions): Promise<Array<{ entryId: string; text: string }>> {
    return (await this.request({ type: "get_fork_messages" }, options)).messages;
  }

  getEntries(options: RequestOptions & { since?: string } = {}): Promise<GetEntriesData> {
    const { since, ...rest } = options;
    return this.request({ type: "get_entries", ...defined({ since }) }, rest);
  }

  getTree(options?: RequestOptions): Promise<GetTreeData> {
    return this.request({ type: "get_tree" }, options);
  }

  async getLastAssistantText(options?: RequestOptions): Promise<string | null> {
    return (await this.request({ type: "get_last_assistant_text" }, options)).text ?? null;
  }

  setSessionName(name: string, options?: RequestOptions): Promise<void> {
    return this.request({ type: "set_session_name", name }, options);
  }

  async getCommands(options?: RequestOptions): Promise<SlashCommand[]> {
    return (await this.request({ type: "get_commands" }, options)).commands;
  }

  /** parley only: pi answers RpcError "Unknown command: get_ui_state" (see detectCapabilities). */
  getUiState(options?: RequestOptions): Promise<GetUiStateData> {
    return this.request({ type: "get_ui_state" }, options);
  }

  /** parley only: the stored sessions of this folder (default) or of every project, newest first. */
  listSessions(scope?: "folder" | "all", options?: RequestOptions): Promise<ListSessionsData> {
    return this.request({ type: "list_sessions", ...defined({ scope }) }, options);
  }

  /** parley only: settings, skills, prompt templates and extensions again, as ctx.reload(). */
  reload(options?: RequestOptions): Promise<void> {
    return this.request({ type: "reload" }, options);
  }

  /** parley only: models.json again; the available models after it. */
  async refreshModels(options?: RequestOptions): Promise<Model[]> {
    return (await this.request({ type: "refresh_models" }, options)).models;
  }

  /** parley only: files under the working folder matching `query` (for `@` references). */
  listFiles(query?: string, limit?: number, options?: RequestOptions): Promise<ListFilesData> {
    return this.request({ type: "list_files", ...defined({ query, limit }) }, options);
  }
}

/** Drops undefined fields, so optional ones are absent from the wire rather than null-ish. */
function defined<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out as { [K in keyof T]?: Exclude<T[K], undefined> };
}
