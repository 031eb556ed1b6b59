/**
 * Type-level agreement between our schemas and pi's own TypeScript types.
 *
 * `assignable<From, To>()` only compiles when From is assignable to To. vitest does not
 * type-check test files, so the test below runs the TypeScript compiler on this very file
 * and fails on any diagnostic: a schema drifting away from pi's types fails `vitest run`.
 */
import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import type { Static } from "typebox";
import type * as PiAi from "@earendil-works/pi-ai";
import type { AgentMessage as PiAgentMessage, AgentEvent as PiAgentEvent, ThinkingLevel as PiThinkingLevel } from "@earendil-works/pi-agent-core";
import type {
  RpcCommand as PiRpcCommand,
  RpcResponse as PiRpcResponse,
  RpcSessionState as PiRpcSessionState,
  SessionStats as PiSessionStats,
  CompactionResult as PiCompactionResult,
  SessionEntry as PiSessionEntry,
} from "@mariozechner/pi-coding-agent";
// pi 1.6's coding-agent messages, merged into pi-agent-core 1.6's AgentMessage by its declarations.
import type {} from "pi-newest";
import type * as M from "../src/schema/messages.js";
import type * as C from "../src/schema/index.js";
import type * as R from "../src/schema/index.js";
import type * as E from "../src/schema/events.js";
import { typeCheckFile } from "./helpers/type-check-file.js";

/** Compiles only when From is assignable to To. */
// biome-ignore lint/correctness/noUnusedVariables: the constraint on From is the whole check.
function assignable<From extends To, To>(): void {}
/** Compiles only when A and B are assignable to each other. */
function mutual<A extends B, B extends C, C = A>(): void {}

// ---- content blocks: both directions ------------------------------------------------------
mutual<Static<typeof M.TextContent>, PiAi.TextContent>();
mutual<Static<typeof M.ThinkingContent>, PiAi.ThinkingContent>();
mutual<Static<typeof M.ImageContent>, PiAi.ImageContent>();
// pi-ai 1.6 types a tool call's arguments as a JSON object, ours as a record of unknown values: pi → ours.
assignable<PiAi.ToolCall, Static<typeof M.ToolCall>>();
mutual<Static<typeof M.Usage>, PiAi.Usage>();
mutual<Static<typeof M.StopReason>, PiAi.StopReason>();

// ---- messages: both directions --------------------------------------------------------
mutual<Static<typeof M.UserMessage>, PiAi.UserMessage>();
assignable<PiAi.AssistantMessage, Static<typeof M.AssistantMessage>>();
// Messages holding tool calls or structured content: pi → ours (JSON values, see ToolCall).
assignable<PiAi.ToolResultMessage, Static<typeof M.ToolResultMessage>>();
// pi-ai 1.6's Message includes its system message, which the wire has among the agent messages.
assignable<Exclude<PiAi.Message, PiAi.SystemMessage>, Static<typeof M.Message>>();
assignable<PiAi.SystemMessage, Static<typeof M.SystemMessage>>();

// ---- coding-agent messages (merged into pi-agent-core's AgentMessage) ------------------------
type PiBash = Extract<PiAgentMessage, { role: "bashExecution" }>;
type PiCustom = Extract<PiAgentMessage, { role: "custom" }>;
type PiBranchSummary = Extract<PiAgentMessage, { role: "branchSummary" }>;
type PiCompactionSummary = Extract<PiAgentMessage, { role: "compactionSummary" }>;
// pi declares `exitCode: number | undefined` (a required key) and JSON drops undefined, so on
// the wire the key is optional: only pi → ours holds for bash messages.
assignable<PiBash, Static<typeof M.BashExecutionMessage>>();
mutual<Static<typeof M.CustomMessage>, PiCustom>();
mutual<Static<typeof M.BranchSummaryMessage>, PiBranchSummary>();
mutual<Static<typeof M.CompactionSummaryMessage>, PiCompactionSummary>();
assignable<PiAgentMessage, Static<typeof M.AgentMessage>>();

// ---- model ---------------------------------------------------------------------------
// `compat` is a per-API conditional type in pi; ours is an open object.
mutual<Static<typeof M.Model>, PiAi.Model<PiAi.Api>>();
assignable<PiAi.Model<"anthropic-messages">, Static<typeof M.Model>>();
assignable<PiAi.Model<any>, Static<typeof M.Model>>();

// ---- thinking level ---------------------------------------------------------------------
mutual<Static<typeof C.ThinkingLevel>, PiThinkingLevel>();

// ---- wire records: whatever pi 0.73 sends must validate as ours -------------------------------
assignable<PiRpcCommand, Static<typeof C.RpcCommand>>();
assignable<PiRpcCommand["type"], C.CommandType>();
assignable<PiRpcSessionState, Static<typeof R.SessionState>>();
assignable<PiSessionStats, Static<typeof R.SessionStats>>();
assignable<PiCompactionResult, Static<typeof R.CompactionResult>>();
assignable<PiSessionEntry, Static<typeof R.SessionEntry>>();
assignable<Extract<PiRpcResponse, { success: false }>, Static<typeof R.ErrorResponse>>();
assignable<Extract<PiRpcResponse, { command: "get_state"; success: true }>, Static<typeof R.GetStateResponse>>();
assignable<Extract<PiRpcResponse, { command: "cycle_model"; success: true }>, Static<typeof R.CycleModelResponse>>();
assignable<Extract<PiRpcResponse, { command: "fork"; success: true }>, Static<typeof R.ForkResponse>>();
assignable<Extract<PiRpcResponse, { command: "get_messages"; success: true }>, Static<typeof R.GetMessagesResponse>>();

// Agent-loop events other than message_update (which the wire makes delta-only).
assignable<Exclude<PiAgentEvent, { type: "message_update" }>, Static<typeof E.RpcEvent>>();
// A message_update minus its snapshot fields is one of our deltas.
type WithoutPartial<T> = T extends { partial: unknown } ? Omit<T, "partial"> : T;
type PiDelta = WithoutPartial<PiAi.AssistantMessageEvent>;
assignable<Exclude<PiDelta, { type: "toolcall_start" }>, Static<typeof E.AssistantMessageDelta>>();
assignable<Extract<PiDelta, { type: "toolcall_start" }> & { id: string; toolName: string }, Static<typeof E.AssistantMessageDelta>>();
assignable<Static<typeof E.AssistantMessageDelta>, { type: PiAi.AssistantMessageEvent["type"] }>();

// ---- the runtime half: type-check this file ---------------------------------------------------

describe("schema types agree with pi's TypeScript types", () => {
  it("this file type-checks", () => {
    expect(typeCheckFile(fileURLToPath(import.meta.url))).toBe("");
  });
});
