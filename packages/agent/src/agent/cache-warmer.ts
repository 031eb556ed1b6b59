/**
 * Prompt-cache warming, as pi 1.6 does it: after a session request, the same request is sent again
 * with a one-token output cap shortly before the provider's prompt cache entry would expire, while
 * the conversation still extends that request and the refresh is expected to pay for itself
 * (pi-ai 1.6's policy: `evaluateCacheWarming` and friends). Extensions may override each decision
 * (`cache_warming_decision`). Each refresh's usage is recorded as a `usage` entry of kind
 * "cache_warm". Time comes from an injected clock, so tests move it instead of waiting.
 */
import type { Api, AssistantMessage, Model, SimpleStreamOptions, TranscriptContext, Usage } from "@earendil-works/pi-ai";
import type { CacheWarmingMode } from "../config/settings.js";
import type { CacheWarmingDecisionEvent } from "../extensions/types.js";
import type { PiAi } from "../models/pi-ai.js";
import type { SetTimer } from "../timers.js";

type WarmingPolicy = Pick<
  PiAi,
  | "evaluateCacheWarming"
  | "getCacheWarmingDelayMs"
  | "getCacheWarmingRequestOptions"
  | "getPromptCacheTtlMs"
  | "isCacheWarmingReplayable"
  | "CACHE_WARMING_MAX_AGE_MS"
  | "CACHE_WARMING_MAX_IDLE_AGE_MS"
>;
type Decision = ReturnType<PiAi["evaluateCacheWarming"]>;
type Action = Decision["action"];

/** The request whose cache entry is kept warm, as it was handed to the provider's stream. */
export interface WarmRequest {
  model: Model<Api>;
  context: TranscriptContext;
  options: SimpleStreamOptions;
}

/** What the warmer needs of the session it serves. */
export interface CacheWarmerHost {
  /** The warming setting now (global settings' `cacheWarming`). */
  mode(): CacheWarmingMode;
  /** Sends a refresh the way the session's requests are sent (auth resolved, hooks run). */
  send(request: WarmRequest): Promise<AssistantMessage>;
  /** Prompt tokens of the branch's last reply (input + cache read + cache write). */
  lastPromptTokens(): number;
  /** Records a refresh's usage (a `usage` entry) and announces it. */
  recordUsage(kind: string, provider: string, model: string, usage: Usage, note?: string): void;
  /** Lets extensions override the decision; undefined leaves pi's. */
  decide(event: CacheWarmingDecisionEvent): Promise<Action | undefined>;
}

export interface WarmerClock {
  now(): number;
  setTimer: SetTimer;
}

