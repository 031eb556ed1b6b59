/**
 * Prompt-cache warming (agent/cache-warmer.ts) on a fake clock with pi-ai 1.6's own policy: when a
 * refresh is scheduled, what it sends, what it records, what the extension decision sees and may
 * change, and every reason it stops (disabled, a model without a cache lifetime such as the
 * offline model, the run settling under "streaming", the conversation moving on, a late timer,
 * the safety horizons).
 */
import * as piAi from "@earendil-works/pi-ai/compat";
import type { Api, AssistantMessage, Model, Usage } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import { CacheWarmer, type CacheWarmerHost, type WarmRequest } from "../src/agent/cache-warmer.js";
import type { CacheWarmingMode } from "../src/config/settings.js";
import type { CacheWarmingDecisionEvent } from "../src/extensions/types.js";
import { createOfflineModel } from "../src/models/offline-model.js";
import { FakeClock } from "./helpers/fake-clock.js";

const usage = (input: number): Usage => ({
  input,
  output: 1,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: input + 1,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

/** A model whose cache lives 11 s (a refresh after 1 s) and whose misses are expensive enough to warm. */
const MODEL: Model<Api> = {
  id: "warm-1",
  name: "warm-1",
  api: "openai-completions",
  provider: "warm",
  baseUrl: "http://127.0.0.1:1/v1",
  reasoning: false,
  input: ["text"],
  cost: { input: 1000, output: 1, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100_000,
  maxTokens: 1000,
  promptCache: { short: 11 },
};

const REQUEST: WarmRequest = { model: MODEL, context: piAi.normalizeContext({ messages: [] }), options: { maxTokens: 500, maxRetries: 3 } };

class Host implements CacheWarmerHost {
  modeNow: CacheWarmingMode = "idle";
  sent: WarmRequest[] = [];
  recorded: unknown[][] = [];
  decisions: CacheWarmingDecisionEvent[] = [];
  override: ((e: CacheWarmingDecisionEvent) => "warm" | "stop" | undefined) | undefined;
  reply: Partial<AssistantMessage> = {};
  mode = (): CacheWarmingMode => this.modeNow;
  lastPromptTokens = (): number => 1000;
  send = async (request: WarmRequest): Promise<AssistantMessage> => {
    this.sent.push(request);
    return {
      role: "assistant",
      content: [],
      api: "openai-completions",
      provider: "warm",
      model: "warm-1",
      usage: usage(0),
      stopReason: "length",
      timestamp: 0,
      ...this.reply,
    };
  };
  recordUsage = (...args: unknown[]): void => {
    this.recorded.push(args);
  };
  decide = async (event: CacheWarmingDecisionEvent): Promise<"warm" | "stop" | undefined> => {
    this.decisions.push(event);
    return this.override?.(event);
  };
}

function setUp(mode: CacheWarmingMode = "idle"): { host: Host; clock: FakeClock; warmer: CacheWarmer; current: { value: boolean } } {
  const host = new Host();
  host.modeNow = mode;
  const clock = new FakeClock();
  const warmer = new CacheWarmer(host, piAi, { now: () => clock.now, setTimer: clock.setTimer });
  const current = { value: true };
  warmer.start(REQUEST, () => current.value);
  return { host, clock, warmer, current };
}

/** Lets the refresh's awaits (decision, send) finish. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe("prompt-cache warming", () => {
  it("refreshes at 90% of the lifetime (at least 10 s before expiry) with a one-token replay, and records its usage", async () => {
    const { host, clock } = setUp();
    expect(clock.delays).toEqual([1000]);
    clock.advance(1000);
    await settle();
    expect(host.decisions).toEqual([{ type: "cache_warming_decision", warmCost: 0.000001, missCost: 1, continuationProbability: 1, action: "warm" }]);
    expect(host.sent).toHaveLength(1);
    expect(host.sent[0]?.options).toMatchObject({ maxTokens: 1, maxRetries: 0, disableContinuation: true });
    expect(host.sent[0]?.context).toBe(REQUEST.context);
    expect(host.recorded).toEqual([["cache_warm", "warm", "warm-1", usage(0), undefined]]);
    // And again, one delay later.
    expect(clock.delays).toEqual([1000, 1000]);
  });

  it('goes on between runs with the idle probability under "idle", and stops when the run settles under "streaming"', async () => {
    const idle = setUp("idle");
    idle.warmer.onAgentSettled();
    idle.clock.advance(1000);
    await settle();
    expect(idle.host.decisions[0]).toMatchObject({ continuationProbability: 0.15, action: "warm" });
    expect(idle.host.sent).toHaveLength(1);

    const streaming = setUp("streaming");
    streaming.warmer.onAgentSettled();
    expect(streaming.clock.pending).toBe(0);
    expect(streaming.warmer.status).toEqual({ state: "inactive", reason: "agent run settled" });
  });

  it("never schedules when disabled, or for a model without a cache lifetime (the offline model), or with caching off", () => {
    expect(setUp("off").clock.delays).toEqual([]);
    for (const request of [
      { ...REQUEST, model: createOfflineModel() },
      { ...REQUEST, options: { cacheRetention: "none" as const } },
    ]) {
      const host = new Host();
      const clock = new FakeClock();
      const warmer = new CacheWarmer(host, piAi, { now: () => clock.now, setTimer: clock.setTimer });
      warmer.start(request, () => true);
      expect(clock.delays).toEqual([]);
      expect(warmer.status.state).toBe("inactive");
    }
  });

  it("stops without sending when disabled meanwhile, when the conversation moved on, or when the timer fired too late", async () => {
    const disabled = setUp();
    disabled.host.modeNow = "off";
    disabled.clock.advance(1000);
    await settle();
    expect(disabled.host.sent).toEqual([]);

    const moved = setUp();
    moved.current.value = false;
    moved.clock.advance(1000);
    await settle();
    expect(moved.host.sent).toEqual([]);
    expect(moved.warmer.status.reason).toBe("conversation context changed");

    const late = setUp();
    late.clock.now += 7000; // past nextWarmAt + half the remaining margin (5 s)
    late.clock.advance(0);
    await settle();
    expect(late.host.sent).toEqual([]);
    expect(late.warmer.status.reason).toBe("cache refresh deadline missed");
  });

  it('an extension\'s "stop" ends warming, its "warm" sends with a note, and its failure leaves pi\'s decision', async () => {
    const stopped = setUp();
    stopped.host.override = () => "stop";
    stopped.clock.advance(1000);
    await settle();
    expect(stopped.host.sent).toEqual([]);
    expect(stopped.warmer.status.reason).toBe("stopped by extension");

    const forced = setUp();
    forced.host.lastPromptTokens = () => 1; // not worth it by pi's numbers
    forced.host.override = (e) => (e.action === "stop" ? "warm" : undefined);
    forced.clock.advance(1000);
    await settle();
    expect(forced.host.recorded[0]?.[4]).toBe("extension override");

    const failing = setUp();
    failing.host.override = () => {
      throw new Error("handler failed");
    };
    failing.clock.advance(1000);
    await settle();
    expect(failing.host.sent).toHaveLength(1);
  });

  it("records nothing for a failed refresh but keeps warming; a new request replaces the run", async () => {
    const { host, clock, warmer } = setUp();
    host.reply = { stopReason: "error" };
    clock.advance(1000);
    await settle();
    expect(host.recorded).toEqual([]);
    expect(clock.pending).toBe(1);
    warmer.start(REQUEST, () => true);
    expect(clock.pending).toBe(1);
    warmer.cancel();
    expect(clock.pending).toBe(0);
  });

  it("stops at the one-hour horizon while a run streams", async () => {
    const { host, clock, warmer } = setUp();
    for (let i = 0; i < 3600; i++) {
      clock.advance(1000);
      await settle();
    }
    // One refresh a second up to the hour itself, none after it.
    expect(host.sent).toHaveLength(3600);
    expect(clock.pending).toBe(0);
    expect(warmer.status).toEqual({ state: "inactive", reason: "one-hour safety limit reached" });
  });
});
