/**
 * Shared streaming for parley's local models (script, offline): turn a planned reply (text and
 * tool calls) into a pi-ai `AssistantMessageEventStream` that looks like a real provider's:
 *
 *   start → text_start → text_delta × n → text_end → (toolcall_start → toolcall_delta × n →
 *   toolcall_end) × k → done(stop | toolUse)
 *
 * or `error` with stopReason "aborted" as soon as `options.signal` fires (checked before every
 * delta; the stream yields to the event loop between deltas, so an abort arriving on stdin is seen
 * mid-reply). Each event's `partial` is a snapshot: later deltas never mutate an earlier one.
 * Usage is estimated at ~4 characters per token (input from the whole context, output growing
 * with each delta) and priced with pi-ai's `calculateCost`, so stats paths see real numbers.
 */
import type {
  Api,
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageEventStream,
  Context,
  Message,
  Model,
  SimpleStreamOptions,
  TextContent,
  Tool,
  ToolCall,
  Usage,
} from "@earendil-works/pi-ai";
import type { PiAiCore } from "./pi-ai.js";
import { nodeCrypto } from "../lazy-node.js";
import { errorMessage } from "../error-text.js";

export interface PlannedToolCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Generated when absent. */
  id?: string;
}

/** What a local model wants to say: optional text first, then tool calls. */
export interface PlannedReply {
  text?: string;
  toolCalls?: PlannedToolCall[];
}

export interface ReplyStreamSettings {
  /** Pause between deltas, in milliseconds. 0 (default) only yields to the event loop. */
  delayMs?: number;
}

const CHARS_PER_TOKEN = 4;
/** pi-ai's words for an aborted request. */
export const ABORTED_MESSAGE = "Request was aborted";

/** Rough token count for a piece of text (never negative, 0 for ""). */
export function estimateTokens(chars: number): number {
  return Math.ceil(Math.max(0, chars) / CHARS_PER_TOKEN);
}

/**
 * The tools a request declares: its own list (a `Context` with `tools`), or those its system
 * messages add and remove, replayed in order (the transcript form pi-ai 1.6 hands providers).
 */
export function requestTools(context: Context): Tool[] {
  if (context.tools) return context.tools;
  const tools = new Map<string, Tool>();
  for (const message of context.messages) {
    if (message.role !== "system") continue;
    for (const tool of message.toolsRemoved ?? []) tools.delete(tool.name);
    for (const tool of message.toolsAdded ?? []) tools.set(tool.name, tool);
  }
  return [...tools.values()];
}

/** Characters the model "reads": system prompt, every message, tool definitions. */
export function contextChars(context: Context): number {
  let n = context.systemPrompt?.length ?? 0;
  for (const message of context.messages) n += messageChars(message);
  for (const tool of requestTools(context)) {
    n += tool.name.length + tool.description.length + safeJsonLength(tool.parameters);
  }
  return n;
}

function messageChars(message: Message): number {
  const content = message.content;
  if (typeof content === "string") return content.length;
  let n = 0;
  for (const block of content) {
    switch (block.type) {
      case "text":
        n += block.text.length;
        break;
      case "thinking":
        n += block.thinking.length;
        break;
      case "toolCall":
        n += block.name.length + safeJsonLength(block.arguments);
        break;
      case "image":
        n += 3000; // providers bill images by size; a flat estimate is enough here
        break;
    }
  }
  return n;
}

function safeJsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}

/**
 * Split text into word-sized deltas ("Hello", " world", "!"), like a real model's tokens.
 * Short texts with fewer than three words are split by code point into up to three pieces so
 * even a one-word reply streams as several deltas. Concatenating the pieces gives the text back.
 */
export function chunkText(text: string): string[] {
  return [...textChunks(text)];
}

/** chunkText's pieces one at a time: a long reply is never split into an array of millions of words. */
export function* textChunks(text: string): Generator<string> {
  if (text === "") return;
  const word = /\s*\S+/g;
  let first: string | undefined;
  let second: string | undefined;
  let count = 0;
  let end = 0;
  // Held back by two: the last word takes trailing whitespace, and fewer than three words split by code point.
  for (let match = word.exec(text); match !== null; match = word.exec(text)) {
    end = word.lastIndex;
    if (count >= 2) yield first as string;
    first = second;
    second = match[0];
    count++;
  }
  if (count >= 3) {
    yield first as string;
    yield (second as string) + text.slice(end);
    return;
  }
  yield* shortChunks(text);
}

