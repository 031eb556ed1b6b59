/**
 * Commands: the records a client writes to the agent's stdin, one per line. Each has a
 * `type` naming the command and an optional `id` that the single response echoes.
 *
 * Unknown extra fields are accepted (a newer client may send fields an older agent does
 * not know); only the fields listed here are checked.
 */
import { Type, type Static, type TSchema } from "typebox";
import { ImageContent } from "./messages.js";
import { GetUiStateCommand, ListFilesCommand, ListSessionsCommand, RefreshModelsCommand, ReloadCommand } from "./additions.js";

export const CommandId = Type.Optional(
  Type.Union([Type.String(), Type.Number()], {
    description: "Correlation id; the response to this command carries the same value.",
  }),
);

export const ThinkingLevel = Type.Union(
  [Type.Literal("off"), Type.Literal("minimal"), Type.Literal("low"), Type.Literal("medium"), Type.Literal("high"), Type.Literal("xhigh"), Type.Literal("max")],
  { description: "Reasoning effort. Models without reasoning support only off; xhigh and max only on some models." },
);
export type ThinkingLevel = Static<typeof ThinkingLevel>;
export { THINKING_LEVELS } from "../constants.js";

export const QueueMode = Type.Union([Type.Literal("all"), Type.Literal("one-at-a-time")], {
  description: "all: deliver every queued message at the next opportunity; one-at-a-time: one per opportunity.",
});
export type QueueMode = Static<typeof QueueMode>;

export const StreamingBehavior = Type.Union([Type.Literal("steer"), Type.Literal("followUp")], {
  description: "Required while the agent is streaming. steer: deliver after the current turn's tool calls; followUp: deliver when the agent stops.",
});
export type StreamingBehavior = Static<typeof StreamingBehavior>;

const Images = Type.Optional(Type.Array(ImageContent, { description: "Images attached to the message." }));

// ---- prompting -----------------------------------------------------------------

export const PromptCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("prompt"),
    message: Type.String({
      description: "The user's text. `/name` runs an extension command, prompt template or skill.",
    }),
    images: Images,
    streamingBehavior: Type.Optional(StreamingBehavior),
  },
  { description: "Send a user prompt. The response means accepted, queued or handled; events follow." },
);
export type PromptCommand = Static<typeof PromptCommand>;

export const SteerCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("steer"),
    message: Type.String({ description: "Text delivered after the current turn's tool calls." }),
    images: Images,
  },
  { description: "Queue a steering message while the agent runs. Extension commands are refused." },
);
export type SteerCommand = Static<typeof SteerCommand>;

export const FollowUpCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("follow_up"),
    message: Type.String({ description: "Text delivered once the agent has nothing left to do." }),
    images: Images,
  },
  { description: "Queue a follow-up message for when the agent finishes. Extension commands are refused." },
);
export type FollowUpCommand = Static<typeof FollowUpCommand>;

export const AbortCommand = Type.Object({ id: CommandId, type: Type.Literal("abort") }, { description: "Abort the current operation." });
export type AbortCommand = Static<typeof AbortCommand>;

export const ClearQueueCommand = Type.Object(
  { id: CommandId, type: Type.Literal("clear_queue") },
  { description: "Drop queued steering and follow-up messages; the response returns their text." },
);
export type ClearQueueCommand = Static<typeof ClearQueueCommand>;

export const NewSessionCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("new_session"),
    parentSession: Type.Optional(Type.String({ description: "Session file recorded as the new session's parent." })),
  },
  { description: "Start a fresh session. An extension may cancel it (session_before_switch)." },
);
export type NewSessionCommand = Static<typeof NewSessionCommand>;

// ---- state ---------------------------------------------------------------------

export const GetStateCommand = Type.Object({ id: CommandId, type: Type.Literal("get_state") }, { description: "Get the current session state." });
export type GetStateCommand = Static<typeof GetStateCommand>;

export const GetMessagesCommand = Type.Object(
  { id: CommandId, type: Type.Literal("get_messages") },
  { description: "Get every message of the active conversation context." },
);
export type GetMessagesCommand = Static<typeof GetMessagesCommand>;

