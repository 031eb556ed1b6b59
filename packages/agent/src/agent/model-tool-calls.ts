/**
 * What the newest pi's loop does for model-issued tool calls that the loop parley runs
 * (pi-agent-core 0.73) does not: a tool_call handler's `terminate` on a block, a result's own
 * `isError`, `structuredContent` and `usage` kept through tool_result handlers, `durationMs` of
 * execute() alone (absent when the tool did not run), updates after execute() settled ignored,
 * and the result message's `usage`, `durationMs` and `nestedCalls`.
 *
 * A call blocked with `terminate` is let through the loop's own check and answered here instead of
 * running the tool, because only a result (not a block) can carry `terminate` in that loop.
 */
import { settleAfterAbort } from "../abort-grace.js";
import type { AgentTool } from "@earendil-works/pi-agent-core";
import type { ToolResultMessage, Usage } from "@earendil-works/pi-ai";
import type { ExtensionRuntime } from "../extensions/runtime.js";
import type { NestedCalls } from "./nested-tool-calls.js";
import { errorResult, normalizeResult } from "./run-tool-call.js";
import { toolCallVerdict, toolResultChange, type BlockVerdict, type ToolCallRef } from "./tool-hooks.js";
import { addUsage } from "./usage-shape.js";
import { jsonValue } from "./loop-messages.js";

/** What is known of one call between its start and its result message. */
interface CallNotes {
  /** Blocked with terminate: the wrapped tool answers with the block instead of running. */
  blocked?: BlockVerdict;
  answeredBlock?: boolean;
  durationMs?: number;
  structuredContent?: unknown;
  usage?: Usage;
}

/** The result message fields the newest pi adds (the protocol's ToolResultMessage has them). */
export type ToolResultMessageNotes = ToolResultMessage & { usage?: Usage; durationMs?: number; nestedCalls?: NestedCalls };

export class ModelToolCalls {
  readonly #notes = new Map<string, CallNotes>();

  #note(id: string): CallNotes {
    let notes = this.#notes.get(id);
    if (!notes) {
      notes = {};
      this.#notes.set(id, notes);
    }
    return notes;
  }

  /** The tool as the loop runs it: answers terminate-blocks, times execute(), drops late updates. */
  wrap(tool: AgentTool<any, any>): AgentTool<any, any> {
    return {
      ...tool,
      execute: async (id, params, signal, onUpdate) => {
        const notes = this.#note(id);
        if (notes.blocked) {
          notes.answeredBlock = true;
          return { ...errorResult(notes.blocked.reason), terminate: true };
        }
        let accepting = true;
        const started = performance.now();
        try {
          const run = tool.execute(id, params, signal, (partial) => {
            if (accepting) onUpdate?.(partial);
          });
          // A tool that ignores the abort must not keep the run from ending.
          const result = await settleAfterAbort(run, signal, `Tool ${tool.name}`);
          // A copy: the loop may rebuild it, and the tool may return one shared object every time.
          return typeof result === "object" && result !== null ? { ...result } : result;
        } finally {
          accepting = false;
          notes.durationMs = Math.round(performance.now() - started);
        }
      },
    };
  }

  /** The loop's beforeToolCall. */
  async before(runtime: ExtensionRuntime, call: ToolCallRef, args: unknown): Promise<{ block: true; reason: string } | undefined> {
    const verdict = await toolCallVerdict(runtime, call, args);
    if (!verdict) return undefined;
    if (!verdict.terminate) return { block: true, reason: verdict.reason };
    this.#note(call.id).blocked = verdict;
    return undefined;
  }

  /** The loop's afterToolCall: tool_result handlers, with what the loop would drop kept aside. */
  async after(
    runtime: ExtensionRuntime,
    call: ToolCallRef,
    args: unknown,
    raw: unknown,
    loopIsError: boolean,
  ): Promise<{ content?: ToolResultMessage["content"]; details?: unknown; isError?: boolean } | undefined> {
    const notes = this.#note(call.id);
    // A block answered by the wrapper: pi runs no tool_result handlers for a call that did not run.
    if (notes.answeredBlock) return { isError: true };
    const result = normalizeResult(raw);
    const isError = loopIsError || result.isError === true;
    const change = await toolResultChange(runtime, call, args, result, isError);
    const structuredContent = change ? change.structuredContent : result.structuredContent;
    const usage = change?.usage ?? result.usage;
    if (structuredContent !== undefined) notes.structuredContent = structuredContent;
    else delete notes.structuredContent;
    if (usage !== undefined) notes.usage = usage;
    if (change) return { content: change.content, details: change.details, isError: change.isError };
    return isError !== loopIsError ? { isError } : undefined;
  }

  /** tool_execution_end as pi reports it: durationMs when the tool ran, the result's own fields kept. */
  endEvent<E extends { toolCallId: string; result: unknown }>(event: E): E & { durationMs?: number } {
    const notes = this.#notes.get(event.toolCallId);
    if (!notes) return event;
    const result =
      typeof event.result === "object" && event.result !== null
        ? {
            ...event.result,
            ...(notes.structuredContent !== undefined ? { structuredContent: jsonValue(notes.structuredContent) } : {}),
            ...(notes.usage !== undefined ? { usage: notes.usage } : {}),
          }
        : event.result;
    const durationMs = notes.answeredBlock ? undefined : notes.durationMs;
    return { ...event, result, ...(durationMs !== undefined ? { durationMs } : {}) };
  }

  /**
   * The result message as it starts (in place: the loop's context holds the same object): the
   * call's usage plus that of the calls it made, how long it ran, and the record of those calls.
   */
  completeMessage(message: ToolResultMessageNotes, nested: { calls: NestedCalls | undefined; usage: Usage | undefined } | undefined): void {
    const notes = this.#notes.get(message.toolCallId);
    this.#notes.delete(message.toolCallId);
    let usage = notes?.usage;
    if (nested?.usage) usage = usage ? addUsage(usage, nested.usage) : nested.usage;
    if (usage !== undefined) message.usage = usage;
    if (notes?.durationMs !== undefined && !notes.answeredBlock) message.durationMs = notes.durationMs;
    if (nested?.calls) message.nestedCalls = nested.calls;
  }

  /** A run ended: calls it left unfinished (aborted) have nothing more to report. */
  clear(): void {
    this.#notes.clear();
  }
}
