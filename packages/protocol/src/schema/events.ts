/**
 * Events: records the agent writes to stdout on its own (no command `id`, except that
 * bash_execution_update carries the id of the bash command it belongs to). Also the unions
 * of every record each side may write.
 */
import { Type, type Static } from "typebox";
import { AgentMessage, AssistantMessage, ToolCall, ToolResultMessage, Usage } from "./messages.js";
import { CompactionResult } from "./responses.js";
import { COMMAND_SCHEMAS, PARLEY_COMMAND_TYPES, RpcCommand, RpcResponse, SUCCESS_RESPONSE_SCHEMAS } from "./command-records.js";
import { ExtensionUiRequest, ExtensionUiResponse } from "./extension-ui.js";
import { ExtensionUiDismissed, ExtensionUiError } from "./additions.js";
import { unionOf } from "./union-of.js";

// ---- agent lifecycle -------------------------------------------------------------

export const AgentStartEvent = Type.Object({ type: Type.Literal("agent_start") }, { description: "The agent started working on a prompt." });
export type AgentStartEvent = Static<typeof AgentStartEvent>;

export const AgentEndEvent = Type.Object(
  {
    type: Type.Literal("agent_end"),
    messages: Type.Array(AgentMessage, { description: "Every message produced during this run." }),
    willRetry: Type.Optional(Type.Boolean({ description: "true when an automatic retry follows." })),
  },
  { description: "One run of the agent loop ended; retries, compaction or queued messages may still follow." },
);
export type AgentEndEvent = Static<typeof AgentEndEvent>;

export const AgentSettledEvent = Type.Object(
  {
    type: Type.Literal("agent_settled"),
    aborted: Type.Optional(Type.Boolean({ description: "The run ended because it was aborted (newest pi; parley always sends it)." })),
  },
  { description: "The agent is idle: no retry, compaction retry or queued continuation remains." },
);
export type AgentSettledEvent = Static<typeof AgentSettledEvent>;

// ---- turns -------------------------------------------------------------------------

export const TurnStartEvent = Type.Object({ type: Type.Literal("turn_start") }, { description: "A turn (one assistant response and its tool calls) began." });
export type TurnStartEvent = Static<typeof TurnStartEvent>;

export const TurnEndEvent = Type.Object(
  {
    type: Type.Literal("turn_end"),
    message: AgentMessage,
    toolResults: Type.Array(ToolResultMessage, { description: "Results of the turn's tool calls." }),
  },
  { description: "A turn finished." },
);
export type TurnEndEvent = Static<typeof TurnEndEvent>;

// ---- messages ----------------------------------------------------------------------

/**
 * The newest pi (pi-ai 1.6.0) marks an assistant message still being streamed with stopReason
 * "pending": message_start carries it so; message_end carries the real reason.
 */
export const StreamingAssistantMessage = Type.Object(
  { ...AssistantMessage.properties, stopReason: Type.Literal("pending", { description: "Still streaming (newest pi); message_end says why it ended." }) },
  { description: "An assistant message as its stream starts." },
);
export type StreamingAssistantMessage = Static<typeof StreamingAssistantMessage>;

export const MessageStartEvent = Type.Object(
  { type: Type.Literal("message_start"), message: Type.Union([AgentMessage, StreamingAssistantMessage]) },
  { description: 'A message began; for an assistant message, the (empty) start of the stream, stopReason "pending".' },
);
export type MessageStartEvent = Static<typeof MessageStartEvent>;

export const MessageEndEvent = Type.Object(
  { type: Type.Literal("message_end"), message: AgentMessage },
  { description: "A message is complete; this copy is authoritative." },
);
export type MessageEndEvent = Static<typeof MessageEndEvent>;

const NoPartial = Type.Optional(Type.Never({ description: "Never sent: deltas carry no cumulative snapshot, so the stream stays linear." }));
const ContentIndex = Type.Number({ description: "Index of the content block in the assistant message." });

