/**
 * Retries of a summary call (compaction, branch summary) after a transient provider error, as the
 * newest pi makes them: the settings' `retry` budget and backoff (`baseDelayMs * 2^(n-1)`, at most
 * `maxAgentDelayMs`), the same transient-error rules as the agent's own retries, and three wire
 * records around them: `summarization_retry_scheduled` before each wait,
 * `summarization_retry_attempt_start` (saying what is summarised) after it, and one
 * `summarization_retry_finished` when a loop that retried ends, however it ends. A deterministic
 * error, an exhausted budget or an abort returns the last reply for the caller to judge.
 */
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SummarizationRetryAttemptStartEvent, SummarizationRetryFinishedEvent, SummarizationRetryScheduledEvent } from "@parley/protocol";
import { realTimer, type SetTimer } from "../timers.js";
import { isTransientError, sleep } from "./auto-retry.js";

/** What is being summarised, as `summarization_retry_attempt_start` says it. */
export type SummarySource = Omit<SummarizationRetryAttemptStartEvent, "type">;

export type SummaryRetryRecord = SummarizationRetryScheduledEvent | SummarizationRetryAttemptStartEvent | SummarizationRetryFinishedEvent;

/** The settings' `retry` as a summary call uses it, and where its records go. */
export interface SummaryRetry {
  /** settings' `retry.enabled` (and `set_auto_retry`): off means one call, as it is. */
  enabled: boolean;
  /** Retries after the first failure. */
  maxRetries: number;
  baseDelayMs: number;
  /** The longest wait before a retry (`retry.maxAgentDelayMs`). */
  maxDelayMs: number;
  emit(record: SummaryRetryRecord): void;
  /** Starts a wait; tests pass a fake clock's. Default: setTimeout. */
  setTimer?: SetTimer;
}

/**
 * Calls `call` until it answers, fails for good, runs out of retries or `signal` aborts. An abort
 * during a wait returns the last failed reply marked aborted, so the caller treats every abort
 * the same way.
 */
export async function retrySummaryCall(
  call: () => Promise<AssistantMessage>,
  retry: SummaryRetry | undefined,
  source: SummarySource,
  signal: AbortSignal,
): Promise<AssistantMessage> {
  const maxRetries = retry?.enabled ? Math.max(0, retry.maxRetries) : 0;
  let retried = false;
  const finish = (): void => {
    if (retried) retry?.emit({ type: "summarization_retry_finished" });
  };
  for (let attempt = 0; ; ) {
    const reply = await call();
    if (reply.stopReason !== "error" || attempt >= maxRetries || !retry || !isTransientError(reply)) {
      finish();
      return reply;
    }
    attempt++;
    retried = true;
    const delayMs = Math.min(retry.baseDelayMs * 2 ** (attempt - 1), retry.maxDelayMs);
    retry.emit({ type: "summarization_retry_scheduled", attempt, maxAttempts: maxRetries, delayMs, errorMessage: reply.errorMessage || "Unknown error" });
    if (!(await sleep(delayMs, signal, retry.setTimer ?? realTimer))) {
      finish();
      const { errorMessage: _dropped, ...rest } = reply;
      return { ...rest, stopReason: "aborted" };
    }
    retry.emit({ type: "summarization_retry_attempt_start", ...source });
  }
}
