/**
 * Message shapes carried on the wire: pi-ai's content blocks and LLM messages, the extra
 * message kinds the coding agent keeps in its transcript (bash executions, extension
 * messages, summaries), usage accounting and the Model object returned by model commands.
 *
 * Objects accept unknown extra fields, so a newer peer can add optional fields without
 * breaking an older validator.
 */
import { Type, type Static } from "typebox";

// ---- content blocks ----------------------------------------------------------

export const TextContent = Type.Object(
  {
    type: Type.Literal("text"),
    text: Type.String(),
    textSignature: Type.Optional(Type.String({ description: "Opaque provider signature of this text block, passed back on later turns." })),
  },
  { description: "A block of plain text." },
);
export type TextContent = Static<typeof TextContent>;

export const ThinkingContent = Type.Object(
  {
    type: Type.Literal("thinking"),
    thinking: Type.String({ description: "The model's reasoning text (may be empty when redacted)." }),
    thinkingSignature: Type.Optional(Type.String({ description: "Opaque provider signature; holds the encrypted payload when redacted." })),
    redacted: Type.Optional(Type.Boolean({ description: "true when the provider withheld the reasoning text." })),
  },
  { description: "A block of model reasoning." },
);
export type ThinkingContent = Static<typeof ThinkingContent>;

export const ImageContent = Type.Object(
  {
    type: Type.Literal("image"),
    data: Type.String({ description: "The image bytes, base64-encoded (no data: URL prefix)." }),
    mimeType: Type.String({ description: 'Media type of the image, e.g. "image/png" or "image/jpeg".' }),
  },
  { description: "An inline image." },
);
export type ImageContent = Static<typeof ImageContent>;

export const ToolCall = Type.Object(
  {
    type: Type.Literal("toolCall"),
    id: Type.String({ description: "Provider-assigned id; the matching toolResult carries it as toolCallId." }),
    name: Type.String({ description: "Name of the tool to run." }),
    arguments: Type.Record(Type.String(), Type.Unknown(), { description: "Parsed JSON arguments of the call." }),
    thoughtSignature: Type.Optional(Type.String({ description: "Opaque provider signature tied to this call." })),
  },
  { description: "A request from the model to run a tool." },
);
export type ToolCall = Static<typeof ToolCall>;

/** Content allowed in user messages, tool results and extension messages. */
export const UserContentBlock = Type.Union([TextContent, ImageContent]);
export type UserContentBlock = Static<typeof UserContentBlock>;

/** Content allowed in assistant messages. */
export const AssistantContentBlock = Type.Union([TextContent, ThinkingContent, ToolCall]);
export type AssistantContentBlock = Static<typeof AssistantContentBlock>;

// ---- usage -------------------------------------------------------------------

export const UsageCost = Type.Object(
  {
    input: Type.Number(),
    output: Type.Number(),
    cacheRead: Type.Number(),
    cacheWrite: Type.Number(),
    total: Type.Number(),
  },
  { description: "Cost in US dollars, per token category and in total." },
);
export type UsageCost = Static<typeof UsageCost>;

export const Usage = Type.Object(
  {
    input: Type.Number({ description: "Input (prompt) tokens not served from cache." }),
    output: Type.Number({ description: "Output (completion) tokens." }),
    cacheRead: Type.Number({ description: "Input tokens read from the provider's prompt cache." }),
    cacheWrite: Type.Number({ description: "Input tokens written to the provider's prompt cache." }),
    totalTokens: Type.Number({ description: "Sum of all token categories." }),
    cost: UsageCost,
  },
  { description: "Token counts and cost of one or more model calls." },
);
export type Usage = Static<typeof Usage>;

export const StopReason = Type.Union(
  [
    Type.Literal("stop"),
    Type.Literal("length"),
    Type.Literal("toolUse"),
    Type.Literal("error"),
    Type.Literal("aborted"),
    Type.Literal("deferred"),
    Type.Literal("pending"),
  ],
  {
    description:
      "Why generation ended: stop (natural end), length (token limit), toolUse (wants tool results), error, aborted; deferred (a background request the provider finishes later) and pending (not finished yet), as pi-ai 1.6 has them.",
  },
);
export type StopReason = Static<typeof StopReason>;

// ---- pi-ai messages ----------------------------------------------------------

const Timestamp = Type.Number({ description: "Creation time, Unix epoch milliseconds." });

export const UserMessage = Type.Object(
  {
    role: Type.Literal("user"),
    content: Type.Union([Type.String(), Type.Array(UserContentBlock)], {
      description: "Plain text, or an array of text and image blocks.",
    }),
    timestamp: Timestamp,
  },
  { description: "A message from the user." },
);
export type UserMessage = Static<typeof UserMessage>;

