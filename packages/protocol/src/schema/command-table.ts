/**
 * Every command, declared once: its parameters, what a successful response carries, its
 * documentation and its `RpcClient` method. Everything else about commands is derived from this
 * table: the command and response schemas, unions and maps (`command-records.ts`), the JSON
 * Schema files, the agent's standalone validators, the named exports (`generated/command-aliases.ts`)
 * and the client's typed methods (`npm run generate` writes the generated files; tests fail while
 * they are stale). The agent's handler table must then have a handler for the new key.
 *
 * The key is the command's `type`. A command's schema is `{id?, type, ...params}`; extra fields
 * on the wire are accepted (a newer client may send fields an older agent does not know).
 */
import { Type, type TProperties, type TSchema } from "typebox";
import { AgentMessage, ImageContent, Model } from "./messages.js";
import { QueueMode, RequestedThinkingLevel, StreamingBehavior, ThinkingLevel } from "./commands.js";
import {
  BashResult,
  CancelledData,
  CompactionResult,
  CycleModelData,
  CycleThinkingLevelData,
  ForkData,
  GetEntriesData,
  GetTreeData,
  PromptData,
  QueueContents,
  QueuedInputData,
  SessionState,
  SessionStats,
  SlashCommand,
} from "./responses.js";
import { GetUiStateData, ListFilesData, ListSessionsData } from "./additions.js";

/** How `@parley/client`'s `RpcClient` offers a command. */
export type ClientMethodDeclaration =
  | {
      /** The method's name. */
      readonly method: string;
      /** Parameters passed positionally, in this order; the others go in the options object. */
      readonly args?: readonly string[];
      /** Resolve with this field of the data rather than the whole data. */
      readonly result?: string;
    }
  /** The method is written by hand in packages/client/src/commands.ts (it does more than send). */
  | { readonly method: string; readonly handWritten: true };

export interface CommandDeclaration {
  /** What the command does (the schema's description, the client method's doc). */
  readonly description: string;
  /** The command's fields besides `id` and `type`. */
  readonly params?: TProperties;
  /** The schema of a successful response's `data`; without it, the response has no `data`. */
  readonly data?: TSchema;
  /** pi 0.73 answers this command without `data`, so a client must accept a response without it. */
  readonly olderPiOmitsData?: true;
  /** A parley addition (pi has no such command); listed in parley-additions.json. */
  readonly parley?: true;
  readonly client: ClientMethodDeclaration;
}

const Images = Type.Optional(Type.Array(ImageContent, { description: "Images attached to the message." }));

