/**
 * Retries of a failed summary call (compaction, branch summary), as pi 1.6 makes them: the
 * settings' retry budget and backoff, the three summarization_retry_* records in pi's order, an
 * abort during the wait, and the final failure. Time is a fake clock's.
 */
import { fauxAssistantMessage, registerFauxProvider } from "@earendil-works/pi-ai/compat";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { CompactionCancelledError, completeSummary, type SummaryHost } from "../src/agent/summary-call.js";
import { retrySummaryCall, type SummaryRetry, type SummaryRetryRecord } from "../src/agent/summary-retry.js";
import { FakeClock } from "./helpers/fake-clock.js";

const providers: { unregister(): void }[] = [];
afterEach(() => {
  for (const p of providers.splice(0)) p.unregister();
});

const failed = (errorMessage: string): AssistantMessage => fauxAssistantMessage([], { stopReason: "error", errorMessage });

/** pi's defaults (3 retries, 2 s doubling, at most 60 s) on a fake clock, recording what is emitted. */
function policy(overrides: Partial<SummaryRetry> = {}): { retry: SummaryRetry; records: SummaryRetryRecord[]; clock: FakeClock } {
  const clock = new FakeClock();
  const records: SummaryRetryRecord[] = [];
  return {
    retry: { enabled: true, maxRetries: 3, baseDelayMs: 2000, maxDelayMs: 60_000, emit: (r) => records.push(r), setTimer: clock.setTimer, ...overrides },
    records,
    clock,
  };
}

/** A call answering with `replies` in turn, counting the calls. */
function scripted(replies: AssistantMessage[]): { call: () => Promise<AssistantMessage>; calls: () => number } {
  let n = 0;
  return {
    call: async () => {
      const reply = replies[Math.min(n, replies.length - 1)];
      n++;
      if (!reply) throw new Error("no reply scripted");
      return reply;
    },
    calls: () => n,
  };
}

/** Lets each pending wait run out as soon as it is set. */
async function drive(clock: FakeClock, done: Promise<unknown>): Promise<void> {
  let finished = false;
  const end = (): void => {
    finished = true;
  };
  done.then(end, end);
  while (!finished) {
    await Promise.race([clock.whenPending(), done.catch(() => undefined)]);
    if (clock.pending > 0) clock.advance(clock.delays.at(-1) ?? 0);
  }
}