// ---- model ---------------------------------------------------------------------

export const SetModelCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("set_model"),
    provider: Type.String({ description: 'Provider name, e.g. "anthropic".' }),
    modelId: Type.String({ description: "Model id within that provider." }),
  },
  { description: "Switch to a specific model." },
);
export type SetModelCommand = Static<typeof SetModelCommand>;

export const CycleModelCommand = Type.Object({ id: CommandId, type: Type.Literal("cycle_model") }, { description: "Switch to the next available model." });
export type CycleModelCommand = Static<typeof CycleModelCommand>;

export const GetAvailableModelsCommand = Type.Object(
  { id: CommandId, type: Type.Literal("get_available_models") },
  { description: "List every configured model." },
);
export type GetAvailableModelsCommand = Static<typeof GetAvailableModelsCommand>;

// ---- thinking ------------------------------------------------------------------

/** What a client may ask for: the newest pi's levels include "max", the model's highest. */
export const RequestedThinkingLevel = Type.Union([...ThinkingLevel.anyOf], {
  description: "A thinking level to set, clamped to the model's levels.",
});
export type RequestedThinkingLevel = Static<typeof RequestedThinkingLevel>;

export const SetThinkingLevelCommand = Type.Object(
  { id: CommandId, type: Type.Literal("set_thinking_level"), level: RequestedThinkingLevel },
  { description: "Set the reasoning level." },
);
export type SetThinkingLevelCommand = Static<typeof SetThinkingLevelCommand>;

export const CycleThinkingLevelCommand = Type.Object(
  { id: CommandId, type: Type.Literal("cycle_thinking_level") },
  { description: "Move to the next thinking level the model supports." },
);
export type CycleThinkingLevelCommand = Static<typeof CycleThinkingLevelCommand>;

export const GetAvailableThinkingLevelsCommand = Type.Object(
  { id: CommandId, type: Type.Literal("get_available_thinking_levels") },
  { description: "List the thinking levels the current model supports." },
);
export type GetAvailableThinkingLevelsCommand = Static<typeof GetAvailableThinkingLevelsCommand>;

// ---- queue modes ---------------------------------------------------------------

export const SetSteeringModeCommand = Type.Object(
  { id: CommandId, type: Type.Literal("set_steering_mode"), mode: QueueMode },
  { description: "Choose how queued steering messages are delivered (default one-at-a-time)." },
);
export type SetSteeringModeCommand = Static<typeof SetSteeringModeCommand>;

export const SetFollowUpModeCommand = Type.Object(
  { id: CommandId, type: Type.Literal("set_follow_up_mode"), mode: QueueMode },
  { description: "Choose how queued follow-up messages are delivered (default one-at-a-time)." },
);
export type SetFollowUpModeCommand = Static<typeof SetFollowUpModeCommand>;

// ---- compaction ----------------------------------------------------------------

export const CompactCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("compact"),
    customInstructions: Type.Optional(Type.String({ description: "Extra guidance for the summary." })),
  },
  { description: "Summarise older context now to free tokens." },
);
export type CompactCommand = Static<typeof CompactCommand>;

export const SetAutoCompactionCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("set_auto_compaction"),
    enabled: Type.Boolean({ description: "true: compact automatically when the context is nearly full." }),
  },
  { description: "Turn automatic compaction on or off." },
);
export type SetAutoCompactionCommand = Static<typeof SetAutoCompactionCommand>;

// ---- retry ---------------------------------------------------------------------

export const SetAutoRetryCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("set_auto_retry"),
    enabled: Type.Boolean({ description: "true: retry transient provider errors (overload, rate limit, 5xx)." }),
  },
  { description: "Turn automatic retry on or off." },
);
export type SetAutoRetryCommand = Static<typeof SetAutoRetryCommand>;

export const AbortRetryCommand = Type.Object({ id: CommandId, type: Type.Literal("abort_retry") }, { description: "Cancel a pending automatic retry." });
export type AbortRetryCommand = Static<typeof AbortRetryCommand>;