export const COMMAND_DECLARATIONS = {
  // ---- prompting -------------------------------------------------------------------------
  prompt: {
    description: "Send a user prompt. The response means accepted, queued or handled; events follow.",
    params: {
      message: Type.String({
        description: "The user's text. `/name` runs an extension command, prompt template or skill.",
      }),
      images: Images,
      streamingBehavior: Type.Optional(StreamingBehavior),
    },
    data: PromptData,
    olderPiOmitsData: true,
    client: { method: "prompt", args: ["message"], result: "disposition" },
  },
  steer: {
    description: "Queue a steering message while the agent runs. Extension commands are refused.",
    params: { message: Type.String({ description: "Text delivered after the current turn's tool calls." }), images: Images },
    data: QueuedInputData,
    olderPiOmitsData: true,
    client: { method: "steer", args: ["message"], result: "disposition" },
  },
  follow_up: {
    description: "Queue a follow-up message for when the agent finishes. Extension commands are refused.",
    params: { message: Type.String({ description: "Text delivered once the agent has nothing left to do." }), images: Images },
    data: QueuedInputData,
    olderPiOmitsData: true,
    client: { method: "followUp", args: ["message"], result: "disposition" },
  },
  abort: { description: "Abort the current operation.", client: { method: "abort" } },
  clear_queue: {
    description: "Drop queued steering and follow-up messages; the response returns their text.",
    data: QueueContents,
    client: { method: "clearQueue" },
  },
  new_session: {
    description: "Start a fresh session. An extension may cancel it (session_before_switch).",
    params: { parentSession: Type.Optional(Type.String({ description: "Session file recorded as the new session's parent." })) },
    data: CancelledData,
    client: { method: "newSession" },
  },

  // ---- state -------------------------------------------------------------------------------
  get_state: { description: "Get the current session state.", data: SessionState, client: { method: "getState" } },
  get_messages: {
    description: "Get every message of the active conversation context.",
    data: Type.Object({ messages: Type.Array(AgentMessage) }, { description: "Data of get_messages." }),
    client: { method: "getMessages", result: "messages" },
  },

  // ---- model -------------------------------------------------------------------------------
  set_model: {
    description: "Switch to a specific model.",
    params: {
      provider: Type.String({ description: 'Provider name, e.g. "anthropic".' }),
      modelId: Type.String({ description: "Model id within that provider." }),
    },
    data: Model,
    client: { method: "setModel", args: ["provider", "modelId"] },
  },
  cycle_model: { description: "Switch to the next available model.", data: CycleModelData, client: { method: "cycleModel" } },
  get_available_models: {
    description: "List every configured model.",
    data: Type.Object({ models: Type.Array(Model) }, { description: "Data of get_available_models." }),
    client: { method: "getAvailableModels", result: "models" },
  },

  // ---- thinking ----------------------------------------------------------------------------
  set_thinking_level: {
    description: "Set the reasoning level.",
    params: { level: RequestedThinkingLevel },
    client: { method: "setThinkingLevel", args: ["level"] },
  },
  cycle_thinking_level: {
    description: "Move to the next thinking level the model supports.",
    data: CycleThinkingLevelData,
    client: { method: "cycleThinkingLevel" },
  },
  get_available_thinking_levels: {
    description: "List the thinking levels the current model supports.",
    data: Type.Object({ levels: Type.Array(ThinkingLevel) }, { description: 'Data of get_available_thinking_levels; ["off"] for a model without reasoning.' }),
    client: { method: "getAvailableThinkingLevels", result: "levels" },
  },

  // ---- queue modes -------------------------------------------------------------------------
  set_steering_mode: {
    description: "Choose how queued steering messages are delivered (default one-at-a-time).",
    params: { mode: QueueMode },
    client: { method: "setSteeringMode", args: ["mode"] },
  },
  set_follow_up_mode: {
    description: "Choose how queued follow-up messages are delivered (default one-at-a-time).",
    params: { mode: QueueMode },
    client: { method: "setFollowUpMode", args: ["mode"] },
  },

  // ---- compaction --------------------------------------------------------------------------
  compact: {
    description: "Summarise older context now to free tokens.",
    params: { customInstructions: Type.Optional(Type.String({ description: "Extra guidance for the summary." })) },
    data: CompactionResult,
    client: { method: "compact" },
  },
  set_auto_compaction: {
    description: "Turn automatic compaction on or off.",
    params: { enabled: Type.Boolean({ description: "true: compact automatically when the context is nearly full." }) },
    client: { method: "setAutoCompaction", args: ["enabled"] },
  },

  // ---- retry -------------------------------------------------------------------------------
  set_auto_retry: {
    description: "Turn automatic retry on or off.",
    params: { enabled: Type.Boolean({ description: "true: retry transient provider errors (overload, rate limit, 5xx)." }) },
    client: { method: "setAutoRetry", args: ["enabled"] },
  },
  abort_retry: { description: "Cancel a pending automatic retry.", client: { method: "abortRetry" } },

  // ---- bash --------------------------------------------------------------------------------
  bash: {
    description:
      "Run a shell command; its output joins the context of the next prompt. Output streams as bash_execution_update events carrying this command's id.",
    params: {
      command: Type.String({ description: "Shell command line to run." }),
      excludeFromContext: Type.Optional(Type.Boolean({ description: "true: keep the output in the session but never send it to the model." })),
    },
    data: BashResult,
    // Hand-written: it also streams the command's output to a callback.
    client: { method: "bash", handWritten: true },
  },
  abort_bash: { description: "Kill the running bash command.", client: { method: "abortBash" } },

  // ---- session -----------------------------------------------------------------------------
  get_session_stats: {
    description: "Get token, cost and context-window statistics.",
    data: SessionStats,
    client: { method: "getSessionStats" },
  },
  export_html: {
    description: "Export the session as an HTML file.",
    params: { outputPath: Type.Optional(Type.String({ description: "Where to write the file; a default path otherwise." })) },
    data: Type.Object({ path: Type.String({ description: "File written." }) }, { description: "Data of export_html." }),
    client: { method: "exportHtml", result: "path" },
  },
  switch_session: {
    description: "Load another session. An extension may cancel it (session_before_switch).",
    params: { sessionPath: Type.String({ description: "Session file to load." }) },
    data: CancelledData,
    client: { method: "switchSession", args: ["sessionPath"] },
  },
  fork: {
    description: "Start a new session branching at an earlier user message. An extension may cancel it.",
    params: { entryId: Type.String({ description: "Id of the user-message entry to fork from (see get_fork_messages)." }) },
    data: ForkData,
    client: { method: "fork", args: ["entryId"] },
  },
  clone: {
    description: "Copy the active branch into a new session. An extension may cancel it.",
    data: CancelledData,
    client: { method: "clone" },
  },
  get_fork_messages: {
    description: "List the user messages that fork can start from.",
    data: Type.Object({ messages: Type.Array(Type.Object({ entryId: Type.String(), text: Type.String() })) }, { description: "Data of get_fork_messages." }),
    client: { method: "getForkMessages", result: "messages" },
  },
  get_entries: {
    description: "Get session entries in append order, including compacted history and abandoned branches (the header excluded).",
    params: {
      since: Type.Optional(
        Type.String({
          description: "Entry id cursor: only entries appended after it are returned. Unknown ids fail the command.",
        }),
      ),
    },
    data: GetEntriesData,
    client: { method: "getEntries" },
  },
  get_tree: { description: "Get the session's entries as a tree, with labels.", data: GetTreeData, client: { method: "getTree" } },
  get_last_assistant_text: {
    description: "Get the text of the latest assistant message.",
    data: Type.Object(
      {
        text: Type.Optional(
          Type.Union([Type.String(), Type.Null()], {
            description: "Absent when there is no assistant text, as pi sends it (pi's docs say null, which is accepted too).",
          }),
        ),
      },
      { description: "Data of get_last_assistant_text." },
    ),
    // Hand-written: it resolves with the text or null, whichever way the agent says "none".
    client: { method: "getLastAssistantText", handWritten: true },
  },
  set_session_name: {
    description: "Name the current session.",
    params: { name: Type.String({ description: "Display name for the session." }) },
    client: { method: "setSessionName", args: ["name"] },
  },

  // ---- discoverable commands ---------------------------------------------------------------
  get_commands: {
    description: "List the extension commands, prompt templates and skills a prompt can invoke with `/name`.",
    data: Type.Object({ commands: Type.Array(SlashCommand) }, { description: "Data of get_commands." }),
    client: { method: "getCommands", result: "commands" },
  },

  // ---- parley's additions (pi answers "Unknown command"; see the client's detectCapabilities) ----
  get_ui_state: {
    description: "parley: everything a client that attaches late needs to draw the extension UI: the folded fire-and-forget UI and the dialogs waiting.",
    data: GetUiStateData,
    parley: true,
    client: { method: "getUiState" },
  },
  list_sessions: {
    description: "parley: list stored sessions, newest first.",
    params: {
      scope: Type.Optional(
        Type.Union([Type.Literal("folder"), Type.Literal("all")], {
          description: "folder (default): the sessions of the folder parley works in (its session directory); all: every project's.",
        }),
      ),
    },
    data: ListSessionsData,
    parley: true,
    client: { method: "listSessions", args: ["scope"] },
  },
  reload: {
    description:
      "parley: reload as ctx.reload() does: settings, skills, prompt templates and extensions read again (session_shutdown and session_start with reason reload).",
    parley: true,
    client: { method: "reload" },
  },
  refresh_models: {
    description: "parley: read models.json again (its providers registered anew, removed ones dropped) and answer the available models.",
    data: Type.Object({ models: Type.Array(Model) }, { description: "Data of refresh_models: the available models after the refresh." }),
    parley: true,
    client: { method: "refreshModels", result: "models" },
  },
  list_files: {
    description:
      "parley: files under the folder parley works in, relative to it (dot folders, node_modules and .gitignore'd paths left out), as pi's @ completion offers them.",
    params: {
      query: Type.Optional(Type.String({ description: "Keep paths containing these characters in order (case-insensitive); empty or absent: any." })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: "At most this many paths (default 50)." })),
    },
    data: ListFilesData,
    parley: true,
    client: { method: "listFiles", args: ["query", "limit"] },
  },
} satisfies Record<string, CommandDeclaration>;