/** A text of fewer than three words, in up to three pieces by code point. */
function shortChunks(text: string): string[] {
  const points = Array.from(text);
  const pieces = Math.min(3, points.length);
  const size = Math.ceil(points.length / pieces);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
  return out;
}

/** Split a tool call's JSON arguments into a few partial-JSON deltas (at least one). */
export function chunkJson(json: string, size = 16): string[] {
  const points = Array.from(json);
  const pieceSize = Math.max(1, Math.min(size, Math.ceil(points.length / 3)));
  const out: string[] = [];
  for (let i = 0; i < points.length; i += pieceSize) out.push(points.slice(i, i + pieceSize).join(""));
  return out.length > 0 ? out : [json];
}

export function generateToolCallId(): string {
  return `call_${nodeCrypto().randomBytes(9).toString("base64url")}`;
}

/** A fresh all-zero usage (a new object each time: usages are mutated while streaming). */
export function emptyUsage(): Usage {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/** Resolve after `ms` (or on the next macrotask turn for 0), early if the signal aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      signal?.removeEventListener("abort", done);
      if (timer !== undefined) clearTimeout(timer);
      if (immediate !== undefined) clearImmediate(immediate);
      resolve();
    };
    let timer: NodeJS.Timeout | undefined;
    let immediate: NodeJS.Immediate | undefined;
    if (ms > 0) timer = setTimeout(done, ms);
    else immediate = setImmediate(done);
    signal?.addEventListener("abort", done, { once: true });
  });
}

class Aborted extends Error {}

/** Events a local model may push ahead of what its consumer has taken. */
const LOOKAHEAD = 4;

/**
 * Lets the producer of `stream` keep pace with its consumer: the returned function resolves once
 * the consumer has taken all but a few of the events pushed so far (at once if it has). Like a
 * provider reading a socket, the model then produces no faster than the agent loop takes its
 * events, which it does only while the client reads (agent-session.ts). A stream nobody iterates
 * (one whose result() alone is awaited) is not paced.
 */
function paceByConsumer(
  stream: AssistantMessageEventStream,
  signal: AbortSignal | undefined,
): { pushed(): void; ready(): Promise<void> | undefined; end(): void } {
  let pushed = 0;
  let pulled = 0;
  let iterating = false;
  let finished = false;
  let wake: (() => void) | undefined;
  const release = (): void => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  signal?.addEventListener("abort", release, { once: true });
  const iterate = stream[Symbol.asyncIterator].bind(stream);
  stream[Symbol.asyncIterator] = (): AsyncIterator<AssistantMessageEvent> => {
    const inner = iterate();
    iterating = true;
    return {
      next: () => {
        pulled++;
        release();
        return inner.next();
      },
      return: (value?: unknown) => {
        finished = true;
        release();
        return inner.return ? inner.return(value) : Promise.resolve({ done: true, value: undefined });
      },
    };
  };
  return {
    pushed: () => void pushed++,
    // The run's signal outlives this call (one per prompt, many model calls): let go of it.
    end: () => signal?.removeEventListener("abort", release),
    ready: () => {
      if (!iterating || finished || signal?.aborted || pushed - pulled < LOOKAHEAD) return undefined;
      return new Promise<void>((resolve) => (wake = resolve));
    },
  };
}

/**
 * Create the event stream for one model call. `plan` runs once, before any event (so a script
 * turn is consumed per call even when the call is aborted early); if it throws, the stream ends
 * with an `error` event carrying the message.
 */
export function streamPlannedReply(
  pi: PiAiCore,
  model: Model<Api>,
  context: Context,
  options: SimpleStreamOptions | undefined,
  plan: () => PlannedReply | Promise<PlannedReply>,
  settings: ReplyStreamSettings = {},
): AssistantMessageEventStream {
  const stream = pi.createAssistantMessageEventStream();
  const signal = options?.signal;
  const pace = paceByConsumer(stream, signal);
  const push = (event: AssistantMessageEvent): void => {
    stream.push(event);
    pace.pushed();
    if (event.type === "done" || event.type === "error") pace.end();
  };
  const delayMs = settings.delayMs ?? 0;
  const output: AssistantMessage = {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: "stop",
    timestamp: Date.now(),
  };
  const inputTokens = estimateTokens(contextChars(context));
  let outputChars = 0;

  const setUsage = (): void => {
    const produced = estimateTokens(outputChars);
    const usage: Usage = { ...emptyUsage(), input: inputTokens, output: produced, totalTokens: inputTokens + produced };
    usage.cost = { ...pi.calculateCost(model, usage) };
    output.usage = usage;
  };
  const snapshot = (): AssistantMessage => ({ ...output, content: [...output.content] });
  const step = async (): Promise<void> => {
    for (let ready = pace.ready(); ready !== undefined; ready = pace.ready()) await ready;
    await pause(delayMs, signal);
    if (signal?.aborted) throw new Aborted();
  };

  const run = async (): Promise<void> => {
    let reply: PlannedReply;
    try {
      reply = await plan();
    } catch (error) {
      return fail("error", errorMessage(error));
    }
    try {
      if (signal?.aborted) throw new Aborted();
      setUsage();
      push({ type: "start", partial: snapshot() });

      const text = reply.text ?? "";
      if (text !== "") {
        const index = output.content.length;
        let block: TextContent = { type: "text", text: "" };
        output.content.push(block);
        push({ type: "text_start", contentIndex: index, partial: snapshot() });
        let streamed = 0;
        for (const delta of textChunks(text)) {
          await step();
          streamed += delta.length;
          // A slice of the reply, not the previous text plus the delta: a long reply would
          // otherwise build a chain of millions of string pieces until it is flattened.
          block = { ...block, text: text.slice(0, streamed) };
          output.content[index] = block;
          outputChars += delta.length;
          setUsage();
          push({ type: "text_delta", contentIndex: index, delta, partial: snapshot() });
        }
        push({ type: "text_end", contentIndex: index, content: block.text, partial: snapshot() });
      }

      const calls = reply.toolCalls ?? [];
      for (const call of calls) {
        const index = output.content.length;
        const id = call.id ?? generateToolCallId();
        output.content.push({ type: "toolCall", id, name: call.name, arguments: {} });
        outputChars += call.name.length;
        setUsage();
        push({ type: "toolcall_start", contentIndex: index, partial: snapshot() });
        const json = JSON.stringify(call.arguments);
        for (const delta of chunkJson(json)) {
          await step();
          outputChars += delta.length;
          setUsage();
          push({ type: "toolcall_delta", contentIndex: index, delta, partial: snapshot() });
        }
        const finished: ToolCall = { type: "toolCall", id, name: call.name, arguments: JSON.parse(json) as ToolCall["arguments"] };
        output.content[index] = finished;
        push({ type: "toolcall_end", contentIndex: index, toolCall: finished, partial: snapshot() });
      }

      // One last look: an abort that lands after the final delta still wins, as with a real provider
      // whose response had not finished yet.
      if (signal?.aborted) throw new Aborted();
      output.stopReason = calls.length > 0 ? "toolUse" : "stop";
      const reason = output.stopReason;
      const final = snapshot();
      push({ type: "done", reason, message: final });
      stream.end(final);
    } catch (error) {
      if (error instanceof Aborted) return fail("aborted", ABORTED_MESSAGE);
      fail("error", errorMessage(error));
    }
  };

  const fail = (reason: "aborted" | "error", message: string): void => {
    output.stopReason = reason;
    output.errorMessage = message;
    const final = snapshot();
    push({ type: "error", reason, error: final });
    stream.end(final);
  };

  void run();
  return stream;
}

/** The Model object of one of parley's local models: free, no reasoning, 128k context. */
export function localModel(fields: { id: string; name: string; api: string; provider: string; baseUrl: string }): Model<Api> {
  return {
    ...fields,
    api: fields.api as Api,
    reasoning: false,
    input: ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128_000,
    maxTokens: 16_384,
  };
}