// ---- bash ----------------------------------------------------------------------

export const BashCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("bash"),
    command: Type.String({ description: "Shell command line to run." }),
    excludeFromContext: Type.Optional(Type.Boolean({ description: "true: keep the output in the session but never send it to the model." })),
  },
  {
    description:
      "Run a shell command; its output joins the context of the next prompt. Output streams as bash_execution_update events carrying this command's id.",
  },
);
export type BashCommand = Static<typeof BashCommand>;

export const AbortBashCommand = Type.Object({ id: CommandId, type: Type.Literal("abort_bash") }, { description: "Kill the running bash command." });
export type AbortBashCommand = Static<typeof AbortBashCommand>;

// ---- session -------------------------------------------------------------------

export const GetSessionStatsCommand = Type.Object(
  { id: CommandId, type: Type.Literal("get_session_stats") },
  { description: "Get token, cost and context-window statistics." },
);
export type GetSessionStatsCommand = Static<typeof GetSessionStatsCommand>;

export const ExportHtmlCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("export_html"),
    outputPath: Type.Optional(Type.String({ description: "Where to write the file; a default path otherwise." })),
  },
  { description: "Export the session as an HTML file." },
);
export type ExportHtmlCommand = Static<typeof ExportHtmlCommand>;

export const SwitchSessionCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("switch_session"),
    sessionPath: Type.String({ description: "Session file to load." }),
  },
  { description: "Load another session. An extension may cancel it (session_before_switch)." },
);
export type SwitchSessionCommand = Static<typeof SwitchSessionCommand>;

export const ForkCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("fork"),
    entryId: Type.String({ description: "Id of the user-message entry to fork from (see get_fork_messages)." }),
  },
  { description: "Start a new session branching at an earlier user message. An extension may cancel it." },
);
export type ForkCommand = Static<typeof ForkCommand>;

export const CloneCommand = Type.Object(
  { id: CommandId, type: Type.Literal("clone") },
  { description: "Copy the active branch into a new session. An extension may cancel it." },
);
export type CloneCommand = Static<typeof CloneCommand>;

export const GetForkMessagesCommand = Type.Object(
  { id: CommandId, type: Type.Literal("get_fork_messages") },
  { description: "List the user messages that fork can start from." },
);
export type GetForkMessagesCommand = Static<typeof GetForkMessagesCommand>;

export const GetEntriesCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("get_entries"),
    since: Type.Optional(
      Type.String({
        description: "Entry id cursor: only entries appended after it are returned. Unknown ids fail the command.",
      }),
    ),
  },
  {
    description: "Get session entries in append order, including compacted history and abandoned branches (the header excluded).",
  },
);
export type GetEntriesCommand = Static<typeof GetEntriesCommand>;

export const GetTreeCommand = Type.Object(
  { id: CommandId, type: Type.Literal("get_tree") },
  { description: "Get the session's entries as a tree, with labels." },
);
export type GetTreeCommand = Static<typeof GetTreeCommand>;

export const GetLastAssistantTextCommand = Type.Object(
  { id: CommandId, type: Type.Literal("get_last_assistant_text") },
  { description: "Get the text of the latest assistant message." },
);
export type GetLastAssistantTextCommand = Static<typeof GetLastAssistantTextCommand>;

export const SetSessionNameCommand = Type.Object(
  {
    id: CommandId,
    type: Type.Literal("set_session_name"),
    name: Type.String({ description: "Display name for the session." }),
  },
  { description: "Name the current session." },
);
export type SetSessionNameCommand = Static<typeof SetSessionNameCommand>;

// ---- discoverable commands -------------------------------------------------------

export const GetCommandsCommand = Type.Object(
  { id: CommandId, type: Type.Literal("get_commands") },
  { description: "List the extension commands, prompt templates and skills a prompt can invoke with `/name`." },
);
export type GetCommandsCommand = Static<typeof GetCommandsCommand>;

// ---- all commands ----------------------------------------------------------------

