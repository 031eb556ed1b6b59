import { ABORT_GRACE_MS } from "../abort-grace.js";

/**
 * Extension code the agent is waiting on (handlers of every hook, command handlers), let go of
 * when the agent aborts or shuts down: a handler that never settles must not hold a run, a
 * compaction, a session switch or a command for ever. An abort gives each such wait the abort
 * grace to end by itself (well-behaved code ends within milliseconds, with its own result), then
 * it fails with an error saying so, which the caller handles as that handler's failure. Waits
 * begun while the agent is still winding down an abort get the same grace from their start.
 */
/** What a wait let go of fails with; at shutdown it is not reported (the process is ending anyway). */
class LetGo extends Error {
  constructor(
    message: string,
    readonly atShutdown: boolean,
  ) {
    super(message);
  }
}

export function isLetGoAtShutdown(error: unknown): boolean {
  return error instanceof LetGo && error.atShutdown;
}

export class AwaitedCode {
  /** Arms the grace timer of each wait under way. */
  readonly #pending = new Set<() => void>();
  #shuttingDown = false;
  /** Whether an abort is still being wound down (set by the agent). */
  windingDown: () => boolean = () => false;

  /** `value` as it is when it is not a promise; else its outcome, or a rejection naming `what` once let go of. */
  guard<T>(value: T, what: string): T | Promise<Awaited<T>> {
    if (!isThenable(value)) return value;
    const work = Promise.resolve(value);
    return new Promise<Awaited<T>>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const arm = (): void => {
        if (timer) return;
        timer = setTimeout(() => {
          this.#pending.delete(arm);
          reject(new LetGo(`${what} did not stop when aborted`, this.#shuttingDown));
        }, ABORT_GRACE_MS);
        timer.unref();
      };
      this.#pending.add(arm);
      if (this.windingDown()) arm();
      work.then(resolve, reject).finally(() => {
        this.#pending.delete(arm);
        clearTimeout(timer);
      });
    });
  }

  /** The agent aborted or is shutting down: every wait under way ends within the abort grace. */
  letGo(reason: "abort" | "shutdown" = "abort"): void {
    if (reason === "shutdown") this.#shuttingDown = true;
    for (const arm of [...this.#pending]) arm();
  }

  /** How many waits are under way (tests). */
  get pending(): number {
    return this.#pending.size;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}
