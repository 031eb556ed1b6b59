/**
 * The agent's compaction state and its entry points: one compaction at a time, its abort, the
 * `compact` command / ctx.compact(), and the check after each run. The run itself
 * (compaction-run.ts) loads with the loop or on the first compaction: start-up does not need it.
 */
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { DEFAULT_COMPACTION_SETTINGS, type CompactionSettings } from "../extensions/compat/messages.js";
import type { CompactionHost, CompactionReason, CompactionResult } from "./compaction-host.js";

type CompactionRun = typeof import("./compaction-run.js");

/** Loads the compaction run (the loop does so with itself, so the check after a run never waits for a file). */
export function loadCompactionRun(): Promise<CompactionRun> {
  return import("./compaction-run.js");
}

interface RunOptions {
  reason: CompactionReason;
  customInstructions?: string | undefined;
  willRetry: boolean;
  settings?: Partial<CompactionSettings> | undefined;
}

export class Compactor {
  readonly #agent: CompactionHost;
  /** The compaction in progress (to abort it, and to wait until it is over); undefined when none runs. */
  #running: { controller: AbortController; done: Promise<void> } | undefined;

  constructor(agent: CompactionHost) {
    this.#agent = agent;
  }

  get isCompacting(): boolean {
    return this.#running !== undefined;
  }

  /** Aborts the compaction in progress, if any (it ends with `aborted: true`). */
  abort(): void {
    this.#running?.controller.abort();
  }

  /**
   * Compacts now (the `compact` command, `ctx.compact()`). Like pi, a run in progress is aborted
   * first, for the command as for ctx.compact(), and so is a compaction in progress (as the newest
   * pi: the later request wins; the aborted one appends nothing). Resolves with the result;
   * rejects with the reason when it fails or is cancelled ("Compaction cancelled").
   */
  async compact(options: {
    customInstructions?: string | undefined;
    reason: CompactionReason;
    settings?: Partial<CompactionSettings>;
  }): Promise<CompactionResult> {
    const run = await loadCompactionRun();
    // Each new request aborts the current compaction, then the run. Aborting the run yields, and
    // another request may start a compaction meanwhile: that one is aborted in turn. (A loop on
    // isStreaming alone would spin: a prompt still being prepared counts, and abort() does not
    // wait for it.)
    for (;;) {
      while (this.#running) {
        const { controller, done } = this.#running;
        controller.abort();
        await done;
      }
      if (!this.#agent.isStreaming) break;
      await this.#agent.abort();
      if (!this.#running) break;
    }
    return this.#run(run, { ...options, willRetry: false });
  }

  /**
   * After a run: compacts when the model reported a context overflow (reason "overflow"; the run is
   * then retried once from the compacted context) or when the context is nearly full (reason
   * "threshold"). Never throws.
   */
  async afterRun(last: AssistantMessage, settings: Partial<CompactionSettings> = {}): Promise<void> {
    const run = await loadCompactionRun();
    const effective: CompactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, ...settings };
    if (!effective.enabled || last.stopReason === "aborted" || this.isCompacting) return;
    const reason = await run.autoCompactionReason(this.#agent, last, effective);
    if (reason === "overflow") {
      this.#dropTrailingAssistant();
      try {
        await this.#run(run, { reason, willRetry: true, settings: effective });
      } catch {
        return; // compaction_end said why
      }
      this.#dropTrailingAssistant();
      await this.#continueQuietly(last);
    } else if (reason === "threshold") {
      try {
        await this.#run(run, { reason, willRetry: false, settings: effective });
      } catch {
        return;
      }
      // Messages queued while compacting would otherwise wait for the next prompt.
      if (this.#agent.hasPendingMessages()) await this.#continueQuietly();
    }
  }

  /** One compaction; throws on failure or cancellation (compaction_end has been emitted by then). */
  async #run(run: CompactionRun, options: RunOptions): Promise<CompactionResult> {
    if (this.#running) throw new Error("A compaction is already running");
    const controller = new AbortController();
    let ended = (): void => {};
    const running = { controller, done: new Promise<void>((resolve) => (ended = resolve)) };
    this.#running = running;
    try {
      return await run.runCompaction(this.#agent, controller.signal, options);
    } finally {
      if (this.#running === running) this.#running = undefined;
      ended();
    }
  }

  #dropTrailingAssistant(): void {
    const messages = this.#agent.messages;
    if (messages.at(-1)?.role === "assistant") this.#agent.messages = messages.slice(0, -1);
  }

  /** `failed`: the reply the continuation retries (an overflow's). */
  async #continueQuietly(failed?: AssistantMessage): Promise<void> {
    try {
      await this.#agent.continueRun(failed);
    } catch {
      // Nothing to continue from: the next prompt starts from the compacted context.
    }
  }
}