export const StartDelta = Type.Object({ type: Type.Literal("start"), partial: NoPartial }, { description: "Generation started." });
export const TextStartDelta = Type.Object(
  { type: Type.Literal("text_start"), contentIndex: ContentIndex, partial: NoPartial },
  { description: "A text block started." },
);
export const TextDeltaDelta = Type.Object(
  { type: Type.Literal("text_delta"), contentIndex: ContentIndex, delta: Type.String(), partial: NoPartial },
  { description: "More text for a text block." },
);
export const TextEndDelta = Type.Object(
  {
    type: Type.Literal("text_end"),
    contentIndex: ContentIndex,
    content: Type.String({ description: "The block's full text." }),
    partial: NoPartial,
  },
  { description: "A text block ended." },
);
export const ThinkingStartDelta = Type.Object(
  { type: Type.Literal("thinking_start"), contentIndex: ContentIndex, partial: NoPartial },
  { description: "A thinking block started." },
);
export const ThinkingDeltaDelta = Type.Object(
  { type: Type.Literal("thinking_delta"), contentIndex: ContentIndex, delta: Type.String(), partial: NoPartial },
  { description: "More text for a thinking block." },
);
export const ThinkingEndDelta = Type.Object(
  {
    type: Type.Literal("thinking_end"),
    contentIndex: ContentIndex,
    content: Type.String({ description: "The block's full text." }),
    partial: NoPartial,
  },
  { description: "A thinking block ended." },
);
export const ToolCallStartDelta = Type.Object(
  {
    type: Type.Literal("toolcall_start"),
    contentIndex: ContentIndex,
    id: Type.String({ description: "The tool call's id." }),
    toolName: Type.String({ description: "The tool being called." }),
    partial: NoPartial,
  },
  { description: "A tool call started." },
);
export const ToolCallDeltaDelta = Type.Object(
  {
    type: Type.Literal("toolcall_delta"),
    contentIndex: ContentIndex,
    delta: Type.String({ description: "A chunk of the JSON arguments text." }),
    partial: NoPartial,
  },
  { description: "More argument text for a tool call." },
);
export const ToolCallEndDelta = Type.Object(
  { type: Type.Literal("toolcall_end"), contentIndex: ContentIndex, toolCall: ToolCall, partial: NoPartial },
  { description: "A tool call is complete." },
);
export const DoneDelta = Type.Object(
  {
    type: Type.Literal("done"),
    reason: Type.Union([Type.Literal("stop"), Type.Literal("length"), Type.Literal("toolUse"), Type.Literal("deferred")]),
    message: AssistantMessage,
  },
  { description: "Generation finished normally." },
);
export const ErrorDelta = Type.Object(
  {
    type: Type.Literal("error"),
    reason: Type.Union([Type.Literal("aborted"), Type.Literal("error")]),
    error: AssistantMessage,
  },
  { description: "Generation failed or was aborted." },
);

export const AssistantMessageDelta = Type.Union(
  [
    StartDelta,
    TextStartDelta,
    TextDeltaDelta,
    TextEndDelta,
    ThinkingStartDelta,
    ThinkingDeltaDelta,
    ThinkingEndDelta,
    ToolCallStartDelta,
    ToolCallDeltaDelta,
    ToolCallEndDelta,
    DoneDelta,
    ErrorDelta,
  ],
  { description: "One streaming step of an assistant message, without a partial snapshot." },
);
export type AssistantMessageDelta = Static<typeof AssistantMessageDelta>;

export const MessageUpdateEvent = Type.Object(
  {
    type: Type.Literal("message_update"),
    message: Type.Optional(Type.Never({ description: "Never sent: rebuild the message from message_start and the deltas." })),
    usage: Usage,
    assistantMessageEvent: AssistantMessageDelta,
  },
  {
    description:
      "Streaming progress of an assistant message, delta only. `usage` is the latest cumulative usage (it may stay zero until the provider reports it).",
  },
);
export type MessageUpdateEvent = Static<typeof MessageUpdateEvent>;

