/**
 * Runs a prompt to its end. `prompt` resolves once the agent has accepted a message; a run
 * goes on after that (tool calls, steering, follow-ups, auto-retries, threshold compaction)
 * until the agent settles. parley says so with `agent_settled` and keeps `get_state.isStreaming`
 * true until then; pi 0.73 writes no such record and reports `isStreaming: false` between retry
 * attempts, so against pi a run ends at an `agent_end` without `willRetry` that no
 * `auto_retry_start` follows and after which `get_state` reports the agent idle.
 */
import type { AgentMessage, AssistantMessage, ImageContent, StreamingBehavior } from "@parley/protocol";
import type { Disposable } from "@parley/protocol/disposable";
import { ConnectionClosedError, RequestAbortedError, type CloseInfo } from "./errors.js";
import type { AgentEventMap, AgentEventType, AgentRecord } from "./records.js";
import type { RequestOptions } from "./requests.js";

/** One event of a run, as the agent wrote it (not validated, as for `client.on`). */
export type RunEvent = AgentEventMap[AgentEventType];

export interface RunOptions {
  images?: ImageContent[];
  /** Needed when the agent is already running: the message steers it or follows up, and the run lasts until it settles. */
  streamingBehavior?: StreamingBehavior;
  /** Aborting sends `abort` to the agent; the run rejects with RequestAbortedError once the agent has stopped. */
  signal?: AbortSignal;
  /** Each event of the run as it arrives. */
  onEvent?: (event: RunEvent) => void;
}

export interface RunResult {
  /** Every message that ended during the run, in order: the prompt, replies, tool results, steering and follow-ups. */
  messages: AgentMessage[];
  /** Text of the last assistant message ("" when it had none), or null when the run produced no assistant message. */
  text: string | null;
  /** The last assistant message (its `stopReason` says whether it ended in an error), if any. */
  lastAssistant: AssistantMessage | undefined;
}

/** A run being streamed: iterate its events; `result` resolves once the agent settles. */
export interface RunStream extends AsyncIterable<RunEvent> {
  readonly result: Promise<RunResult>;
}

/** What the run helpers need from the client. */
export interface RunHost {
  onAny(listener: (record: AgentRecord) => void): Disposable;
  prompt(message: string, options: { images?: ImageContent[]; streamingBehavior?: StreamingBehavior; signal?: AbortSignal }): Promise<unknown>;
  abort(options?: RequestOptions): Promise<void>;
  /** Sends get_state; `id` is the request's id, which its response echoes. */
  requestState(options?: RequestOptions): { id: string | undefined; response: Promise<{ isStreaming: boolean }> };
  /** Calls `listener` once the connection has ended (at once if it has already). */
  onClosed(listener: (info: CloseInfo) => void): Disposable;
  /** pi: an auto_retry_start was seen and its retry has not started yet. */
  retryPending(): boolean;
  /** Whether the agent writes `agent_settled` (parley does, pi does not). */
  emitsSettled(options?: RequestOptions): Promise<boolean>;
}

/**
 * Resolves when the agent is idle: nothing runs and nothing will start by itself. Returns at
 * once when it is idle already. No timeout of its own; `signal` rejects the wait (the agent is not told).
 */
export async function waitForIdle(host: RunHost, options: { signal?: AbortSignal } = {}): Promise<void> {
  const { signal } = options;
  const settled = await host.emitsSettled({ signal });
  for (;;) {
    const issued = host.requestState({ signal });
    // Records are ordered: what was written before get_state's response is reflected in it, and
    // the watch counts only what comes after that response (records arrive on later ticks, so
    // subscribing right after sending misses nothing).
    const watch = watchAfter(host, issued.id, settled ? (r) => r.type === "agent_settled" : isFinalAgentEnd, signal);
    try {
      const state = await issued.response;
      if (!state.isStreaming && (settled || !host.retryPending())) return;
      await watch.next;
      if (settled) return;
      // pi: an agent_end without willRetry may still be followed by a retry or a queued prompt; ask again.
    } finally {
      watch.dispose();
    }
  }
}

