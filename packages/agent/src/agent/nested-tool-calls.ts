/**
 * Calls a tool makes while it runs (`ctx.executeTool`), as the newest pi runs them: the loop does
 * not know about them, so each goes through run-tool-call.ts with the session's hooks, gets the id
 * `<calling id>/<n>`, is announced by tool_execution_* events carrying `parentToolCallId`, and is
 * recorded (bounded) as `nestedCalls` on the model-issued call's result message, whose `usage`
 * also counts theirs. Nothing here runs until a tool calls `ctx.executeTool`.
 */
import type { AgentTool } from "@earendil-works/pi-agent-core";
import type { JsonObject, Usage } from "@earendil-works/pi-ai";
import type { ExecuteToolOptions, ToolCallOutcome } from "../extensions/types.js";
import { runToolCall, type RunToolCallOptions } from "./run-tool-call.js";
import { addUsage } from "./usage-shape.js";

/** Bounds of the record kept on the result message (pi's limits). */
export const NESTED_CALL_LIMITS = { maxCalls: 256, maxArgumentBytesPerCall: 8 * 1024, maxArgumentBytesTotal: 32 * 1024, maxErrorChars: 500 };

export interface NestedCallRecord {
  id: string;
  name: string;
  /** Left out when over the size limits; `argumentsBytes` then says how big they were. */
  arguments?: JsonObject;
  argumentsBytes?: number;
  status: "ok" | "error" | "unfinished";
  durationMs?: number;
  error?: string;
}
export interface NestedCalls {
  calls: NestedCallRecord[];
  /** false when calls were dropped, arguments left out, or calls had not finished. */
  complete: boolean;
}

/** The nested-call events, for extensions and the wire alike. */
export type NestedCallEvent =
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: unknown; parentToolCallId: string }
  | { type: "tool_execution_update"; toolCallId: string; toolName: string; args: unknown; partialResult: unknown; parentToolCallId: string }
  | { type: "tool_execution_end"; toolCallId: string; toolName: string; result: unknown; isError: boolean; durationMs?: number; parentToolCallId: string };

export interface NestedCallHost {
  /** The tools a tool may call (ctx.tools). */
  callableTools(): readonly AgentTool<any, any>[];
  /** Whether the loop runs tool calls one at a time. */
  sequential(): boolean;
  emit(event: NestedCallEvent): Promise<void>;
  hooks: Pick<RunToolCallOptions, "before" | "after">;
}

const encoder = new TextEncoder();

/** The calls one model-issued call made, nested ones included. */
class Recorder {
  readonly calls: NestedCallRecord[] = [];
  complete = true;
  #argumentBytes = 0;
  readonly #started = new Map<NestedCallRecord, number>();
  usage: Usage | undefined;

  start(id: string, name: string, args: Record<string, unknown>): NestedCallRecord | undefined {
    if (this.calls.length >= NESTED_CALL_LIMITS.maxCalls) {
      this.complete = false;
      return undefined;
    }
    const record: NestedCallRecord = { id, name, status: "unfinished" };
    let json: string;
    try {
      json = JSON.stringify(args) ?? "{}";
    } catch {
      json = "";
    }
    const bytes = encoder.encode(json).length;
    if (json === "" || bytes > NESTED_CALL_LIMITS.maxArgumentBytesPerCall || this.#argumentBytes + bytes > NESTED_CALL_LIMITS.maxArgumentBytesTotal) {
      record.argumentsBytes = bytes;
      this.complete = false;
    } else {
      // A copy: the record must not change when the tool mutates its arguments later.
      record.arguments = JSON.parse(json) as JsonObject;
      this.#argumentBytes += bytes;
    }
    this.calls.push(record);
    this.#started.set(record, performance.now());
    return record;
  }