// ---- tools -------------------------------------------------------------------------

const ParentToolCallId = Type.String({
  description:
    "Set when another tool made this call through ctx.executeTool (newest pi): the calling tool's call id. Such calls have the id `<calling id>/<n>` and never appear in the transcript.",
});

export const ToolExecutionStartEvent = Type.Object(
  {
    type: Type.Literal("tool_execution_start"),
    toolCallId: Type.String(),
    toolName: Type.String(),
    args: Type.Unknown({ description: "The call's arguments." }),
    parentToolCallId: Type.Optional(ParentToolCallId),
  },
  { description: "A tool began running." },
);
export type ToolExecutionStartEvent = Static<typeof ToolExecutionStartEvent>;

export const ToolExecutionUpdateEvent = Type.Object(
  {
    type: Type.Literal("tool_execution_update"),
    toolCallId: Type.String(),
    toolName: Type.String(),
    args: Type.Unknown(),
    partialResult: Type.Unknown({ description: "Everything so far (not a delta): replace what you show." }),
    parentToolCallId: Type.Optional(ParentToolCallId),
  },
  { description: "Progress of a running tool." },
);
export type ToolExecutionUpdateEvent = Static<typeof ToolExecutionUpdateEvent>;

export const ToolExecutionEndEvent = Type.Object(
  {
    type: Type.Literal("tool_execution_end"),
    toolCallId: Type.String(),
    toolName: Type.String(),
    result: Type.Unknown({ description: "Usually {content, details}." }),
    isError: Type.Boolean(),
    durationMs: Type.Optional(Type.Number({ description: "How long the tool ran, in ms (newest pi); absent when it did not run." })),
    parentToolCallId: Type.Optional(ParentToolCallId),
  },
  { description: "A tool finished." },
);
export type ToolExecutionEndEvent = Static<typeof ToolExecutionEndEvent>;

export const BashExecutionUpdateEvent = Type.Object(
  {
    type: Type.Literal("bash_execution_update"),
    id: Type.Optional(Type.Union([Type.String(), Type.Number()], { description: "The id of the bash command, when it had one." })),
    delta: Type.String({ description: "The next chunk of output (all output streams, even when the result is truncated)." }),
  },
  { description: "Output of a running `bash` command." },
);
export type BashExecutionUpdateEvent = Static<typeof BashExecutionUpdateEvent>;

// ---- queue, compaction, retry ------------------------------------------------------------

export const QueueUpdateEvent = Type.Object(
  {
    type: Type.Literal("queue_update"),
    steering: Type.Array(Type.String(), { description: "All pending steering messages." }),
    followUp: Type.Array(Type.String(), { description: "All pending follow-up messages." }),
  },
  { description: "The pending queues changed." },
);
export type QueueUpdateEvent = Static<typeof QueueUpdateEvent>;

export const CompactionReason = Type.Union([Type.Literal("manual"), Type.Literal("threshold"), Type.Literal("overflow")], {
  description: "manual: the compact command; threshold: context nearly full; overflow: the model refused the size.",
});
export type CompactionReason = Static<typeof CompactionReason>;

export const CompactionStartEvent = Type.Object({ type: Type.Literal("compaction_start"), reason: CompactionReason }, { description: "Compaction began." });
export type CompactionStartEvent = Static<typeof CompactionStartEvent>;

export const CompactionEndEvent = Type.Object(
  {
    type: Type.Literal("compaction_end"),
    reason: CompactionReason,
    result: Type.Optional(Type.Union([CompactionResult, Type.Null()], { description: "null (or absent) when aborted or failed." })),
    aborted: Type.Boolean(),
    willRetry: Type.Boolean({ description: "true when the overflowing prompt is retried automatically." }),
    errorMessage: Type.Optional(Type.String({ description: "Why compaction failed." })),
  },
  { description: "Compaction ended." },
);
export type CompactionEndEvent = Static<typeof CompactionEndEvent>;

