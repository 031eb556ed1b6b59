/**
 * A dialog's whole life: id, request record, deadline, AbortSignal link, resolve-once,
 * the dismiss record, and the refusal of answers that do not fit.
 */
import type {
  DialogRequest,
  DialogMethod,
  DismissReason,
  ExtensionUiDismissed,
  ExtensionUiError,
  ExtensionUiErrorCode,
  PendingDialogState,
} from "@parley/protocol";
import { readDialogResponse, type DialogAnswer } from "@parley/protocol/dialog-answers";
import { describeValue } from "@parley/protocol/command-envelope";
import { toDisposable, type Disposable } from "@parley/protocol/disposable";
import { nodeCrypto } from "../lazy-node.js";

/** A request as the UI context builds it: everything but the envelope. */
export type DialogSpec = DistributiveOmit<DialogRequest, "type" | "id" | "timeout">;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface DialogOptions {
  timeout?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** What the extension receives: the answer, or the dialog's default on cancel/timeout/abort/shutdown. */
export type { DialogAnswer };

export type DialogOutput = DialogRequest | ExtensionUiDismissed | ExtensionUiError;

// setTimeout fires after 1 ms for delays above 2^31-1: re-arm in steps instead.
const MAX_TIMER_MS = 2_147_483_647;
/** How many ended dialogs keep their reason, for a late answer's error; older ones are forgotten. */
const DEFAULT_REMEMBERED_ENDINGS = 10_000;

const ENDING_TEXT: Record<DismissReason, string> = {
  answered: "it was already answered",
  timeout: "it was dismissed (timeout)",
  aborted: "it was dismissed (aborted)",
  shutdown: "it was dismissed (shutdown)",
};

interface PendingDialog {
  request: DialogRequest;
  deadline: number | undefined;
  timer: NodeJS.Timeout | undefined;
  /** Undoes the AbortSignal link. */
  unlink: Disposable | undefined;
  resolve: (answer: DialogAnswer) => void;
}

export interface DialogRegistryOptions {
  send: (record: DialogOutput) => void;
  /**
   * The first 24 characters of every dialog id (default: those of a random UUID); a 12-digit
   * hex counter follows. Tests set it to get predictable ids.
   */
  idPrefix?: string;
  /** How many ended dialogs keep their reason for a late answer's error (default 10,000). */
  rememberEndings?: number;
  now?: () => number;
}

export class DialogRegistry {
  readonly #send: (record: DialogOutput) => void;
  readonly #now: () => number;
  readonly #pending = new Map<string, PendingDialog>();
  /** Why each recently ended dialog ended, oldest first; bounded by #rememberEndings. */
  readonly #ended = new Map<string, DismissReason>();
  readonly #rememberEndings: number;
  readonly #ids: IdCounter;
  /** Fire-and-forget ids have a prefix of their own, so an answer to one is told apart without remembering it. */
  readonly #fireAndForgetIds = new IdCounter(undefined);
  #closed = false;

  constructor(options: DialogRegistryOptions) {
    this.#send = options.send;
    this.#ids = new IdCounter(options.idPrefix);
    this.#rememberEndings = Math.max(1, Math.floor(options.rememberEndings ?? DEFAULT_REMEMBERED_ENDINGS));
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#pending.size;
  }

  /** Whether a dialog with this id is waiting for its answer. */
  isPending(id: string): boolean {
    return this.#pending.has(id);
  }

  /**
   * Sends the request and resolves exactly once: with the client's answer, or with
   * `{kind:"cancelled"}` on cancel, timeout, abort or shutdown (announced by a dismiss record).
   */
  open(spec: DialogSpec, options: DialogOptions = {}): Promise<DialogAnswer> {
    const { signal } = options;
    // Extensions are plain JavaScript: anything may arrive here.
    if (signal != null && typeof (signal as Partial<AbortSignal>).addEventListener !== "function") {
      throw new TypeError(`The signal option of a dialog must be an AbortSignal (got ${describeValue(signal)})`);
    }
    // Nothing is shown for a dialog that is already moot: its signal has aborted, or its timeout
    // is below zero (pi arms the timer anyway and resolves with the default at once; never waiting
    // forever is what matters).
    if (this.#closed || signal?.aborted || expired(options.timeout)) return Promise.resolve(CANCELLED);

    const timeout = validTimeout(options.timeout);
    const request: DialogRequest = { type: "extension_ui_request", id: this.#ids.next(), ...spec };
    if (timeout !== undefined) request.timeout = timeout;
    return new Promise<DialogAnswer>((resolve) => {
      const entry: PendingDialog = {
        request,
        deadline: timeout !== undefined ? this.#now() + timeout : undefined,
        timer: undefined,
        unlink: signal ? onAbort(signal, () => this.#settle(entry, CANCELLED, "aborted")) : undefined,
        resolve,
      };
      this.#pending.set(request.id, entry);
      if (entry.deadline !== undefined) this.#armTimer(entry);
      this.#send(request);
    });
  }

  /** An id for a fire-and-forget request (it takes no response). */
  newFireAndForgetId(): string {
    return this.#fireAndForgetIds.next();
  }

  /** Route one parsed `extension_ui_response` line. Refusals are reported, never dropped. */
  handleResponse(record: Record<string, unknown>): void {
    const id = record["id"];
    if (typeof id !== "string") {
      this.#refuse(undefined, "invalid_response", false, `extension_ui_response needs a string "id" naming the dialog it answers (got ${describeValue(id)})`);
      return;
    }
    const entry = this.#pending.get(id);
    if (!entry) {
      this.#refuseEnded(id);
      return;
    }
    // The protocol's answer rules (dialog-answers.ts), the same the client writes answers by.
    const answer = readDialogResponse(entry.request, record);
    if (typeof answer === "string") this.#refuse(id, "invalid_response", true, answer);
    else this.#settle(entry, answer, undefined);
  }

  /** Every pending dialog resolves as cancelled, announced with `reason`; later dialogs resolve at once. */
  dismissAll(reason: DismissReason): void {
    this.#closed = true;
    for (const entry of [...this.#pending.values()]) this.#settle(entry, CANCELLED, reason);
  }

  /** Pending dialogs, oldest first, with the time each has left. */
  snapshot(): PendingDialogState[] {
    const now = this.#now();
    return [...this.#pending.values()].map((entry) =>
      entry.deadline === undefined ? { request: entry.request } : { request: entry.request, remainingMs: Math.max(0, entry.deadline - now) },
    );
  }

  /** Resolves the dialog once, whatever races: later calls find it gone from the pending map. */
  #settle(entry: PendingDialog, answer: DialogAnswer, dismissed: DismissReason | undefined): void {
    const { id, method } = entry.request;
    if (!this.#pending.delete(id)) return;
    if (entry.timer) clearTimeout(entry.timer);
    entry.unlink?.dispose();
    this.#remember(id, dismissed ?? "answered");
    if (dismissed) this.#send({ type: "extension_ui_dismissed", id, method, reason: dismissed });
    entry.resolve(answer);
  }

  #armTimer(entry: PendingDialog): void {
    const left = (entry.deadline ?? 0) - this.#now();
    if (left <= 0) {
      this.#settle(entry, CANCELLED, "timeout");
      return;
    }
    entry.timer = setTimeout(() => this.#armTimer(entry), Math.min(left, MAX_TIMER_MS));
  }

  #remember(id: string, reason: DismissReason): void {
    this.#ended.set(id, reason);
    // A Map iterates in insertion order: the first key is the oldest ending.
    if (this.#ended.size > this.#rememberEndings) {
      const oldest = this.#ended.keys().next();
      if (!oldest.done) this.#ended.delete(oldest.value);
    }
  }

  #refuseEnded(id: string): void {
    const reason = this.#ended.get(id);
    if (reason !== undefined) {
      this.#refuse(id, "already_resolved", false, `Dialog ${id} is no longer pending: ${ENDING_TEXT[reason]}`);
    } else if (this.#fireAndForgetIds.issued(id)) {
      this.#refuse(id, "unknown_id", false, `No dialog has id ${id}: it is a fire-and-forget request, which takes no response`);
    } else {
      this.#refuse(id, "unknown_id", false, `No dialog has id ${id} (none is pending, and it is not one of the last ${this.#rememberEndings} that ended)`);
    }
  }

  #refuse(id: string | undefined, code: ExtensionUiErrorCode, pending: boolean, error: string): void {
    this.#send({ type: "extension_ui_error", ...(id !== undefined ? { id } : {}), code, error, pending });
  }
}

const CANCELLED: DialogAnswer = Object.freeze({ kind: "cancelled" });

/** Ids with the shape of a UUID: a 24-character prefix (random by default) and a 12-digit hex counter. */
class IdCounter {
  #prefix: string | undefined;
  #count = 0;

  constructor(prefix: string | undefined) {
    this.#prefix = prefix;
  }

  next(): string {
    // The prefix is drawn on first use: a session without dialogs never loads node:crypto.
    this.#prefix ??= nodeCrypto().randomUUID().slice(0, 24);
    return this.#prefix + (this.#count++).toString(16).padStart(12, "0");
  }

  /** Whether `id` has this counter's prefix (it may be one of its ids). */
  issued(id: string): boolean {
    return this.#prefix !== undefined && id.startsWith(this.#prefix);
  }
}

/** Calls `listener` once when `signal` aborts; disposing the result removes it. */
function onAbort(signal: AbortSignal, listener: () => void): Disposable {
  signal.addEventListener("abort", listener, { once: true });
  return toDisposable(() => signal.removeEventListener("abort", listener));
}

/** A negative timeout has run out before the dialog opens. */
function expired(timeout: number | undefined): boolean {
  return typeof timeout === "number" && timeout < 0;
}

/** Zero, NaN and Infinity mean no timeout (pi ignores 0 and NaN; parley reads Infinity as never). */
function validTimeout(timeout: number | undefined): number | undefined {
  return typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0 ? timeout : undefined;
}

export type { DialogMethod };