  finish(record: NestedCallRecord | undefined, outcome: ToolCallOutcome): void {
    if (!record) return;
    record.status = outcome.isError ? "error" : "ok";
    record.durationMs = Math.round(performance.now() - (this.#started.get(record) ?? performance.now()));
    this.#started.delete(record);
    const text = outcome.result.content
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join("\n");
    if (outcome.isError && text) record.error = text.slice(0, NESTED_CALL_LIMITS.maxErrorChars);
  }

  snapshot(): NestedCalls | undefined {
    if (this.calls.length === 0 && this.complete) return undefined;
    const calls = this.calls.map((call) => ({ ...call }));
    return { calls, complete: this.complete && calls.every((call) => call.status !== "unfinished") };
  }
}

interface Scope {
  recorder: Recorder;
  nextId: number;
  /** A call up the chain holds the one-at-a-time queue: waiting for it again would deadlock. */
  holdsQueue: boolean;
}

export class NestedToolCalls {
  readonly #host: NestedCallHost;
  /** By the id of the calling tool call. */
  readonly #scopes = new Map<string, Scope>();
  #queueTail: Promise<void> = Promise.resolve();

  constructor(host: NestedCallHost) {
    this.#host = host;
  }

  /** Runs `name` for the call `callerId`; never rejects for tool failures. */
  async execute(callerId: string, name: string, args: unknown, options: ExecuteToolOptions): Promise<ToolCallOutcome> {
    let scope = this.#scopes.get(callerId);
    if (!scope) {
      scope = { recorder: new Recorder(), nextId: 1, holdsQueue: false };
      this.#scopes.set(callerId, scope);
    }
    const argumentsObject = typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
    const toolCall: ToolCallOutcome["toolCall"] = { type: "toolCall", id: `${callerId}/${scope.nextId++}`, name, arguments: argumentsObject };
    const record = scope.recorder.start(toolCall.id, name, argumentsObject);
    const host = this.#host;
    await host.emit({ type: "tool_execution_start", toolCallId: toolCall.id, toolName: name, args: argumentsObject, parentToolCallId: callerId });

    const exclusive = !scope.holdsQueue && (host.sequential() || host.callableTools().find((t) => t.name === name)?.executionMode === "sequential");
    let release: (() => void) | undefined;
    if (exclusive) {
      const previous = this.#queueTail;
      this.#queueTail = new Promise<void>((resolve) => {
        release = resolve;
      });
      await previous;
    }
    this.#scopes.set(toolCall.id, { recorder: scope.recorder, nextId: 1, holdsQueue: scope.holdsQueue || exclusive });
    let outcome: ToolCallOutcome;
    try {
      outcome = await runToolCall(toolCall, callerId, {
        tools: host.callableTools(),
        signal: options.signal,
        ...host.hooks,
        onUpdate: async (partialResult) => {
          try {
            options.onUpdate?.(partialResult);
          } finally {
            await host.emit({
              type: "tool_execution_update",
              toolCallId: toolCall.id,
              toolName: name,
              args: argumentsObject,
              partialResult,
              parentToolCallId: callerId,
            });
          }
        },
      });
    } finally {
      this.#scopes.delete(toolCall.id);
      release?.();
    }
    scope.recorder.finish(record, outcome);
    // Nested results are not saved: their usage reaches the session through the caller's message.
    if (outcome.result.usage) scope.recorder.usage = scope.recorder.usage ? addUsage(scope.recorder.usage, outcome.result.usage) : outcome.result.usage;
    await host.emit({
      type: "tool_execution_end",
      toolCallId: toolCall.id,
      toolName: name,
      result: outcome.result,
      isError: outcome.isError,
      ...(outcome.durationMs !== undefined ? { durationMs: outcome.durationMs } : {}),
      parentToolCallId: callerId,
    });
    return outcome;
  }

  /** Takes the record of what the model-issued call `toolCallId` made, if it made any call. */
  take(toolCallId: string): { calls: NestedCalls | undefined; usage: Usage | undefined } | undefined {
    const scope = this.#scopes.get(toolCallId);
    this.#scopes.delete(toolCallId);
    return scope ? { calls: scope.recorder.snapshot(), usage: scope.recorder.usage } : undefined;
  }

  clear(): void {
    this.#scopes.clear();
  }
}
