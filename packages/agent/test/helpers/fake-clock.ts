/**
 * A clock for the modules that take a `setTimer` (src/timers.ts): time moves only when the test
 * says so, so a test asserts which delays were asked for and what happens when they end, and
 * never waits for them or measures them.
 */
import type { SetTimer } from "../../src/timers.js";

interface Timer {
  at: number;
  callback: () => void;
}

export class FakeClock {
  /** Milliseconds since the clock was made. */
  now = 0;
  /** Every delay a timer was set for, in order (cancelled ones included). */
  readonly delays: number[] = [];
  readonly #timers = new Set<Timer>();
  readonly #onSet = new Set<() => void>();
  /** Each timer fires on its own, on a microtask after it was set: for tests that only look at the delays. */
  readonly #fireAtOnce: boolean;

  constructor(options: { fireAtOnce?: boolean } = {}) {
    this.#fireAtOnce = options.fireAtOnce ?? false;
  }

  readonly setTimer: SetTimer = (callback, ms) => {
    const timer: Timer = { at: this.now + ms, callback };
    this.delays.push(ms);
    this.#timers.add(timer);
    for (const wake of [...this.#onSet]) wake();
    if (this.#fireAtOnce) queueMicrotask(() => this.#fire(timer));
    return () => void this.#timers.delete(timer);
  };

  /** Timers set and neither fired nor cancelled. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Resolves once a timer is pending (at once if one is). */
  whenPending(): Promise<void> {
    if (this.pending > 0) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        this.#onSet.delete(wake);
        resolve();
      };
      this.#onSet.add(wake);
    });
  }

  /** Moves time on by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.#timers].filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.now = due.at;
      this.#fire(due);
    }
    this.now = until;
  }

  #fire(timer: Timer): void {
    if (!this.#timers.delete(timer)) return;
    timer.callback();
  }
}
