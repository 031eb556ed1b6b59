/**
 * How long aborted work is given to end by itself before the agent goes on without it: extension
 * code that ignores its abort signal (a tool's execute, an event handler) must not keep a run from
 * ending. Well-behaved code ends within milliseconds of the abort, with its own result.
 */
export const ABORT_GRACE_MS = 2000;

/** `work`'s outcome; or, when `signal` aborts and `work` has not settled ABORT_GRACE_MS later, a rejection saying so. */
export function settleAfterAbort<T>(work: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const giveUp = (): void => {
      timer = setTimeout(() => reject(new Error(`${what} did not stop when aborted`)), ABORT_GRACE_MS);
      timer.unref();
    };
    if (signal.aborted) giveUp();
    else signal.addEventListener("abort", giveUp, { once: true });
    work.then(resolve, reject).finally(() => {
      signal.removeEventListener("abort", giveUp);
      clearTimeout(timer);
    });
  });
}
