/**
 * Listener plumbing: every subscription returns a Disposable, and a listener that throws
 * never breaks the loop that called it (its error goes to whoever the emitter reports to).
 */

export interface Disposable {
  dispose(): void;
}

export function toDisposable(dispose: () => void): Disposable {
  let done = false;
  return {
    dispose() {
      if (done) return;
      done = true;
      dispose();
    },
  };
}

/** Disposes every member at once; members added after dispose() are disposed immediately. */
export class DisposableStore implements Disposable {
  #items: Disposable[] = [];
  #disposed = false;

  add<T extends Disposable>(item: T): T {
    if (this.#disposed) item.dispose();
    else this.#items.push(item);
    return item;
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    const items = this.#items;
    this.#items = [];
    for (const item of items) item.dispose();
  }
}

export type Listener<T> = (value: T) => void;

/** Rethrows outside the current call stack, like the web platform's reportError. */
export function reportUncaught(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

export interface EmitterOptions {
  /** Called with what a listener threw. Default: rethrown as an uncaught exception. */
  onListenerError?: (error: unknown) => void;
  /**
   * Keep values fired while nobody listens and hand them to the first listener, in order.
   * Used where the other side may speak before the first subscription (a transport).
   */
  bufferUntilFirstListener?: boolean;
}

/** A typed event source. `event(listener)` subscribes; `fire(value)` calls listeners in order. */
export class Emitter<T> {
  readonly #listeners = new Set<Listener<T>>();
  readonly #onListenerError: (error: unknown) => void;
  #buffer: T[] | undefined;

  constructor(options: EmitterOptions = {}) {
    this.#onListenerError = options.onListenerError ?? reportUncaught;
    this.#buffer = options.bufferUntilFirstListener ? [] : undefined;
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  readonly event = (listener: Listener<T>): Disposable => {
    // A wrapper, so subscribing the same function twice gives two independent subscriptions.
    const entry: Listener<T> = (value) => listener(value);
    this.#listeners.add(entry);
    const buffered = this.#buffer;
    if (buffered !== undefined) {
      this.#buffer = undefined;
      for (const value of buffered) this.#call(entry, value);
    }
    return toDisposable(() => this.#listeners.delete(entry));
  };

  fire(value: T): void {
    if (this.#listeners.size === 0) {
      this.#buffer?.push(value);
      return;
    }
    for (const listener of [...this.#listeners]) {
      if (this.#listeners.has(listener)) this.#call(listener, value);
    }
  }

  clear(): void {
    this.#listeners.clear();
    if (this.#buffer !== undefined) this.#buffer = [];
  }

  #call(listener: Listener<T>, value: T): void {
    try {
      listener(value);
    } catch (error) {
      this.#onListenerError(error);
    }
  }
}