export const DiagnosticErrorInfo = Type.Object({
  name: Type.Optional(Type.String()),
  message: Type.String(),
  stack: Type.Optional(Type.String()),
  code: Type.Optional(Type.Union([Type.String(), Type.Number()])),
});
export type DiagnosticErrorInfo = Static<typeof DiagnosticErrorInfo>;

export const AssistantMessageDiagnostic = Type.Object(
  {
    type: Type.String({ description: "Kind of diagnostic." }),
    timestamp: Timestamp,
    error: Type.Optional(DiagnosticErrorInfo),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { description: "A provider-side problem noted while producing an assistant message." },
);
export type AssistantMessageDiagnostic = Static<typeof AssistantMessageDiagnostic>;

export const AssistantMessage = Type.Object(
  {
    role: Type.Literal("assistant"),
    content: Type.Array(AssistantContentBlock, { description: "Text, thinking and tool-call blocks, in order." }),
    api: Type.String({ description: 'The provider API used, e.g. "anthropic-messages".' }),
    provider: Type.String({ description: 'Provider name, e.g. "anthropic".' }),
    model: Type.String({ description: "Id of the model that was asked." }),
    responseModel: Type.Optional(Type.String({ description: "Model id the provider reported, when it differs." })),
    responseId: Type.Optional(Type.String({ description: "Provider's id for this response." })),
    thinkingLevel: Type.Optional(
      Type.String({
        description: "Thinking level the loop asked for; set on responses a virtual model routed (the newest pi sets it on every loop response).",
      }),
    ),
    diagnostics: Type.Optional(Type.Array(AssistantMessageDiagnostic)),
    usage: Usage,
    stopReason: StopReason,
    errorMessage: Type.Optional(Type.String({ description: "Present when stopReason is error or aborted." })),
    timestamp: Timestamp,
  },
  { description: "A message produced by the model." },
);
export type AssistantMessage = Static<typeof AssistantMessage>;

export const NestedToolCallRecord = Type.Object(
  {
    id: Type.String({ description: "`<calling id>/<n>`." }),
    name: Type.String(),
    arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "Left out when over the size limits." })),
    argumentsBytes: Type.Optional(Type.Number({ description: "UTF-8 size of the arguments as JSON, when they were left out." })),
    status: Type.Union([Type.Literal("ok"), Type.Literal("error"), Type.Literal("unfinished")], {
      description: "unfinished: still running when the calling tool finished.",
    }),
    durationMs: Type.Optional(Type.Number()),
    error: Type.Optional(Type.String({ description: "Error text, truncated." })),
  },
  { description: "A call a tool made to another tool (ctx.executeTool)." },
);
export const NestedToolCalls = Type.Object(
  {
    calls: Type.Array(NestedToolCallRecord),
    complete: Type.Boolean({ description: "false when calls were dropped, arguments left out, or calls had not finished." }),
  },
  { description: "Bounded record of the calls a tool made to other tools (newest pi); results are not recorded." },
);

export const ToolResultMessage = Type.Object(
  {
    role: Type.Literal("toolResult"),
    toolCallId: Type.String({ description: "The id of the toolCall block this answers." }),
    toolName: Type.String(),
    content: Type.Array(UserContentBlock, { description: "What the model sees of the result." }),
    details: Type.Optional(Type.Unknown({ description: "Tool-specific data for UIs; not sent to the model." })),
    usage: Type.Optional(Usage),
    nestedCalls: Type.Optional(NestedToolCalls),
    isError: Type.Boolean({ description: "true when the tool failed." }),
    timestamp: Timestamp,
    durationMs: Type.Optional(Type.Number({ description: "How long the tool's execute() ran, in ms (newest pi); absent when it did not run." })),
  },
  {
    description:
      "The result of running one tool call. Newer pi adds `usage` when the tool itself called a model (or called tools that did), `durationMs`, and `nestedCalls`.",
  },
);
export type ToolResultMessage = Static<typeof ToolResultMessage>;

/** The three LLM message kinds of pi-ai. */
export const Message = Type.Union([UserMessage, AssistantMessage, ToolResultMessage]);
export type Message = Static<typeof Message>;

// ---- coding-agent messages -----------------------------------------------------

export const BashExecutionMessage = Type.Object(
  {
    role: Type.Literal("bashExecution"),
    command: Type.String({ description: "The shell command that ran." }),
    output: Type.String({ description: "Combined stdout and stderr, possibly truncated." }),
    exitCode: Type.Optional(Type.Number({ description: "Absent when the process was killed or cancelled." })),
    cancelled: Type.Boolean(),
    truncated: Type.Boolean(),
    fullOutputPath: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: "File holding the untruncated output, when truncated (older pi wrote null for none).",
      }),
    ),
    excludeFromContext: Type.Optional(Type.Boolean({ description: "true: kept in the session, never sent to the model." })),
    timestamp: Timestamp,
  },
  { description: "A shell command run through the `bash` RPC command (not a model tool call)." },
);
export type BashExecutionMessage = Static<typeof BashExecutionMessage>;

