/**
 * Responses: exactly one per command, `{type: "response", command, success, ...}`, echoing the
 * command's `id` when it had one. A success may carry `data`; a failure carries `error`. The
 * per-command responses are derived from the command table (`command-records.ts`).
 *
 * Also the shapes those `data` fields use: session state and statistics, bash results,
 * compaction results, discoverable slash commands, session entries and the entry tree.
 */
import { Type, type Static } from "typebox";
import { AgentMessage, AssistantContentBlock, Model, SystemMessage, Usage, UserContentBlock } from "./messages.js";
import { ThinkingLevel, QueueMode } from "./commands.js";

const ResponseId = Type.Optional(Type.Union([Type.String(), Type.Number()], { description: "The id of the command answered, when it had one." }));

// ---- envelope --------------------------------------------------------------------

export const SuccessResponse = Type.Object(
  {
    type: Type.Literal("response"),
    id: ResponseId,
    command: Type.String({ description: "The type of the command answered." }),
    success: Type.Literal(true),
    data: Type.Optional(Type.Unknown({ description: "Command-specific result; absent for many commands." })),
  },
  { description: "The command succeeded." },
);
export type SuccessResponse = Static<typeof SuccessResponse>;

export const ErrorResponse = Type.Object(
  {
    type: Type.Literal("response"),
    id: ResponseId,
    command: Type.String({
      description: 'The type of the command answered; "parse" when the line was not a usable command.',
    }),
    success: Type.Literal(false),
    error: Type.String({ description: "What went wrong, for humans." }),
  },
  { description: "The command failed or was refused." },
);
export type ErrorResponse = Static<typeof ErrorResponse>;

/** Any response, without tying `data` to the command. */
export const ResponseEnvelope = Type.Union([SuccessResponse, ErrorResponse]);
export type ResponseEnvelope = Static<typeof ResponseEnvelope>;

// ---- data shapes -------------------------------------------------------------------

export const CancelledData = Type.Object(
  { cancelled: Type.Boolean({ description: "true when an extension vetoed the operation." }) },
  { description: "Result of an operation an extension may cancel." },
);
export type CancelledData = Static<typeof CancelledData>;

export const SessionState = Type.Object(
  {
    model: Type.Optional(Type.Union([Model, Type.Null()], { description: "Selected model; absent (older pi: null) when none." })),
    thinkingLevel: ThinkingLevel,
    isStreaming: Type.Boolean({ description: "true while the agent is running." }),
    isCompacting: Type.Boolean(),
    steeringMode: QueueMode,
    followUpMode: QueueMode,
    sessionFile: Type.Optional(Type.String({ description: "Absent when the session is not persisted." })),
    sessionId: Type.String(),
    sessionName: Type.Optional(Type.String({ description: "Absent until a name is set." })),
    autoCompactionEnabled: Type.Boolean(),
    messageCount: Type.Number(),
    pendingMessageCount: Type.Number({ description: "Queued steering and follow-up messages." }),
    offlineModel: Type.Optional(
      Type.Literal(true, { description: "parley: the built-in offline demo model is answering (no provider or API key configured)." }),
    ),
  },
  { description: "Data of get_state." },
);
export type SessionState = Static<typeof SessionState>;

export const CycleModelData = Type.Union(
  [
    Type.Object({
      model: Model,
      thinkingLevel: ThinkingLevel,
      isScoped: Type.Boolean({ description: "true when cycling within the --models scope." }),
    }),
    Type.Null(),
  ],
  { description: "Data of cycle_model; null when only one model is available." },
);
export type CycleModelData = Static<typeof CycleModelData>;

export const CycleThinkingLevelData = Type.Union([Type.Object({ level: ThinkingLevel }), Type.Null()], {
  description: "Data of cycle_thinking_level; null when the model has no reasoning support.",
});
export type CycleThinkingLevelData = Static<typeof CycleThinkingLevelData>;

