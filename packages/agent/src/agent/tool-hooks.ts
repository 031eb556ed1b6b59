/**
 * The extension hooks around one tool call, as the newest pi runs them for model-issued calls and
 * for calls tools make through `ctx.executeTool` alike: `tool_call` may block (and ask the run to
 * stop after the batch), `tool_result` may change what the call returns.
 */
import type { ImageContent, TextContent, Usage } from "@earendil-works/pi-ai";
import type { ExtensionRuntime } from "../extensions/runtime.js";
import type { ToolResultEvent } from "../extensions/types.js";
import { asUsage } from "./usage-shape.js";

export interface ToolCallRef {
  id: string;
  name: string;
  /** The id of the tool call that made this one through `ctx.executeTool`. */
  parentToolCallId?: string | undefined;
}

export interface BlockVerdict {
  block: true;
  /** pi's default text when a handler gives none. */
  reason: string;
  terminate: boolean;
}

/** A result as the hooks see and change it. */
export interface HookedResult {
  content: (TextContent | ImageContent)[];
  details: unknown;
  structuredContent?: unknown;
  usage?: Usage | undefined;
}

export interface ResultChange {
  content: (TextContent | ImageContent)[];
  details: unknown;
  structuredContent: unknown;
  isError: boolean;
  usage: Usage | undefined;
}

const parentOf = (call: ToolCallRef) => (call.parentToolCallId !== undefined ? { parentToolCallId: call.parentToolCallId } : {});

/**
 * tool_call handlers in load order; the first that blocks ends the chain. A handler that throws
 * blocks the call with its error, as in pi (a failing permission check must not let the call run).
 */
export async function toolCallVerdict(runtime: ExtensionRuntime, call: ToolCallRef, args: unknown): Promise<BlockVerdict | undefined> {
  if (!runtime.hasHandlers("tool_call")) return undefined;
  try {
    const verdict = await runtime.emitUntilBlocked({
      type: "tool_call",
      toolCallId: call.id,
      ...parentOf(call),
      toolName: call.name,
      input: args,
      block: false,
      reason: undefined,
    });
    if (verdict?.block !== true) return undefined;
    return {
      block: true,
      reason: typeof verdict.reason === "string" && verdict.reason !== "" ? verdict.reason : "Tool execution was blocked",
      terminate: verdict.terminate === true,
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message : `Extension failed, blocking execution: ${String(error)}`;
    return { block: true, reason, terminate: false };
  }
}

/**
 * tool_result handlers in load order, each seeing what the previous left; undefined when none
 * changed anything. A handler that throws is reported and skipped.
 */
export async function toolResultChange(
  runtime: ExtensionRuntime,
  call: ToolCallRef,
  args: unknown,
  result: HookedResult,
  isError: boolean,
): Promise<ResultChange | undefined> {
  if (!runtime.hasHandlers("tool_result")) return undefined;
  const initial: ToolResultEvent = {
    type: "tool_result",
    toolCallId: call.id,
    ...parentOf(call),
    toolName: call.name,
    input: args,
    content: result.content,
    details: result.details,
    ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    isError,
    ...(result.usage !== undefined ? { usage: result.usage } : {}),
  };
  const final = await runtime.emitChained(initial, (event, change) => {
    const next: ToolResultEvent = { ...event };
    if (Array.isArray(change.content)) {
      next.content = change.content;
      // New content may no longer match the structured result: it goes unless replaced too.
      if (change.structuredContent === undefined) delete next.structuredContent;
    }
    if (change.details !== undefined) next.details = change.details;
    if (change.structuredContent !== undefined) next.structuredContent = change.structuredContent;
    if (typeof change.isError === "boolean") next.isError = change.isError;
    const usage = asUsage(change.usage);
    if (usage !== undefined) next.usage = usage;
    return { event: next };
  });
  if (final === initial) return undefined;
  return { content: final.content, details: final.details, structuredContent: final.structuredContent, isError: final.isError, usage: final.usage };
}
