import type { Api, AssistantMessage, Context, Model } from "@earendil-works/pi-ai/compat";
import { createAssistantMessageEventStream } from "@earendil-works/pi-ai/compat";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AutoRetry, isRetryableError } from "../src/agent/auto-retry.js";
import { loadPiAi } from "../src/models/index.js";
import type { MemoryTransport } from "./helpers/memory-transport.js";
import { FakeClock } from "./helpers/fake-clock.js";
import { assistantReply, type Outcome } from "./helpers/replies.js";
import { serveScripted, type Factory } from "./helpers/in-process.js";

type Rec = Record<string, unknown>;

/** An extension provider ("flaky/m") that plays `outcomes` in order, one per model call. */
function flakyProvider(outcomes: Outcome[], calls: Context[] = []): Factory {
  return (pi) => {
    pi.registerProvider("flaky", {
      api: "flaky-api",
      models: [{ id: "m", contextWindow: 100_000 }],
      streamSimple: (model: Model<Api>, context: Context) => {
        calls.push({ ...context, messages: [...context.messages] });
        const next = outcomes.shift() ?? { text: "(no more outcomes)" };
        const stream = createAssistantMessageEventStream();
        const final = assistantReply(model, next);
        queueMicrotask(() => {
          if ("error" in next) stream.push({ type: "error", reason: "error", error: final });
          else stream.push({ type: "done", reason: "stop", message: final });
        });
        return stream;
      },
    } as never);
  };
}

/**
 * The server's own retry waits `baseDelayMs` (default 2 s, at most `maxAgentDelayMs`); an hour for
 * both makes any wait a test sees end only by being cancelled: a retry that waited it out would
 * hang the test.
 */
const HOUR = 3_600_000;

async function serve(factories: Factory[], retry: { baseDelayMs?: number; maxAgentDelayMs?: number } = {}) {
  const { server, transport, logs, request, until } = await serveScripted([], factories, { agentConfig: { retry } });
  expect((await request({ type: "set_model", provider: "flaky", modelId: "m" }))["success"]).toBe(true);
  const lastAssistant = (): AssistantMessage => [...server.agent.messages].reverse().find((m): m is AssistantMessage => m.role === "assistant")!;
  return { server, transport, logs, request, until, lastAssistant };
}

const retryEvents = (transport: MemoryTransport): Rec[] => transport.sent.filter((r) => String(r["type"]).startsWith("auto_retry"));

describe("isRetryableError", () => {
  it("retries overloads, rate limits, 5xx and network failures, not the rest", async () => {
    const pi = await loadPiAi();
    const model = { api: "x", provider: "x", id: "x" };
    const failed = (error: string) => assistantReply(model, { error });
    for (const error of [
      '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
      "429 Too Many Requests",
      "Rate limit reached for requests",
      "503 Service Unavailable",
      "502 Bad Gateway",
      "500 Internal Server Error",
      "fetch failed",
      "socket hang up",
      "Request timed out",
      "read ECONNRESET",
      "terminated",
      // The newest pi's wider set: DNS and transport failures, streams cut short, retry advice.
      "getaddrinfo ENOTFOUND api.example.com",
      "connect ECONNABORTED 10.0.0.1:443",
      "Anthropic stream ended before message_stop",
      "520 origin error",
      "The service is temporarily unavailable",
      "An error occurred while processing your request. You can retry your request",
      "ResourceExhausted: too busy",
    ]) {
      expect(isRetryableError(failed(error), 200_000, pi), error).toBe(true);
    }
    for (const error of [
      "401 invalid x-api-key",
      "400 messages: field required",
      "prompt is too long: 300000 tokens > 200000 maximum",
      "Request was aborted",
      // A status code inside an id is no status.
      "400 invalid request req_5031234",
      // Limits a retry cannot lift, even sent as a 429 (the newest pi gives up at once).
      '429 {"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}',
      "429 Too Many Requests: quota exceeded for this billing period",
      "Monthly usage limit reached",
      '429 {"error":{"code":"1308","message":"usage limit"}}',
    ]) {
      expect(isRetryableError(failed(error), 200_000, pi), error).toBe(false);
    }
    expect(isRetryableError(assistantReply(model, { text: "fine" }), 200_000, pi)).toBe(false);
  });
});