export const CompactionResult = Type.Object(
  {
    summary: Type.String(),
    firstKeptEntryId: Type.String({ description: "First entry kept verbatim after the summary." }),
    tokensBefore: Type.Number({ description: "Context size before compaction." }),
    estimatedTokensAfter: Type.Optional(Type.Number({ description: "Heuristic context size afterwards." })),
    usage: Type.Optional(Usage),
    details: Type.Optional(Type.Unknown({ description: "Implementation- or extension-specific data." })),
  },
  { description: "Outcome of a compaction." },
);
export type CompactionResult = Static<typeof CompactionResult>;

export const BashResult = Type.Object(
  {
    output: Type.String({ description: "Combined stdout and stderr, possibly truncated." }),
    exitCode: Type.Optional(Type.Number({ description: "Absent when the process was killed or cancelled." })),
    cancelled: Type.Boolean(),
    truncated: Type.Boolean(),
    fullOutputPath: Type.Optional(Type.String({ description: "File with the full output, when truncated." })),
  },
  { description: "Data of bash." },
);
export type BashResult = Static<typeof BashResult>;

export const ContextUsage = Type.Object(
  {
    tokens: Type.Union([Type.Number(), Type.Null()], { description: "null right after compaction, until known." }),
    contextWindow: Type.Number(),
    percent: Type.Union([Type.Number(), Type.Null()], { description: "null when tokens is null." }),
  },
  { description: "Current context-window estimate." },
);
export type ContextUsage = Static<typeof ContextUsage>;

export const SessionStats = Type.Object(
  {
    sessionFile: Type.Optional(Type.String()),
    sessionId: Type.String(),
    userMessages: Type.Number(),
    assistantMessages: Type.Number(),
    toolCalls: Type.Number(),
    toolResults: Type.Number(),
    totalMessages: Type.Number(),
    tokens: Type.Object({
      input: Type.Number(),
      output: Type.Number(),
      cacheRead: Type.Number(),
      cacheWrite: Type.Number(),
      total: Type.Number(),
    }),
    cost: Type.Number({ description: "US dollars." }),
    contextUsage: Type.Optional(ContextUsage),
  },
  { description: "Data of get_session_stats." },
);
export type SessionStats = Static<typeof SessionStats>;

export const ForkData = Type.Object(
  {
    text: Type.Optional(Type.String({ description: "Text of the message forked from (newer pi omits it when cancelled)." })),
    cancelled: Type.Boolean(),
  },
  { description: "Data of fork." },
);
export type ForkData = Static<typeof ForkData>;

export const QueuedInputDisposition = Type.Union([Type.Literal("handled"), Type.Literal("queued")], {
  description: '"handled": an extension\'s input handler consumed it; "queued": it waits in the queue (perhaps transformed).',
});
export type QueuedInputDisposition = Static<typeof QueuedInputDisposition>;

export const PromptDisposition = Type.Union([Type.Literal("started"), ...QueuedInputDisposition.anyOf], {
  description:
    '"started": it starts a run (wait for agent_settled); "queued": queued behind the current run; "handled": an extension command or input handler consumed it, no run started for it.',
});
export type PromptDisposition = Static<typeof PromptDisposition>;

export const PromptData = Type.Object({ disposition: PromptDisposition }, { description: "Data of prompt (newest pi): what became of the prompt." });
export type PromptData = Static<typeof PromptData>;

export const QueuedInputData = Type.Object(
  { disposition: QueuedInputDisposition },
  { description: "Data of steer and follow_up (newest pi): what became of the message." },
);
export type QueuedInputData = Static<typeof QueuedInputData>;

export const QueueContents = Type.Object(
  {
    steering: Type.Array(Type.String(), { description: "Queued steering messages, oldest first." }),
    followUp: Type.Array(Type.String(), { description: "Queued follow-up messages, oldest first." }),
  },
  { description: "Text of queued messages." },
);
export type QueueContents = Static<typeof QueueContents>;