describe("retrying a summary call", () => {
  it("retries a transient failure after 2 s: scheduled, attempt_start (with what is summarised), finished", async () => {
    const { retry, records, clock } = policy();
    const { call, calls } = scripted([failed("503 Service Unavailable"), fauxAssistantMessage("the summary")]);
    const result = retrySummaryCall(call, retry, { source: "compaction", reason: "threshold" }, new AbortController().signal);
    await drive(clock, result);
    expect((await result).stopReason).toBe("stop");
    expect(calls()).toBe(2);
    expect(clock.delays).toEqual([2000]);
    expect(records).toEqual([
      { type: "summarization_retry_scheduled", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: "503 Service Unavailable" },
      { type: "summarization_retry_attempt_start", source: "compaction", reason: "threshold" },
      { type: "summarization_retry_finished" },
    ]);
  });

  it("gives up after maxRetries with doubling waits (capped by maxAgentDelayMs) and returns the last failure", async () => {
    const { retry, records, clock } = policy({ maxDelayMs: 5000 });
    const { call, calls } = scripted([failed("429 Too Many Requests")]);
    const result = retrySummaryCall(call, retry, { source: "branchSummary" }, new AbortController().signal);
    await drive(clock, result);
    expect(await result).toMatchObject({ stopReason: "error", errorMessage: "429 Too Many Requests" });
    expect(calls()).toBe(4);
    expect(clock.delays).toEqual([2000, 4000, 5000]);
    expect(records.map((r) => r.type)).toEqual([
      "summarization_retry_scheduled",
      "summarization_retry_attempt_start",
      "summarization_retry_scheduled",
      "summarization_retry_attempt_start",
      "summarization_retry_scheduled",
      "summarization_retry_attempt_start",
      "summarization_retry_finished",
    ]);
    expect(records.filter((r) => r.type === "summarization_retry_scheduled").map((r) => [r.attempt, r.maxAttempts])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(records[1]).toEqual({ type: "summarization_retry_attempt_start", source: "branchSummary" });
  });

  it("does not retry a deterministic error, a quota limit, a success or an abort, and says nothing", async () => {
    for (const reply of [
      failed("401 invalid x-api-key"),
      failed("429 insufficient_quota: you exceeded your current quota"),
      fauxAssistantMessage("fine"),
      fauxAssistantMessage([], { stopReason: "aborted" }),
    ]) {
      const { retry, records, clock } = policy();
      const { call, calls } = scripted([reply, fauxAssistantMessage("second")]);
      expect(await retrySummaryCall(call, retry, { source: "branchSummary" }, new AbortController().signal)).toBe(reply);
      expect(calls()).toBe(1);
      expect(clock.delays).toEqual([]);
      expect(records).toEqual([]);
    }
  });

  it("makes one call when retries are off (retry.enabled false, or set_auto_retry false)", async () => {
    const { retry, records } = policy({ enabled: false });
    const { call, calls } = scripted([failed("503 Service Unavailable"), fauxAssistantMessage("second")]);
    expect((await retrySummaryCall(call, retry, { source: "branchSummary" }, new AbortController().signal)).stopReason).toBe("error");
    expect(calls()).toBe(1);
    expect(records).toEqual([]);
  });

  it("an abort during the wait ends the loop at once: finished, and the reply comes back aborted", async () => {
    const { retry, records, clock } = policy();
    const { call, calls } = scripted([failed("503 Service Unavailable"), fauxAssistantMessage("second")]);
    const abort = new AbortController();
    const result = retrySummaryCall(call, retry, { source: "compaction", reason: "manual" }, abort.signal);
    await clock.whenPending();
    abort.abort();
    const reply = await result;
    expect(reply.stopReason).toBe("aborted");
    expect(reply.errorMessage).toBeUndefined();
    expect(calls()).toBe(1);
    expect(clock.pending).toBe(0);
    expect(records.map((r) => r.type)).toEqual(["summarization_retry_scheduled", "summarization_retry_finished"]);
  });
});

describe("the summary call with retries", () => {
  function host(replies: AssistantMessage[], retry: SummaryRetry): SummaryHost {
    const faux = registerFauxProvider({ api: "summary-retry-faux", provider: "summary-retry-faux", models: [{ id: "m" }] });
    providers.push(faux);
    faux.setResponses(replies.map((reply) => () => reply));
    return { model: faux.getModel(), thinkingLevel: "off", models: { getRequestAuth: async () => ({ apiKey: "key" }) }, summaryRetry: retry };
  }

  it("answers with the retried call's summary", async () => {
    const { retry, records, clock } = policy();
    const agent = host([failed("500 Internal Server Error"), fauxAssistantMessage("the summary")], retry);
    const result = completeSummary(agent, "summarise", new AbortController().signal, "Branch summarization", { source: "branchSummary" });
    await drive(clock, result);
    expect(await result).toMatchObject({ summary: "the summary" });
    expect(records.map((r) => r.type)).toEqual(["summarization_retry_scheduled", "summarization_retry_attempt_start", "summarization_retry_finished"]);
  });

  it("fails with the last error when the retries run out, as pi says it", async () => {
    const { retry, clock } = policy({ maxRetries: 1 });
    const agent = host([failed("503 Service Unavailable"), failed("502 Bad Gateway")], retry);
    const result = completeSummary(agent, "summarise", new AbortController().signal);
    await drive(clock, result);
    await expect(result).rejects.toThrow("Summarization failed: 502 Bad Gateway");
  });

  it("is cancelled, not failed, when aborted during the wait", async () => {
    const { retry, clock } = policy();
    const agent = host([failed("503 Service Unavailable"), fauxAssistantMessage("never")], retry);
    const abort = new AbortController();
    const result = completeSummary(agent, "summarise", abort.signal);
    await clock.whenPending();
    abort.abort();
    await expect(result).rejects.toBeInstanceOf(CompactionCancelledError);
  });
});
