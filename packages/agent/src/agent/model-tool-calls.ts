/**
 * Model-issued tool calls on pi-agent-core 1.6's loop, which itself blocks (with `terminate`),
 * keeps a result's `isError`, `structuredContent` and `usage` through afterToolCall, times
 * execute() (`durationMs` on tool_execution_end and the result message) and drops updates that come
 * after execute() settled. What is left to parley: the extension hooks (tool_call, tool_result)
 * as the loop's before/after hooks, a tool that ignores an abort let go of, and the result
 * message's `nestedCalls` with their usage added to the call's own.
 */
import { settleAfterAbort } from "../abort-grace.js";
import type { AfterToolCallResult, AgentTool, BeforeToolCallResult } from "@earendil-works/pi-agent-core";
import type { ToolResultMessage, Usage } from "@earendil-works/pi-ai";
import type { ExtensionRuntime } from "../extensions/runtime.js";
import type { NestedCalls } from "./nested-tool-calls.js";
import { normalizeResult } from "./run-tool-call.js";
import { toolCallVerdict, toolResultChange, type ToolCallRef } from "./tool-hooks.js";
import { addUsage } from "./usage-shape.js";
import { jsonValue } from "./loop-messages.js";

/** The result message fields the newest pi adds (the protocol's ToolResultMessage has them). */
export type ToolResultMessageNotes = ToolResultMessage & { usage?: Usage; durationMs?: number; nestedCalls?: NestedCalls };

/** The tool as the loop runs it: a tool that ignores the abort does not keep the run from ending. */
export function withAbortGrace(tool: AgentTool<any, any>): AgentTool<any, any> {
  return {
    ...tool,
    execute: async (id, params, signal, onUpdate) => {
      const result = await settleAfterAbort(tool.execute(id, params, signal, onUpdate), signal, `Tool ${tool.name}`);
      // A copy: the loop may rebuild it, and the tool may return one shared object every time.
      return typeof result === "object" && result !== null ? { ...result } : result;
    },
  };
}

/** The loop's beforeToolCall: tool_call handlers; a block may end the run after this batch (`terminate`). */
export async function beforeModelCall(runtime: ExtensionRuntime, call: ToolCallRef, args: unknown): Promise<BeforeToolCallResult | undefined> {
  const verdict = await toolCallVerdict(runtime, call, args);
  if (!verdict) return undefined;
  return { block: true, reason: verdict.reason, ...(verdict.terminate ? { terminate: true } : {}) };
}

/** The loop's afterToolCall: tool_result handlers, their change given back in the loop's own fields. */
export async function afterModelCall(
  runtime: ExtensionRuntime,
  call: ToolCallRef,
  args: unknown,
  raw: unknown,
  loopIsError: boolean,
): Promise<AfterToolCallResult | undefined> {
  const result = normalizeResult(raw);
  const isError = loopIsError || result.isError === true;
  const change = await toolResultChange(runtime, call, args, result, isError);
  if (!change) return isError !== loopIsError ? { isError } : undefined;
  // Content without structuredContent drops the old structured content (it may no longer match), as in pi.
  return {
    content: change.content,
    details: change.details,
    isError: change.isError,
    ...(change.structuredContent !== undefined ? { structuredContent: jsonValue(change.structuredContent) } : {}),
    ...(change.usage !== undefined ? { usage: change.usage } : {}),
  };
}

/**
 * The result message as it starts (in place: the loop's context holds the same object): the
 * usage of the calls the tool made added to its own, and the record of those calls.
 */
export function completeResultMessage(message: ToolResultMessageNotes, nested: { calls: NestedCalls | undefined; usage: Usage | undefined } | undefined): void {
  if (!nested) return;
  if (nested.usage) message.usage = message.usage ? addUsage(message.usage, nested.usage) : nested.usage;
  if (nested.calls) message.nestedCalls = nested.calls;
}