export const SourceInfo = Type.Object(
  {
    path: Type.String({ description: "Absolute path of the resource." }),
    source: Type.String({ description: 'How it was found, e.g. "local", "auto", "cli".' }),
    scope: Type.Union([Type.Literal("user"), Type.Literal("project"), Type.Literal("temporary")]),
    origin: Type.Union([Type.Literal("package"), Type.Literal("top-level")]),
    baseDir: Type.Optional(Type.String({ description: "Package base directory, for package resources." })),
  },
  { description: "Where a command's owning resource came from." },
);
export type SourceInfo = Static<typeof SourceInfo>;

export const SlashCommand = Type.Object(
  {
    name: Type.String({ description: "Invoke with `/name` in a prompt (skills are named `skill:<name>`)." }),
    description: Type.Optional(Type.String()),
    source: Type.Union([Type.Literal("extension"), Type.Literal("prompt"), Type.Literal("skill")]),
    sourceInfo: Type.Optional(SourceInfo),
    path: Type.Optional(Type.String({ description: "File that defines it (older pi)." })),
    location: Type.Optional(
      Type.Union([Type.Literal("user"), Type.Literal("project"), Type.Literal("path")], {
        description: "Where it was loaded from (older pi; not for extensions).",
      }),
    ),
  },
  { description: "A command a prompt can invoke." },
);
export type SlashCommand = Static<typeof SlashCommand>;

// ---- session entries -----------------------------------------------------------------

const EntryId = Type.String({ description: "Stable entry id; usable as a get_entries cursor." });
const ParentId = Type.Union([Type.String(), Type.Null()], { description: "Parent entry id; null for a root." });
const EntryTimestamp = Type.String({ description: "ISO 8601 time." });

export const SessionMessageEntry = Type.Object(
  { type: Type.Literal("message"), id: EntryId, parentId: ParentId, timestamp: EntryTimestamp, message: AgentMessage },
  { description: "A transcript message." },
);
export const ThinkingLevelChangeEntry = Type.Object(
  {
    type: Type.Literal("thinking_level_change"),
    id: EntryId,
    parentId: ParentId,
    timestamp: EntryTimestamp,
    thinkingLevel: Type.String(),
  },
  { description: "The thinking level changed." },
);
export const ModelChangeEntry = Type.Object(
  {
    type: Type.Literal("model_change"),
    id: EntryId,
    parentId: ParentId,
    timestamp: EntryTimestamp,
    provider: Type.String(),
    modelId: Type.String(),
  },
  { description: "The model changed." },
);
export const CompactionEntry = Type.Object(
  {
    type: Type.Literal("compaction"),
    id: EntryId,
    parentId: ParentId,
    timestamp: EntryTimestamp,
    summary: Type.String(),
    firstKeptEntryId: Type.Optional(Type.String({ description: "Older format: first entry kept after the summary." })),
    tokensBefore: Type.Number(),
    retainedTail: Type.Optional(Type.Array(AgentMessage, { description: "Newer format: messages kept after it." })),
    usage: Type.Optional(Usage),
    details: Type.Optional(Type.Unknown()),
    fromHook: Type.Optional(Type.Boolean({ description: "true when an extension produced it." })),
    systemMessage: Type.Optional(SystemMessage),
  },
  { description: "Older context was summarised." },
);
export const BranchSummaryEntry = Type.Object(
  {
    type: Type.Literal("branch_summary"),
    id: EntryId,
    parentId: ParentId,
    timestamp: EntryTimestamp,
    fromId: Type.String(),
    summary: Type.String(),
    usage: Type.Optional(Usage),
    details: Type.Optional(Type.Unknown()),
    fromHook: Type.Optional(Type.Boolean()),
  },
  { description: "Summary of the branch that was left." },
);
export const CustomEntry = Type.Object(
  {
    type: Type.Literal("custom"),
    id: EntryId,
    parentId: ParentId,
    timestamp: EntryTimestamp,
    customType: Type.String(),
    data: Type.Optional(Type.Unknown()),
  },
  { description: "Extension state; never part of the model context." },
);
export const CustomMessageEntry = Type.Object(
  {
    type: Type.Literal("custom_message"),
    id: EntryId,
    parentId: ParentId,
    timestamp: EntryTimestamp,
    customType: Type.String(),
    content: Type.Union([Type.String(), Type.Array(UserContentBlock)]),
    details: Type.Optional(Type.Unknown()),
    display: Type.Boolean(),
  },
  { description: "Extension message that is part of the model context." },
);
export const LabelEntry = Type.Object(
  {
    type: Type.Literal("label"),
    id: EntryId,
    parentId: ParentId,
    timestamp: EntryTimestamp,
    targetId: Type.String(),
    label: Type.Optional(Type.String({ description: "Absent: the label was cleared." })),
  },
  { description: "A bookmark set on (or cleared from) another entry." },
);
export const SessionInfoEntry = Type.Object(
  {
    type: Type.Literal("session_info"),
    id: EntryId,
    parentId: ParentId,
    timestamp: EntryTimestamp,
    name: Type.Optional(Type.String()),
  },
  { description: "Session metadata such as its display name." },
);