/** A real clock whose timers never keep the process alive (pi's are unref'd too). */
export const realWarmerClock: WarmerClock = {
  now: () => Date.now(),
  setTimer: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

interface Run extends WarmRequest {
  isCurrent: () => boolean;
  ttlMs: number;
  delayMs: number;
  startedAt: number;
  /** "streaming" while the run that sent the request goes on, "idle" once it settled. */
  phase: "streaming" | "idle";
  nextWarmAt: number;
  /** After this the refresh would land too late to be a cache hit. */
  refreshDeadlineAt: number;
  cancelTimer: (() => void) | undefined;
  controller: AbortController;
}

export interface WarmingStatus {
  state: "inactive" | "scheduled" | "refreshing";
  reason?: string;
}

export class CacheWarmer {
  #run: Run | undefined;
  #inactiveReason = "waiting for first request";

  constructor(
    private readonly host: CacheWarmerHost,
    private readonly policy: WarmingPolicy,
    private readonly clock: WarmerClock = realWarmerClock,
  ) {}

  get status(): WarmingStatus {
    if (this.host.mode() === "off") return { state: "inactive", reason: "cache warming disabled" };
    const run = this.#run;
    if (!run) return { state: "inactive", reason: this.#inactiveReason };
    return { state: run.cancelTimer ? "scheduled" : "refreshing" };
  }

  /** A session request was sent: keep its cache entry warm while `isCurrent` holds (replaces any earlier run). */
  start(request: WarmRequest, isCurrent: () => boolean): void {
    this.#clear();
    if (this.host.mode() === "off") return this.#stop("cache warming disabled");
    if (!this.policy.isCacheWarmingReplayable(request.model, request.options)) return this.#stop("request cannot be replayed safely");
    const ttlMs = this.policy.getPromptCacheTtlMs(request.model, request.options);
    if (ttlMs === undefined) return this.#stop(request.options.cacheRetention === "none" ? "request disabled prompt caching" : "cache lifetime unavailable");
    const delayMs = this.policy.getCacheWarmingDelayMs(ttlMs);
    if (delayMs === undefined) return this.#stop("cache lifetime unavailable");
    const run: Run = {
      ...request,
      isCurrent,
      ttlMs,
      delayMs,
      startedAt: this.clock.now(),
      phase: "streaming",
      nextWarmAt: 0,
      refreshDeadlineAt: 0,
      cancelTimer: undefined,
      controller: new AbortController(),
    };
    this.#run = run;
    this.#schedule(run);
  }

  /** The agent run settled: "streaming" warming ends; "idle" goes on within the shorter idle horizon. */
  onAgentSettled(): void {
    const run = this.#run;
    if (!run) return;
    if (this.host.mode() === "streaming") return this.#stop("agent run settled");
    run.phase = "idle";
    const deadline = run.startedAt + this.policy.CACHE_WARMING_MAX_IDLE_AGE_MS;
    if (run.nextWarmAt > deadline || this.clock.now() >= deadline) this.#stop("30-minute idle safety limit reached");
  }

  /** The session ends or is replaced. */
  cancel(): void {
    this.#stop("inactive");
  }

  #clear(): void {
    const run = this.#run;
    if (!run) return;
    this.#run = undefined;
    run.cancelTimer?.();
    run.controller.abort();
  }

  #stop(reason: string): void {
    this.#clear();
    this.#inactiveReason = reason;
  }

  #schedule(run: Run): void {
    const now = this.clock.now();
    run.nextWarmAt = now + run.delayMs;
    // A late timer (sleep, a blocked loop) keeps half the margin before expiry; later than that the
    // refresh would be a full-price cache write, not a warm.
    run.refreshDeadlineAt = run.nextWarmAt + Math.floor((run.ttlMs - run.delayMs) / 2);
    const horizon = run.phase === "idle" ? this.policy.CACHE_WARMING_MAX_IDLE_AGE_MS : this.policy.CACHE_WARMING_MAX_AGE_MS;
    const deadline = run.startedAt + horizon;
    if (run.nextWarmAt > deadline || now >= deadline) {
      return this.#stop(run.phase === "idle" ? "30-minute idle safety limit reached" : "one-hour safety limit reached");
    }
    run.cancelTimer = this.clock.setTimer(() => void this.#refresh(run), Math.max(0, run.nextWarmAt - now));
  }

  async #refresh(run: Run): Promise<void> {
    run.cancelTimer = undefined;
    if (!this.#stillValid(run, true)) return;
    const decision = this.policy.evaluateCacheWarming(run.model, this.host.lastPromptTokens(), run.phase);
    let action: Action = decision.action;
    try {
      action =
        (await this.host.decide({
          type: "cache_warming_decision",
          warmCost: decision.warmCost,
          missCost: decision.missCost,
          continuationProbability: decision.continuationProbability,
          action,
        })) ?? action;
    } catch {
      // An extension's failure leaves pi's decision.
    }
    if (!this.#stillValid(run, true)) return;
    const overridden = action !== decision.action;
    if (action === "stop") {
      return this.#stop(overridden ? "stopped by extension" : decision.economicsAvailable ? "expected savings below threshold" : "cache economics unavailable");
    }
    try {
      const options = this.policy.getCacheWarmingRequestOptions(run.options, run.controller.signal);
      const reply = await this.host.send({ model: run.model, context: run.context, options });
      // The reply is recorded even if it came late: it was paid for.
      if (!this.#stillValid(run, false)) return;
      if (reply.stopReason !== "error" && reply.stopReason !== "aborted") {
        this.host.recordUsage("cache_warm", reply.provider, reply.responseModel ?? reply.model, reply.usage, overridden ? "extension override" : undefined);
      }
    } catch {
      // Warming is best effort: it never disturbs the session.
    }
    if (this.#run === run) this.#schedule(run);
  }

  /**
   * The run is still the current one, allowed by the setting, its request still the conversation's
   * prefix and (before sending) not too late to be a cache hit; else warming stops.
   */
  #stillValid(run: Run, beforeSending: boolean): boolean {
    if (this.#run !== run) return false;
    const mode = this.host.mode();
    const reason =
      mode === "off"
        ? "cache warming disabled"
        : mode === "streaming" && run.phase === "idle"
          ? "agent run settled"
          : !run.isCurrent()
            ? "conversation context changed"
            : beforeSending && this.clock.now() > run.refreshDeadlineAt
              ? "cache refresh deadline missed"
              : undefined;
    if (reason === undefined) return true;
    this.#stop(reason);
    return false;
  }
}