describe("AutoRetry.afterRun", () => {
  it("retries with growing delays and reports success on the attempt that worked", async () => {
    const calls: Context[] = [];
    const { server, transport, request, until, lastAssistant } = await serve([
      flakyProvider([{ error: "503 Service Unavailable" }, { error: "529 overloaded_error: Overloaded" }, { error: "503 again" }, { text: "finally" }], calls),
    ]);
    server.agent.autoRetryEnabled = false; // drive a fast instance by hand instead
    await request({ type: "prompt", message: "hello" });
    await until(() => transport.of("agent_settled").length === 1);
    expect(retryEvents(transport)).toEqual([]);

    // The default delays, on a clock that lets each wait end at once: 2 s, 4 s, 8 s.
    const clock = new FakeClock({ fireAtOnce: true });
    const retry = new AutoRetry({ setTimer: clock.setTimer });
    expect(await retry.afterRun(server.agent, lastAssistant())).toBe(true);
    expect(clock.delays).toEqual([2000, 4000, 8000]);
    expect(retryEvents(transport)).toEqual([
      { type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: "503 Service Unavailable" },
      { type: "auto_retry_start", attempt: 2, maxAttempts: 3, delayMs: 4000, errorMessage: "529 overloaded_error: Overloaded" },
      { type: "auto_retry_start", attempt: 3, maxAttempts: 3, delayMs: 8000, errorMessage: "503 again" },
      { type: "auto_retry_end", success: true, attempt: 3 },
    ]);
    // Success is announced right after the good reply's message_end, before its agent_end.
    const types = transport.sent.map((r) => r["type"]);
    const end = types.indexOf("auto_retry_end");
    expect(types[end - 1]).toBe("message_end");
    expect(types.indexOf("agent_end", end)).toBeGreaterThan(end);
    // Every retried call saw the prompt without the failed replies (after the leading system message, pi-ai 1.6's request form).
    expect(calls.slice(1).map((c) => c.messages.map((m) => m.role))).toEqual([
      ["system", "user"],
      ["system", "user"],
      ["system", "user"],
    ]);
    // The context: the system message the run recorded (as pi 1.6; never sent twice: the calls above have one), the prompt, the reply that worked.
    expect(server.agent.messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    expect(lastAssistant()).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "finally" }] });
    // The session keeps the failed replies as history.
    const entries = server.agent.session.entries().filter((e) => e.type === "message" && e.message.role === "assistant");
    expect(entries).toHaveLength(4);
  });

  it("caps each wait at maxDelayMs (settings' retry.maxAgentDelayMs)", async () => {
    const { server, transport, request, until, lastAssistant } = await serve([
      flakyProvider([{ error: "503 a" }, { error: "503 b" }, { error: "503 c" }, { text: "done" }]),
    ]);
    server.agent.autoRetryEnabled = false;
    await request({ type: "prompt", message: "hello" });
    await until(() => transport.of("agent_settled").length === 1);
    const clock = new FakeClock({ fireAtOnce: true });
    expect(await new AutoRetry({ maxDelayMs: 3000, setTimer: clock.setTimer }).afterRun(server.agent, lastAssistant())).toBe(true);
    expect(clock.delays).toEqual([2000, 3000, 3000]);
    expect(retryEvents(transport).map((r) => r["delayMs"])).toEqual([2000, 3000, 3000, undefined]);
  });

  it("gives up after maxAttempts with the last error", async () => {
    const { server, transport, request, until, lastAssistant } = await serve([
      flakyProvider([{ error: "503 a" }, { error: "503 b" }, { error: "503 c" }, { error: "503 d" }]),
    ]);
    server.agent.autoRetryEnabled = false;
    await request({ type: "prompt", message: "hello" });
    await until(() => transport.of("agent_settled").length === 1);
    expect(await new AutoRetry({ baseDelayMs: 1 }).afterRun(server.agent, lastAssistant())).toBe(true);
    expect(retryEvents(transport).map((r) => [r["type"], r["attempt"], r["errorMessage"] ?? r["finalError"]])).toEqual([
      ["auto_retry_start", 1, "503 a"],
      ["auto_retry_start", 2, "503 b"],
      ["auto_retry_start", 3, "503 c"],
      ["auto_retry_end", 3, "503 d (retried 3 times, waiting 7 ms in all)"],
    ]);
    expect(retryEvents(transport).at(-1)).toEqual({
      type: "auto_retry_end",
      success: false,
      attempt: 3,
      finalError: "503 d (retried 3 times, waiting 7 ms in all)",
    });
  });

  it("stops when a retry fails with an error that is not transient", async () => {
    const { server, transport, request, until, lastAssistant } = await serve([flakyProvider([{ error: "overloaded" }, { error: "401 invalid api key" }])]);
    server.agent.autoRetryEnabled = false;
    await request({ type: "prompt", message: "hello" });
    await until(() => transport.of("agent_settled").length === 1);
    await new AutoRetry({ baseDelayMs: 1 }).afterRun(server.agent, lastAssistant());
    expect(retryEvents(transport).at(-1)).toEqual({
      type: "auto_retry_end",
      success: false,
      attempt: 1,
      finalError: "401 invalid api key (retried 1 time, waiting 1 ms in all)",
    });
  });

  it("does nothing for a reply that did not fail, or failed for good", async () => {
    const { server, transport, request, until, lastAssistant } = await serve([flakyProvider([{ text: "ok" }, { error: "401 nope" }])]);
    server.agent.autoRetryEnabled = false;
    await request({ type: "prompt", message: "one" });
    await until(() => transport.of("agent_settled").length === 1);
    expect(await new AutoRetry({ baseDelayMs: 1 }).afterRun(server.agent, lastAssistant())).toBe(false);
    await request({ type: "prompt", message: "two" });
    await until(() => transport.of("agent_settled").length === 2);
    expect(await new AutoRetry({ baseDelayMs: 1 }).afterRun(server.agent, lastAssistant())).toBe(false);
    expect(retryEvents(transport)).toEqual([]);
  });

  it("abort() during the wait cancels the retry without calling the model again", async () => {
    const calls: Context[] = [];
    const { server, transport, request, until, lastAssistant } = await serve([flakyProvider([{ error: "503" }, { text: "never" }], calls)]);
    server.agent.autoRetryEnabled = false;
    await request({ type: "prompt", message: "hello" });
    await until(() => transport.of("agent_settled").length === 1);
    const clock = new FakeClock();
    const retry = new AutoRetry({ setTimer: clock.setTimer });
    const done = retry.afterRun(server.agent, lastAssistant());
    await clock.whenPending();
    expect(retryEvents(transport)).toHaveLength(1);
    expect(retry.isRetrying).toBe(true);
    clock.advance(1999);
    expect(calls).toHaveLength(1);
    retry.abort();
    expect(clock.pending).toBe(0); // the wait was cancelled, not left to run out
    expect(await done).toBe(true);
    expect(retryEvents(transport).at(-1)).toEqual({ type: "auto_retry_end", success: false, attempt: 1, finalError: "Retry cancelled" });
    expect(calls).toHaveLength(1);
    expect(retry.isRetrying).toBe(false);
  });
});