export const UsageEntry = Type.Object(
  {
    type: Type.Literal("usage"),
    id: EntryId,
    parentId: ParentId,
    timestamp: EntryTimestamp,
    kind: Type.String({ description: 'What the model call was for, e.g. "cache_warm" (newest pi).' }),
    provider: Type.String(),
    model: Type.String(),
    usage: Usage,
    note: Type.Optional(Type.String()),
  },
  { description: "Usage of a model call outside the transcript (newest pi writes them; parley keeps those it reads)." },
);
export const ContextEditEntry = Type.Object(
  {
    type: Type.Literal("context_edit"),
    id: EntryId,
    parentId: ParentId,
    timestamp: EntryTimestamp,
    targetId: Type.String({ description: "The entry whose message the model context shows edited." }),
    replacement: Type.Union(
      [Type.Object({ content: Type.Union([Type.String(), Type.Array(Type.Union([UserContentBlock, AssistantContentBlock]))]) }), Type.Null()],
      { description: "The message's new content; null leaves the message out of the context." },
    ),
  },
  { description: "Edits or omits an earlier message in the model context, the entry itself unchanged (newest pi)." },
);

export const SessionEntry = Type.Union(
  [
    SessionMessageEntry,
    ThinkingLevelChangeEntry,
    ModelChangeEntry,
    CompactionEntry,
    BranchSummaryEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    SessionInfoEntry,
    UsageEntry,
    ContextEditEntry,
  ],
  { description: "One entry of the append-only session tree." },
);
export type SessionEntry = Static<typeof SessionEntry>;

export const SessionTreeNode = Type.Cyclic(
  {
    SessionTreeNode: Type.Object({
      entry: SessionEntry,
      children: Type.Array(Type.Ref("SessionTreeNode")),
      label: Type.Optional(Type.String({ description: "The entry's current label." })),
      labelTimestamp: Type.Optional(Type.String({ description: "When the label last changed." })),
    }),
  },
  "SessionTreeNode",
  { description: "An entry with its children." },
);
export type SessionTreeNode = Static<typeof SessionTreeNode>;

const LeafId = Type.Union([Type.String(), Type.Null()], {
  description: "The current leaf entry id; null for an empty session.",
});

export const GetEntriesData = Type.Object(
  { entries: Type.Array(SessionEntry, { description: "Append order." }), leafId: LeafId },
  { description: "Data of get_entries." },
);
export type GetEntriesData = Static<typeof GetEntriesData>;

export const GetTreeData = Type.Object(
  { tree: Type.Array(SessionTreeNode, { description: "Roots; orphaned entries appear as extra roots." }), leafId: LeafId },
  { description: "Data of get_tree." },
);
export type GetTreeData = Static<typeof GetTreeData>;