export const AutoRetryStartEvent = Type.Object(
  {
    type: Type.Literal("auto_retry_start"),
    attempt: Type.Number({ description: "1-based attempt number." }),
    maxAttempts: Type.Number(),
    delayMs: Type.Number({ description: "Wait before the attempt." }),
    errorMessage: Type.String({ description: "The transient error being retried." }),
  },
  { description: "An automatic retry was scheduled." },
);
export type AutoRetryStartEvent = Static<typeof AutoRetryStartEvent>;

export const AutoRetryEndEvent = Type.Object(
  {
    type: Type.Literal("auto_retry_end"),
    success: Type.Boolean(),
    attempt: Type.Number(),
    finalError: Type.Optional(Type.String({ description: "The last error, when retries ran out." })),
  },
  { description: "Automatic retrying ended." },
);
export type AutoRetryEndEvent = Static<typeof AutoRetryEndEvent>;

export const ExtensionErrorEvent = Type.Object(
  {
    type: Type.Literal("extension_error"),
    extensionPath: Type.String({ description: "The extension that threw." }),
    event: Type.String({ description: "The event being handled when it threw." }),
    error: Type.String({ description: "The error message." }),
  },
  { description: "An extension threw." },
);
export type ExtensionErrorEvent = Static<typeof ExtensionErrorEvent>;

// ---- further events pi writes -----------------------------------------------------

export const SessionInfoChangedEvent = Type.Object(
  {
    type: Type.Literal("session_info_changed"),
    name: Type.Optional(Type.String({ description: "The session's display name; absent when cleared." })),
  },
  { description: "The session's metadata changed (pi 0.73 writes every session event)." },
);
export type SessionInfoChangedEvent = Static<typeof SessionInfoChangedEvent>;

export const EntryAppendedEvent = Type.Object(
  {
    type: Type.Literal("entry_appended"),
    entry: Type.Object(
      {
        type: Type.String({ description: 'The entry\'s kind ("custom" for pi.appendEntry; also "custom_message" or "compaction" for a boundary draft).' }),
        id: Type.String(),
        parentId: Type.Union([Type.String(), Type.Null()]),
        timestamp: Type.String(),
      },
      { additionalProperties: true, description: "The session entry as saved (for pi.appendEntry: customType and data)." },
    ),
  },
  {
    description:
      "An extension appended an entry to the session (pi.appendEntry, or an entry a turn_end or agent_before_settle handler proposed), as the newest pi reports it.",
  },
);
export type EntryAppendedEvent = Static<typeof EntryAppendedEvent>;

export const ThinkingLevelChangedEvent = Type.Object(
  {
    type: Type.Literal("thinking_level_changed"),
    level: Type.String({ description: "The new thinking level." }),
  },
  { description: "The thinking level changed (pi 0.73 writes every session event)." },
);
export type ThinkingLevelChangedEvent = Static<typeof ThinkingLevelChangedEvent>;

export const SummarizationRetryScheduledEvent = Type.Object(
  {
    type: Type.Literal("summarization_retry_scheduled"),
    attempt: Type.Number(),
    maxAttempts: Type.Number(),
    delayMs: Type.Number(),
    errorMessage: Type.String(),
  },
  { description: "A compaction or branch summary will be retried after a transient error (newer pi)." },
);
export type SummarizationRetryScheduledEvent = Static<typeof SummarizationRetryScheduledEvent>;

export const SummarizationRetryAttemptStartEvent = Type.Object(
  {
    type: Type.Literal("summarization_retry_attempt_start"),
    source: Type.Union([Type.Literal("compaction"), Type.Literal("branchSummary")]),
    reason: Type.Optional(CompactionReason),
  },
  { description: "A retried summarization request started (newer pi)." },
);
export type SummarizationRetryAttemptStartEvent = Static<typeof SummarizationRetryAttemptStartEvent>;