describe("auto-retry through the RPC server", () => {
  afterEach(() => void vi.useRealTimers());

  it("abort_retry cancels the wait; the run then settles", async () => {
    const calls: Context[] = [];
    const { transport, request, until } = await serve([flakyProvider([{ error: "503 Service Unavailable" }, { text: "never" }], calls)], {
      baseDelayMs: HOUR,
      maxAgentDelayMs: HOUR,
    });
    await request({ type: "prompt", message: "hello" });
    await until(() => retryEvents(transport).length === 1);
    expect(retryEvents(transport)[0]).toEqual({ type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: HOUR, errorMessage: "503 Service Unavailable" });
    // Still part of the run: not settled, still streaming.
    expect(transport.of("agent_settled")).toEqual([]);
    expect(((await request({ type: "get_state" }))["data"] as Rec)["isStreaming"]).toBe(true);
    expect((await request({ type: "abort_retry" }))["success"]).toBe(true);
    // Settles although the hour-long wait has not ended: the abort cancelled it.
    await until(() => transport.of("agent_settled").length === 1);
    expect(retryEvents(transport).at(-1)).toEqual({ type: "auto_retry_end", success: false, attempt: 1, finalError: "Retry cancelled" });
    expect(calls).toHaveLength(1);
  });

  it("a prompt during the wait is refused unless it says how to queue; a follow-up runs after the retried reply", async () => {
    // pi 0.73.1 reports isStreaming false between attempts and starts the new prompt at once, racing
    // the retry; parley keeps the run going until agent_settled, so the prompt queues behind it.
    const calls: Context[] = [];
    const { transport, request, until } = await serve([
      flakyProvider([{ error: "503 Service Unavailable" }, { text: "retried" }, { text: "follow-up answer" }], calls),
    ]);
    // The retry's 2 s wait runs on vitest's clock: it ends when the test says, not on a busy machine's whim.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    await request({ type: "prompt", message: "hello" });
    await until(() => retryEvents(transport).length === 1);
    const refused = await request({ type: "prompt", message: "meanwhile" });
    expect(refused).toMatchObject({ success: false, error: expect.stringContaining("streamingBehavior") });
    expect((await request({ type: "prompt", message: "meanwhile", streamingBehavior: "followUp" }))["success"]).toBe(true);
    expect(calls).toHaveLength(1);
    vi.advanceTimersByTime(1999);
    expect(calls).toHaveLength(1);
    vi.advanceTimersByTime(1);
    await until(() => transport.of("agent_settled").length === 1);
    // One run: the retried reply, then the follow-up turn, then one settle.
    expect(calls).toHaveLength(3);
    const lastUser = (c: Context) => c.messages.filter((m) => m.role === "user").at(-1);
    expect(JSON.stringify(lastUser(calls[1]!))).toContain("hello");
    expect(JSON.stringify(lastUser(calls[2]!))).toContain("meanwhile");
    expect(transport.of("agent_end").map((r) => r["willRetry"])).toEqual([true, false]);
    expect(retryEvents(transport).at(-1)).toMatchObject({ type: "auto_retry_end", success: true });
  });

  it("abort during the wait cancels the retry too", async () => {
    const { transport, request, until } = await serve([flakyProvider([{ error: "overloaded" }, { text: "never" }])], {
      baseDelayMs: HOUR,
      maxAgentDelayMs: HOUR,
    });
    await request({ type: "prompt", message: "hello" });
    await until(() => retryEvents(transport).length === 1);
    // Answers although the hour-long wait has not ended: the abort cancelled it.
    expect((await request({ type: "abort" }))["success"]).toBe(true);
    expect(retryEvents(transport).at(-1)).toMatchObject({ type: "auto_retry_end", success: false, finalError: "Retry cancelled" });
  });

  it("set_auto_retry false leaves a transient failure alone", async () => {
    const { transport, request, until } = await serve([flakyProvider([{ error: "503" }])]);
    await request({ type: "set_auto_retry", enabled: false });
    await request({ type: "prompt", message: "hello" });
    await until(() => transport.of("agent_settled").length === 1);
    expect(retryEvents(transport)).toEqual([]);
  });
});

// ---- over real pipes --------------------------------------------------------------------------------
