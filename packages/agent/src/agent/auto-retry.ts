/**
 * Automatic retry after a transient provider error (overloaded, rate limit, 5xx, network).
 *
 * After a run whose last reply failed with such an error: `auto_retry_start` (attempt n of
 * `maxAttempts`, with the delay), a wait of `baseDelayMs * 2^(n-1)` (2s, 4s, 8s by default; at most
 * `maxDelayMs`, settings' `retry.maxAgentDelayMs`), the
 * failed reply leaves the agent's context (the session keeps it), and the run continues from
 * there. `auto_retry_end` closes the cycle: `success: true` as soon as a retried call answers,
 * or `success: false` with `finalError` when the attempts run out, the error is no longer a
 * transient one, or the retry is aborted ("Retry cancelled": `abort_retry`, or `abort` while
 * waiting). A context overflow is not retried here: compaction handles it.
 */
import type { AgentEvent, AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { AutoRetryEndEvent, AutoRetryStartEvent } from "@parley/protocol";
import { piAiIfLoaded, loadPiAi, type PiAi } from "../models/pi-ai.js";
import { errorMessage } from "../error-text.js";
import { realTimer, type SetTimer } from "../timers.js";

/** What a retry needs from the agent (AgentSession is one). */
export interface RetryHost {
  /** The context window a reply is judged against: a context overflow is compaction's, not a retry's. */
  contextWindowFor(message: AssistantMessage): number;
  /** The context the next model call sees: a failed reply leaves it before the retry. */
  messages: AgentMessage[];
  emit(record: AutoRetryStartEvent | AutoRetryEndEvent): void;
  /** The loop's events: a retry watches for the next reply. */
  subscribe(listener: (event: AgentEvent) => void): () => void;
  /** Continues the run from the current context, retrying `failed`. */
  continueRun(failed: AssistantMessage): Promise<void>;
}

export interface AutoRetryOptions {
  /** Retries after the first failure (default 3). */
  maxAttempts?: number;
  /** Wait before the first retry; doubles for each further one (default 2000 ms). */
  baseDelayMs?: number;
  /** The longest wait before a retry (settings' `retry.maxAgentDelayMs`, default 60,000 ms). */
  maxDelayMs?: number;
  /** Starts the wait before a retry; returns its cancel. Default: setTimeout. Tests pass a fake clock's. */
  setTimer?: SetTimer;
}

/**
 * Failures worth trying again as they are, as the newest pi classifies them (pi-ai's retry
 * rules): a provider overloaded or rate-limited, an HTTP 429/5xx, a network or transport failure,
 * a stream cut short, a provider asking for a retry.
 */
const TRANSIENT = new RegExp(
  [
    "overloaded",
    "server_busy",
    "servers are currently busy",
    "currently experiencing high demand",
    "model is at capacity",
    "rate.?limit",
    "too many requests",
    // A status code on its own, not inside a request id or a byte count.
    "(?<![a-z0-9])(?:429|500|502|503|504|520|524)(?![a-z0-9])",
    "service.?(?:is.?)?(?:temporarily.?)?unavailable",
    "server.?error",
    "internal.?error",
    "provider.?returned.?(?:an.?)?error",
    "exceeded request buffer limit while retrying upstream",
    "unable to forward upstream",
    "upstream.?request.?failed",
    "upstream_stream_read_error",
    "stream was interrupted",
    "http/?2 stream failed",
    "network.?error",
    "connection.?(?:error|refused|lost|closed)",
    "other side closed",
    "fetch failed",
    "request to \\S+ failed, reason:",
    "getaddrinfo",
    "(?<![a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?![a-z0-9_])",
    "connection reset by peer",
    "ENOTFOUND",
    "EAI_AGAIN",
    "upstream.?connect",
    "reset before headers",
    "socket hang up",
    "socket connection was closed",
    "timed? out",
    "timeout",
    "terminated",
    "websocket.?(?:closed|error|connection.?limit.?reached)",
    "ended without",
    "stream ended before (?:message_stop|a terminal response event)",
    "http2 request did not get a response",
    "stream disconnected before completion",
    "cut short after the reply had begun",
    "pending stream has been canceled",
    "retry delay",
    "you can retry your request",
    "try your request again",
    "please retry your request",
    "ResourceExhausted",
    "subscription_sharing_(?:usage|user)_unavailable",
  ].join("|"),
  "i",
);

/**
 * Limits a retry cannot lift (quota, budget, billing, a plan's usage limit), even when sent as a
 * 429: retrying only delays the error the user must act on, as in the newest pi.
 */
const HARD_LIMIT = new RegExp(
  [
    "GoUsageLimitError",
    "FreeUsageLimitError",
    "Monthly usage limit reached",
    "available balance",
    "insufficient_quota",
    "out of budget",
    "quota exceeded",
    "billing",
    "subscription_sharing_usage_limit_exceeded",
    "subscription_sharing_workplace_individual_usage_limit_exceeded",
    '"code"\\s*:\\s*"?1308(?![0-9])',
  ].join("|"),
  "i",
);

export const RETRY_CANCELLED = "Retry cancelled";

function formatSeconds(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}

/** Whether a failed reply is worth retrying as is (a context overflow is not: compaction is the cure). */
export function isRetryableError(message: AssistantMessage, contextWindow: number, pi: PiAi | undefined = piAiIfLoaded()): boolean {
  if (pi?.isContextOverflow(message, contextWindow)) return false;
  return isTransientError(message);
}

/** Whether a failed reply's error is a transient one (pi-ai's classification, overflow not considered). */
export function isTransientError(message: AssistantMessage): boolean {
  if (message.stopReason !== "error" || !message.errorMessage) return false;
  return !HARD_LIMIT.test(message.errorMessage) && TRANSIENT.test(message.errorMessage);
}

export class AutoRetry {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly #setTimer: SetTimer;
  /** The retry cycle in progress (from the first auto_retry_start to auto_retry_end). */
  #cycle: AbortController | undefined;

  constructor(options: AutoRetryOptions = {}) {
    this.maxAttempts = Math.max(0, options.maxAttempts ?? 3);
    this.baseDelayMs = Math.max(0, options.baseDelayMs ?? 2000);
    this.maxDelayMs = Math.max(0, options.maxDelayMs ?? 60_000);
    this.#setTimer = options.setTimer ?? realTimer;
  }

  get isRetrying(): boolean {
    return this.#cycle !== undefined;
  }

  /** Called after each run; true when it retried (so no compaction check follows). */
  async afterRun(agent: RetryHost, last: AssistantMessage): Promise<boolean> {
    if (this.#cycle || this.maxAttempts === 0) return false;
    const pi = await loadPiAi();
    if (!isRetryableError(last, agent.contextWindowFor(last), pi)) return false;

    const cycle = new AbortController();
    this.#cycle = cycle;
    let failed = last;
    let attempt = 0;
    /** The waits before the retries of this cycle, in all (said when it gives up). */
    let waitedMs = 0;
    const gaveUp = (error: string): string => `${error} (retried ${attempt} time${attempt === 1 ? "" : "s"}, waiting ${formatSeconds(waitedMs)} in all)`;
    try {
      for (;;) {
        attempt++;
        const delayMs = Math.min(this.baseDelayMs * 2 ** (attempt - 1), this.maxDelayMs);
        waitedMs += delayMs;
        agent.emit({ type: "auto_retry_start", attempt, maxAttempts: this.maxAttempts, delayMs, errorMessage: failed.errorMessage ?? "Unknown error" });
        // The failed reply stays in the session's history, not in what the model sees next.
        const messages = agent.messages;
        if (messages.at(-1) === failed || messages.at(-1)?.role === "assistant") agent.messages = messages.slice(0, -1);

        if (!(await sleep(delayMs, cycle.signal, this.#setTimer))) {
          agent.emit({ type: "auto_retry_end", success: false, attempt, finalError: RETRY_CANCELLED });
          return true;
        }
        const outcome = await this.#attempt(agent, attempt, failed);
        if (outcome.kind === "success") {
          // A later call of the same run may fail again: that starts a new cycle, as in pi.
          const final = [...agent.messages].reverse().find((m): m is AssistantMessage => m.role === "assistant");
          if (!final || cycle.signal.aborted || !isRetryableError(final, agent.contextWindowFor(final), pi)) return true;
          failed = final;
          attempt = 0;
          continue;
        }
        if (outcome.kind === "stopped") {
          agent.emit({ type: "auto_retry_end", success: false, attempt, finalError: outcome.error });
          return true;
        }
        failed = outcome.message;
        if (cycle.signal.aborted) {
          agent.emit({ type: "auto_retry_end", success: false, attempt, finalError: RETRY_CANCELLED });
          return true;
        }
        if (!isRetryableError(failed, agent.contextWindowFor(failed), pi)) {
          agent.emit({ type: "auto_retry_end", success: false, attempt, finalError: gaveUp(failed.errorMessage ?? "Unknown error") });
          return true;
        }
        if (attempt >= this.maxAttempts) {
          agent.emit({ type: "auto_retry_end", success: false, attempt, finalError: gaveUp(failed.errorMessage ?? "Unknown error") });
          return true;
        }
      }
    } finally {
      if (this.#cycle === cycle) this.#cycle = undefined;
    }
  }

  /** abort_retry: cancels the wait and any further attempt (a call already under way finishes). */
  abort(): void {
    this.#cycle?.abort();
  }

  /**
   * One continuation. Success is announced when the first reply that did not fail ends (before
   * the run's agent_end), like pi does.
   */
  async #attempt(
    agent: RetryHost,
    attempt: number,
    failed: AssistantMessage,
  ): Promise<{ kind: "success" } | { kind: "failed"; message: AssistantMessage } | { kind: "stopped"; error: string }> {
    let succeeded = false;
    let lastReply: AssistantMessage | undefined;
    const unsubscribe = agent.subscribe((event: AgentEvent) => {
      if (event.type !== "message_end" || event.message.role !== "assistant") return;
      lastReply = event.message;
      if (!succeeded && event.message.stopReason !== "error" && event.message.stopReason !== "aborted") {
        succeeded = true;
        agent.emit({ type: "auto_retry_end", success: true, attempt });
      }
    });
    try {
      await agent.continueRun(failed);
    } catch (error) {
      if (!succeeded) return { kind: "stopped", error: errorMessage(error) };
    } finally {
      unsubscribe();
    }
    if (succeeded) return { kind: "success" };
    if (!lastReply) return { kind: "stopped", error: "The retried request produced no reply" };
    if (lastReply.stopReason === "aborted") return { kind: "stopped", error: RETRY_CANCELLED };
    return { kind: "failed", message: lastReply };
  }
}

/** Resolves true after `ms`, or false as soon as the signal aborts. */
export function sleep(ms: number, signal: AbortSignal, setTimer: SetTimer): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const cancel = setTimer(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = (): void => {
      cancel();
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
