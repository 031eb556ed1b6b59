/**
 * One tool call run outside the agent loop, through the steps a model-issued call goes through
 * (the newest pi-agent-core's `runToolCall`): an aborted signal, an unknown tool, arguments that
 * fail the schema, a blocking tool_call handler and a tool that throws all come back as an
 * `isError` outcome; the promise never rejects. Emits nothing: the caller announces the call.
 */
import type { AgentTool } from "@earendil-works/pi-agent-core";
import type { ToolCallOutcome, ToolCallOutcomeResult } from "../extensions/types.js";
import { loadPiAi } from "../models/pi-ai.js";
import { errorMessage } from "../error-text.js";
import type { BlockVerdict, ResultChange, ToolCallRef } from "./tool-hooks.js";
import { asUsage } from "./usage-shape.js";
import { jsonObject, jsonValue } from "./loop-messages.js";

export interface RunToolCallOptions {
  tools: readonly AgentTool<any, any>[];
  signal: AbortSignal | undefined;
  onUpdate: (partialResult: unknown) => Promise<void> | void;
  before(call: ToolCallRef, args: unknown): Promise<BlockVerdict | undefined>;
  after(call: ToolCallRef, args: unknown, result: ToolCallOutcomeResult, isError: boolean): Promise<ResultChange | undefined>;
}

export function errorResult(text: string): ToolCallOutcomeResult {
  return { content: [{ type: "text", text }], details: {} };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A tool's return value as an outcome result: untyped (JS) tools may leave out content. */
export function normalizeResult(value: unknown): ToolCallOutcomeResult {
  if (!isRecord(value)) return { content: [], details: undefined };
  const usage = asUsage(value["usage"]);
  return {
    content: Array.isArray(value["content"]) ? (value["content"] as ToolCallOutcomeResult["content"]) : [],
    details: value["details"],
    ...(value["structuredContent"] !== undefined ? { structuredContent: jsonValue(value["structuredContent"]) } : {}),
    ...(usage !== undefined ? { usage } : {}),
    ...(value["isError"] === true ? { isError: true } : {}),
    ...(value["terminate"] === true ? { terminate: true } : {}),
  };
}

export async function runToolCall(toolCall: ToolCallOutcome["toolCall"], parentToolCallId: string, options: RunToolCallOptions): Promise<ToolCallOutcome> {
  const failed = (text: string, extra: Partial<ToolCallOutcomeResult> = {}): ToolCallOutcome => ({
    toolCall,
    result: { ...errorResult(text), ...extra },
    isError: true,
  });
  const { signal } = options;
  if (signal?.aborted) return failed("Operation aborted");
  const tool = options.tools.find((t) => t.name === toolCall.name);
  if (!tool) return failed(`Tool ${toolCall.name} not found`);
  const call: ToolCallRef = { id: toolCall.id, name: toolCall.name, parentToolCallId };
  let args: unknown;
  try {
    const preparedArguments: unknown = tool.prepareArguments ? tool.prepareArguments(toolCall.arguments) : toolCall.arguments;
    const prepared = { ...toolCall, arguments: jsonObject(isRecord(preparedArguments) ? preparedArguments : {}) };
    const { validateToolArguments } = await loadPiAi();
    args = validateToolArguments(tool, prepared);
    const verdict = await options.before(call, args);
    if (signal?.aborted) return failed("Operation aborted");
    if (verdict) return failed(verdict.reason, verdict.terminate ? { terminate: true } : {});
  } catch (error) {
    return failed(errorMessage(error));
  }

  // Updates count only while execute() runs: a late one would describe a call already finished.
  const updates: Promise<void>[] = [];
  let accepting = true;
  const started = performance.now();
  let result: ToolCallOutcomeResult;
  let isError: boolean;
  try {
    const value: unknown = await tool.execute(toolCall.id, args, signal, (partial) => {
      if (accepting) updates.push(Promise.resolve(options.onUpdate(partial)));
    });
    result = normalizeResult(value);
    isError = result.isError === true;
  } catch (error) {
    result = errorResult(errorMessage(error));
    isError = true;
  }
  const durationMs = Math.round(performance.now() - started);
  accepting = false;
  await Promise.allSettled(updates);

  try {
    const change = await options.after(call, args, result, isError);
    if (change) {
      const { structuredContent: _dropped, ...rest } = result;
      result = {
        ...rest,
        content: change.content,
        details: change.details,
        ...(change.structuredContent !== undefined ? { structuredContent: jsonValue(change.structuredContent) } : {}),
        ...(change.usage !== undefined ? { usage: change.usage } : {}),
      };
      isError = change.isError;
    }
  } catch (error) {
    result = errorResult(errorMessage(error));
    isError = true;
  }
  return { toolCall, result, isError, durationMs };
}
