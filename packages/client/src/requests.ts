/**
 * Request/response correlation: ids (`c-1`, `c-2`, …), one promise per request, the caller's
 * timeout and AbortSignal, and nothing else. A response that matches no pending request (a
 * late answer after a timeout or abort) is left alone.
 */
import type { CommandOf, CommandType, ResponseData } from "@parley/protocol";
import { RequestAbortedError, RequestTimeoutError, RpcError } from "./errors.js";
import type { ResponseRecord } from "./records.js";

export interface RequestOptions {
  /** Reject with RequestTimeoutError after this many ms. No default: without it, a request waits for its response or for the connection to close. */
  timeoutMs?: number;
  /** Reject with RequestAbortedError when this fires. The agent is not told (see `abort()`). */
  signal?: AbortSignal;
}

/** A command as the caller writes it: its `type` and fields; the id is generated. */
export type CommandInput<K extends CommandType> = Omit<CommandOf<K>, "id"> & { type: K };

/** A sent request: its generated id and the promise of its response data. */
export interface IssuedRequest<K extends CommandType> {
  readonly id: string | undefined;
  readonly response: Promise<ResponseData<K>>;
}

interface Pending {
  readonly id: string;
  readonly command: string;
  resolve(data: unknown): void;
  reject(error: unknown): void;
}

export class RequestTracker {
  readonly #pending = new Map<string, Pending>();
  readonly #prefix: string;
  #counter = 0;

  /** `write` sends one record or throws (connection closed, unserializable). */
  constructor(
    private readonly write: (record: object) => void,
    prefix = "c-",
  ) {
    this.#prefix = prefix;
  }

  get size(): number {
    return this.#pending.size;
  }

  issue<K extends CommandType>(command: CommandInput<K>, options: RequestOptions = {}): IssuedRequest<K> {
    const { timeoutMs, signal } = options;
    if (timeoutMs !== undefined && !(timeoutMs >= 0)) {
      return { id: undefined, response: Promise.reject(new RangeError(`timeoutMs must be a non-negative number, got ${timeoutMs}`)) };
    }
    if (signal?.aborted) {
      return { id: undefined, response: Promise.reject(new RequestAbortedError(command.type, undefined, signal.reason)) };
    }
    const id = `${this.#prefix}${++this.#counter}`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const cleanup = (): void => {
      this.#pending.delete(id);
      if (timer !== undefined) clearTimeout(timer);
      if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
    };
    const response = new Promise<ResponseData<K>>((resolve, reject) => {
      this.#pending.set(id, {
        id,
        command: command.type,
        resolve: (data) => {
          cleanup();
          resolve(data as ResponseData<K>);
        },
        reject: (error) => {
          cleanup();
          reject(error);
        },
      });
    });
    const pending = this.#pending.get(id)!;
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => pending.reject(new RequestTimeoutError(command.type, id, timeoutMs)), timeoutMs);
    }
    if (signal !== undefined) {
      onAbort = () => pending.reject(new RequestAbortedError(command.type, id, signal.reason));
      signal.addEventListener("abort", onAbort, { once: true });
    }
    try {
      this.write({ ...command, id });
    } catch (error) {
      pending.reject(error);
    }
    return { id, response };
  }

  /**
   * Settles the request a response answers; false when it answers none (a late response).
   * A response without an id (pi 0.73 answers unknown commands so) settles the oldest
   * pending request of the same command type.
   */
  settle(response: ResponseRecord): boolean {
    const pending = this.#match(response);
    if (pending === undefined) return false;
    if (response.success) pending.resolve(response.data);
    // The type says a string; an agent that writes something else still gets its failure through.
    else pending.reject(new RpcError(response.command, errorText(response.error), pending.id));
    return true;
  }

  /** Rejects every pending request (the connection closed). */
  rejectAll(error: () => unknown): void {
    for (const pending of [...this.#pending.values()]) pending.reject(error());
  }

  #match(response: ResponseRecord): Pending | undefined {
    const id = response.id;
    if (id !== undefined) return typeof id === "string" ? this.#pending.get(id) : undefined;
    for (const pending of this.#pending.values()) if (pending.command === response.command) return pending;
    return undefined;
  }
}

function errorText(error: unknown): string {
  if (typeof error === "string") return error;
  if (error === undefined) return "(the agent gave no error text)";
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