export const CustomMessage = Type.Object(
  {
    role: Type.Literal("custom"),
    customType: Type.String({ description: "Identifier chosen by the extension that sent it." }),
    content: Type.Union([Type.String(), Type.Array(UserContentBlock)]),
    display: Type.Boolean({ description: "Whether a UI should show it." }),
    details: Type.Optional(Type.Unknown({ description: "Extension data; not sent to the model." })),
    timestamp: Timestamp,
  },
  { description: "A message injected by an extension." },
);
export type CustomMessage = Static<typeof CustomMessage>;

export const BranchSummaryMessage = Type.Object(
  {
    role: Type.Literal("branchSummary"),
    summary: Type.String(),
    fromId: Type.Union([Type.String(), Type.Null()], { description: "Entry id of the branch that was summarised (null allowed, as pi 1.6 types it)." }),
    timestamp: Timestamp,
  },
  { description: "Summary of an abandoned branch, carried into the active one." },
);
export type BranchSummaryMessage = Static<typeof BranchSummaryMessage>;

export const CompactionSummaryMessage = Type.Object(
  {
    role: Type.Literal("compactionSummary"),
    summary: Type.String(),
    tokensBefore: Type.Number({ description: "Context size before compaction." }),
    timestamp: Timestamp,
  },
  { description: "Summary that replaces compacted history." },
);
export type CompactionSummaryMessage = Static<typeof CompactionSummaryMessage>;

/** Every message kind that appears in the agent's transcript and in events. */
/**
 * The newest pi (1.6.0) records the system prompt in the transcript: a leading system message
 * with its sections and tool definitions, later ones patching them. parley records them as pi
 * 1.6 does (message_start/message_end, the session file, get_messages, the stats); its requests
 * still carry the prompt parley builds for each.
 */
export const SystemMessage = Type.Object(
  {
    role: Type.Literal("system"),
    content: Type.Union([Type.String(), Type.Array(TextContent)], { description: "Instructions; on the leading message, the base prompt." }),
    sections: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), { description: "Named prompt sections; null removes one." })),
    toolsAdded: Type.Optional(Type.Array(Type.Unknown(), { description: "Definitions of tools available from here on." })),
    toolsRemoved: Type.Optional(Type.Array(Type.Unknown(), { description: "Tools no longer available from here on." })),
    timestamp: Timestamp,
  },
  { description: "The system prompt as the newest pi records it in the transcript." },
);
export type SystemMessage = Static<typeof SystemMessage>;

export const AgentMessage = Type.Union(
  [UserMessage, AssistantMessage, ToolResultMessage, BashExecutionMessage, CustomMessage, BranchSummaryMessage, CompactionSummaryMessage, SystemMessage],
  { description: "A transcript message; `role` tells the kind." },
);
export type AgentMessage = Static<typeof AgentMessage>;

// ---- model -------------------------------------------------------------------

const LevelValue = Type.Optional(Type.Union([Type.String(), Type.Null()]));

export const ModelCost = Type.Object(
  {
    input: Type.Number(),
    output: Type.Number(),
    cacheRead: Type.Number(),
    cacheWrite: Type.Number(),
  },
  { description: "US dollars per million tokens." },
);
export type ModelCost = Static<typeof ModelCost>;

export const Model = Type.Object(
  {
    id: Type.String({ description: "Model id as the provider knows it." }),
    name: Type.String({ description: "Human-readable name." }),
    api: Type.String({ description: 'Provider API spoken, e.g. "anthropic-messages", "openai-completions".' }),
    provider: Type.String({ description: 'Provider name, e.g. "anthropic".' }),
    baseUrl: Type.String(),
    reasoning: Type.Boolean({ description: "Whether the model supports thinking levels." }),
    thinkingLevelMap: Type.Optional(
      Type.Object(
        {
          off: LevelValue,
          minimal: LevelValue,
          low: LevelValue,
          medium: LevelValue,
          high: LevelValue,
          xhigh: LevelValue,
          max: Type.Optional(LevelValue),
        },
        { description: "Thinking level → provider value; null marks a level as unsupported." },
      ),
    ),
    input: Type.Array(Type.Union([Type.Literal("text"), Type.Literal("image")]), {
      description: "Input modalities accepted.",
    }),
    cost: ModelCost,
    contextWindow: Type.Number({ description: "Context window in tokens." }),
    maxTokens: Type.Number({ description: "Maximum output tokens." }),
    headers: Type.Optional(Type.Record(Type.String(), Type.String(), { description: "Extra HTTP headers." })),
    compat: Type.Optional(Type.Object({}, { description: "Provider-specific compatibility overrides (fields depend on `api`)." })),
  },
  { description: "A configured model, as returned by the model commands." },
);
export type Model = Static<typeof Model>;