/** Every command schema, keyed by its `type`. */
export const COMMAND_SCHEMAS = {
  prompt: PromptCommand,
  steer: SteerCommand,
  follow_up: FollowUpCommand,
  abort: AbortCommand,
  clear_queue: ClearQueueCommand,
  new_session: NewSessionCommand,
  get_state: GetStateCommand,
  get_messages: GetMessagesCommand,
  set_model: SetModelCommand,
  cycle_model: CycleModelCommand,
  get_available_models: GetAvailableModelsCommand,
  set_thinking_level: SetThinkingLevelCommand,
  cycle_thinking_level: CycleThinkingLevelCommand,
  get_available_thinking_levels: GetAvailableThinkingLevelsCommand,
  set_steering_mode: SetSteeringModeCommand,
  set_follow_up_mode: SetFollowUpModeCommand,
  compact: CompactCommand,
  set_auto_compaction: SetAutoCompactionCommand,
  set_auto_retry: SetAutoRetryCommand,
  abort_retry: AbortRetryCommand,
  bash: BashCommand,
  abort_bash: AbortBashCommand,
  get_session_stats: GetSessionStatsCommand,
  export_html: ExportHtmlCommand,
  switch_session: SwitchSessionCommand,
  fork: ForkCommand,
  clone: CloneCommand,
  get_fork_messages: GetForkMessagesCommand,
  get_entries: GetEntriesCommand,
  get_tree: GetTreeCommand,
  get_last_assistant_text: GetLastAssistantTextCommand,
  set_session_name: SetSessionNameCommand,
  get_commands: GetCommandsCommand,
  get_ui_state: GetUiStateCommand,
  list_sessions: ListSessionsCommand,
  reload: ReloadCommand,
  refresh_models: RefreshModelsCommand,
  list_files: ListFilesCommand,
} as const satisfies Record<string, TSchema>;

export const RpcCommand = Type.Union(
  [
    PromptCommand,
    SteerCommand,
    FollowUpCommand,
    AbortCommand,
    ClearQueueCommand,
    NewSessionCommand,
    GetStateCommand,
    GetMessagesCommand,
    SetModelCommand,
    CycleModelCommand,
    GetAvailableModelsCommand,
    SetThinkingLevelCommand,
    CycleThinkingLevelCommand,
    GetAvailableThinkingLevelsCommand,
    SetSteeringModeCommand,
    SetFollowUpModeCommand,
    CompactCommand,
    SetAutoCompactionCommand,
    SetAutoRetryCommand,
    AbortRetryCommand,
    BashCommand,
    AbortBashCommand,
    GetSessionStatsCommand,
    ExportHtmlCommand,
    SwitchSessionCommand,
    ForkCommand,
    CloneCommand,
    GetForkMessagesCommand,
    GetEntriesCommand,
    GetTreeCommand,
    GetLastAssistantTextCommand,
    SetSessionNameCommand,
    GetCommandsCommand,
    GetUiStateCommand,
    ListSessionsCommand,
    ReloadCommand,
    RefreshModelsCommand,
    ListFilesCommand,
  ],
  { description: "Any command a client may send." },
);
export type RpcCommand = Static<typeof RpcCommand>;
export type CommandType = RpcCommand["type"];

/** The command whose `type` is `K`. */
export type CommandOf<K extends CommandType> = Extract<RpcCommand, { type: K }>;

/** Every command type, in the order of COMMAND_SCHEMAS. */
export const COMMAND_TYPES = Object.keys(COMMAND_SCHEMAS) as CommandType[];

// Compile-time guards: the record's keys are exactly the union's types, and each key maps
// to the schema of the command with that type.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
type SchemaKeys = keyof typeof COMMAND_SCHEMAS;
type _CommandSchemaKeysMatch = Assert<Equal<SchemaKeys, CommandType>>;
type _CommandSchemaTypesMatch = Assert<Equal<{ [K in SchemaKeys]: Static<(typeof COMMAND_SCHEMAS)[K]>["type"] }, { [K in SchemaKeys]: K }>>;