/** Sends a prompt and collects its run until the agent settles. */
export function run(host: RunHost, message: string, options: RunOptions = {}): Promise<RunResult> {
  const { images, streamingBehavior, signal, onEvent } = options;
  if (signal?.aborted) return Promise.reject(new RequestAbortedError("prompt", undefined, signal.reason));
  const messages: AgentMessage[] = [];
  // Subscribed before the prompt is written, so no event of the run is missed.
  const subscription = host.onAny((record) => {
    if (record.type === "response") return;
    if (record.type === "message_end" && isObject(record["message"])) messages.push(record["message"] as unknown as AgentMessage);
    // A retry replaces the failed reply in the conversation: it is not one of the run's messages.
    if (record.type === "auto_retry_start" && isFailedReply(messages.at(-1))) messages.pop();
    onEvent?.(record as unknown as RunEvent);
  });
  let aborting: Promise<void> | undefined;
  const onAbort = (): void => {
    aborting ??= host.abort().catch(() => {});
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  const work = (async (): Promise<RunResult> => {
    try {
      await host.prompt(message, { ...(images && { images }), ...(streamingBehavior && { streamingBehavior }) });
      await waitForIdle(host, {});
    } finally {
      signal?.removeEventListener("abort", onAbort);
      subscription.dispose();
    }
    if (aborting !== undefined) {
      await aborting;
      throw new RequestAbortedError("prompt", undefined, signal?.reason);
    }
    const lastAssistant = [...messages].reverse().find((m): m is AssistantMessage => m.role === "assistant");
    return { messages, text: lastAssistant === undefined ? null : textOf(lastAssistant), lastAssistant };
  })();
  return work;
}

/** Like run(), as an async iterator of the run's events; the iteration ends when the agent settles. */
export function stream(host: RunHost, message: string, options: Omit<RunOptions, "onEvent"> = {}): RunStream {
  const queue: RunEvent[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  const result = run(host, message, {
    ...options,
    onEvent: (event) => {
      queue.push(event);
      wake?.();
    },
  });
  const finished = result.then(
    () => {},
    () => {},
  );
  void finished.then(() => {
    done = true;
    wake?.();
  });
  return {
    result,
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (queue.length > 0) yield queue.shift() as RunEvent;
        if (done) {
          await result; // a failed run ends the loop with its error
          return;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    },
  };
}

/** The text of an assistant message: its text parts, joined. */
export function textOf(message: AssistantMessage): string {
  return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

interface Watch {
  /** Resolves with the first matching record after the response to `afterId`. */
  readonly next: Promise<void>;
  dispose(): void;
}

function watchAfter(host: RunHost, afterId: string | undefined, match: (record: AgentRecord) => boolean, signal: AbortSignal | undefined): Watch {
  let armed = false;
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const next = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  next.catch(() => {});
  const subscription = host.onAny((record) => {
    if (record.type === "response") {
      // Armed by the response record itself, not when its promise settles: a record in the
      // same chunk is routed before the awaiting code runs.
      if (record["id"] === afterId) armed = true;
      return;
    }
    if (armed && match(record)) resolve();
  });
  const onAbort = (): void => reject(new RequestAbortedError("waitForIdle", undefined, signal?.reason));
  signal?.addEventListener("abort", onAbort, { once: true });
  // The agent that exits mid-run never settles: the wait ends with the connection.
  const closed = host.onClosed((info) => reject(new ConnectionClosedError(info)));
  return {
    next,
    dispose: () => {
      subscription.dispose();
      closed.dispose();
      signal?.removeEventListener("abort", onAbort);
    },
  };
}

function isFinalAgentEnd(record: AgentRecord): boolean {
  return record.type === "agent_end" && record["willRetry"] !== true;
}

function isFailedReply(message: AgentMessage | undefined): boolean {
  return message !== undefined && message.role === "assistant" && message.stopReason === "error";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