export const SummarizationRetryFinishedEvent = Type.Object(
  { type: Type.Literal("summarization_retry_finished") },
  { description: "The summarization retry loop ended (newer pi)." },
);
export type SummarizationRetryFinishedEvent = Static<typeof SummarizationRetryFinishedEvent>;

// ---- unions ----------------------------------------------------------------------

/** Every event schema, keyed by its `type`. */
export const EVENT_SCHEMAS = {
  agent_start: AgentStartEvent,
  agent_end: AgentEndEvent,
  agent_settled: AgentSettledEvent,
  turn_start: TurnStartEvent,
  turn_end: TurnEndEvent,
  message_start: MessageStartEvent,
  message_update: MessageUpdateEvent,
  message_end: MessageEndEvent,
  tool_execution_start: ToolExecutionStartEvent,
  tool_execution_update: ToolExecutionUpdateEvent,
  tool_execution_end: ToolExecutionEndEvent,
  bash_execution_update: BashExecutionUpdateEvent,
  queue_update: QueueUpdateEvent,
  compaction_start: CompactionStartEvent,
  compaction_end: CompactionEndEvent,
  auto_retry_start: AutoRetryStartEvent,
  auto_retry_end: AutoRetryEndEvent,
  extension_error: ExtensionErrorEvent,
  session_info_changed: SessionInfoChangedEvent,
  entry_appended: EntryAppendedEvent,
  thinking_level_changed: ThinkingLevelChangedEvent,
  summarization_retry_scheduled: SummarizationRetryScheduledEvent,
  summarization_retry_attempt_start: SummarizationRetryAttemptStartEvent,
  summarization_retry_finished: SummarizationRetryFinishedEvent,
} as const;

export const RpcEvent = Type.Union(
  [
    AgentStartEvent,
    AgentEndEvent,
    AgentSettledEvent,
    TurnStartEvent,
    TurnEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    MessageEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    ToolExecutionEndEvent,
    BashExecutionUpdateEvent,
    QueueUpdateEvent,
    CompactionStartEvent,
    CompactionEndEvent,
    AutoRetryStartEvent,
    AutoRetryEndEvent,
    ExtensionErrorEvent,
    SessionInfoChangedEvent,
    EntryAppendedEvent,
    ThinkingLevelChangedEvent,
    SummarizationRetryScheduledEvent,
    SummarizationRetryAttemptStartEvent,
    SummarizationRetryFinishedEvent,
  ],
  { description: "Any event the agent writes." },
);
export type RpcEvent = Static<typeof RpcEvent>;
export type EventType = RpcEvent["type"];

/** The records parley adds to pi's protocol: two records of its own, and each command it adds with its response. */
export const ParleyAdditionRecord = unionOf(
  [ExtensionUiDismissed, ExtensionUiError, ...PARLEY_COMMAND_TYPES.flatMap((type) => [COMMAND_SCHEMAS[type], SUCCESS_RESPONSE_SCHEMAS[type]])],
  `Records parley adds: extension_ui_dismissed and extension_ui_error (agent → client); the ${listed(PARLEY_COMMAND_TYPES)} commands and their responses.`,
);
export type ParleyAdditionRecord = Static<typeof ParleyAdditionRecord>;

/** Everything the agent may write to stdout. */
export const OutboundRecord = Type.Union([RpcResponse, RpcEvent, ExtensionUiRequest, ExtensionUiDismissed, ExtensionUiError], {
  description: "Any record the agent writes: a response, an event, an extension UI request or a parley addition.",
});
export type OutboundRecord = Static<typeof OutboundRecord>;

/** Everything a client may write to stdin. */
export const InboundRecord = Type.Union([RpcCommand, ExtensionUiResponse], {
  description: "Any record a client writes: a command or an answer to an extension UI dialog.",
});
export type InboundRecord = Static<typeof InboundRecord>;

/** "a, b and c". */
function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
type _EventKeysMatch = Assert<Equal<keyof typeof EVENT_SCHEMAS, EventType>>;
