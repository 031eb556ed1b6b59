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
import { nodeCrypto } from "../lazy-node.js";

/** A request as the UI context builds it: everything but the envelope. */
export type DialogSpec = DistributiveOmit<DialogRequest, "type" | "id" | "timeout">;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface DialogOptions {
  timeout?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** What the extension receives: the answer, or the dialog's default on cancel/timeout/abort/shutdown. */
export type DialogAnswer = { kind: "value"; value: string } | { kind: "confirmed"; confirmed: boolean } | { kind: "cancelled" };

export type DialogOutput = DialogRequest | ExtensionUiDismissed | ExtensionUiError;

// setTimeout fires after 1 ms for delays above 2^31-1: re-arm in steps instead.
const MAX_TIMER_MS = 2_147_483_647;
/** How many ended dialogs keep their reason (one byte each); older ones are only known to have ended. */
const DEFAULT_REMEMBERED_ENDINGS = 1 << 20;
/** Digits of the counter that ends every id: with a 24-character prefix, ids have a UUID's shape. */
const COUNTER_DIGITS = 12;

// Why a dialog ended, one byte per dialog in the ring.
const ANSWERED = 1;
// "answered" is never a reason the registry dismisses with (an answer settles as answered); the web
// transport announces it to the connections that did not answer.
const ENDING_CODES: Record<DismissReason, number> = { answered: ANSWERED, timeout: 2, aborted: 3, shutdown: 4 };
const ENDING_TEXT = ["", "it was already answered", "it was dismissed (timeout)", "it was dismissed (aborted)", "it was dismissed (shutdown)"];

/** A pending dialog. A plain record (one shape for all), not a class: nothing extra to run per dialog. */
interface PendingDialog {
  seq: number;
  request: DialogRequest;
  deadline: number | undefined;
  timer: NodeJS.Timeout | undefined;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  resolve: (value: unknown) => void;
  finish: (answer: DialogAnswer) => unknown;
}

export interface DialogRegistryOptions {
  send: (record: DialogOutput) => void;
  /**
   * The first 24 characters of every dialog id (default: those of a random UUID); a 12-digit
   * hex counter follows. Tests set it to get predictable ids.
   */
  idPrefix?: string;
  /** How many ended dialogs keep their reason for a late answer's error (default 2^20). */
  rememberEndings?: number;
  now?: () => number;
}

export class DialogRegistry {
  readonly #send: (record: DialogOutput) => void;
  readonly #now: () => number;
  readonly #pending = new Map<string, PendingDialog>();
  /**
   * Dialog ids are a random prefix and a counter, so telling a late answer from a made-up id takes
   * no table of old ids: a number below the counter was issued. Why it ended is kept in a ring of
   * bytes indexed by that number (no strings kept alive, nothing for the GC to walk).
   */
  #idPrefix: string | undefined;
  #issued = 0;
  #endings = new Uint8Array(64);
  readonly #rememberEndings: number;
  /** "xxxxxxxx-xxxx-4xxx-yxxx-" of a random UUID; fire-and-forget ids append a 12-digit counter. */
  #ffPrefix: string | undefined;
  #ffCount = 0;
  #closed = false;

  constructor(options: DialogRegistryOptions) {
    this.#send = options.send;
    this.#idPrefix = options.idPrefix;
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
  open(spec: DialogSpec, options?: DialogOptions): Promise<DialogAnswer>;
  /** As above, with the answer mapped to what the caller returns (saves a promise per dialog). */
  open<T>(spec: DialogSpec, options: DialogOptions | undefined, map: (answer: DialogAnswer) => T): Promise<T>;
  open<T>(spec: DialogSpec, options?: DialogOptions, map?: (answer: DialogAnswer) => T): Promise<T | DialogAnswer> {
    const finish: (answer: DialogAnswer) => T | DialogAnswer = map ?? asIs;
    const signal = options?.signal;
    if (signal != null && typeof (signal as Partial<AbortSignal>).addEventListener !== "function") {
      throw new TypeError(`The signal option of a dialog must be an AbortSignal (got ${describe(signal)})`);
    }
    // Nothing is shown for a dialog that is already moot.
    if (this.#closed || signal?.aborted) return Promise.resolve(finish(CANCELLED));

    const seq = this.#issued++;
    // The id, written out here rather than in a helper: this runs once per dialog.
    const id = (this.#idPrefix ??= randomPrefix()) + seq.toString(16).padStart(COUNTER_DIGITS, "0");
    const timeout = validTimeout(options?.timeout);
    const request = { type: "extension_ui_request", id, ...spec } as DialogRequest;
    if (timeout !== undefined) request.timeout = timeout;

    return new Promise<T | DialogAnswer>((resolve) => {
      const entry: PendingDialog = {
        seq,
        request,
        deadline: timeout !== undefined ? this.#now() + timeout : undefined,
        timer: undefined,
        signal,
        onAbort: undefined,
        resolve: resolve as (value: unknown) => void,
        finish,
      };
      this.#pending.set(id, entry);
      if (signal) {
        entry.onAbort = () => this.#settle(entry, CANCELLED, "aborted");
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      if (entry.deadline !== undefined) this.#armTimer(entry);
      this.#send(request);
    });
  }

  /**
   * An id for a fire-and-forget request. They share a random prefix and count up, so an answer to
   * one is recognised without remembering any of them (floods of setStatus stay cheap), and they
   * still have the UUID shape pi's clients see.
   */
  newFireAndForgetId(): string {
    this.#ffPrefix ??= randomPrefix();
    return `${this.#ffPrefix}${(this.#ffCount++).toString(16).padStart(COUNTER_DIGITS, "0")}`;
  }

  /** Route one parsed `extension_ui_response` line. Refusals are reported, never dropped. */
  handleResponse(record: Record<string, unknown>): void {
    const rawId = record["id"];
    if (typeof rawId !== "string") {
      this.#refuse(undefined, "invalid_response", false, `extension_ui_response needs a string "id" naming the dialog it answers (got ${describe(rawId)})`);
      return;
    }
    const entry = this.#pending.get(rawId);
    if (!entry) {
      this.#refuseEnded(rawId);
      return;
    }
    // The common answer, a yes or no to a confirm, takes no helper and builds nothing.
    const confirmed = record["confirmed"];
    if (typeof confirmed === "boolean" && entry.request.method === "confirm" && record["cancelled"] === undefined) {
      this.#settle(entry, confirmed ? CONFIRMED_YES : CONFIRMED_NO, undefined);
      return;
    }
    const answer = interpret(entry.request, record);
    if (typeof answer === "string") {
      this.#refuse(rawId, "invalid_response", true, answer);
      return;
    }
    this.#settle(entry, answer, undefined);
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
    if (entry.onAbort) entry.signal?.removeEventListener("abort", entry.onAbort);
    this.#recordEnding(entry.seq, dismissed ? ENDING_CODES[dismissed] : ANSWERED);
    if (dismissed) this.#send({ type: "extension_ui_dismissed", id, method, reason: dismissed });
    entry.resolve(entry.finish(answer));
  }

  #armTimer(entry: PendingDialog): void {
    const left = (entry.deadline ?? 0) - this.#now();
    if (left <= 0) {
      this.#settle(entry, CANCELLED, "timeout");
      return;
    }
    entry.timer = setTimeout(() => this.#armTimer(entry), Math.min(left, MAX_TIMER_MS));
  }

  /** The number an id of ours carries, or -1 if no dialog was ever given this id. */
  #seqOf(id: string): number {
    const prefix = this.#idPrefix;
    if (prefix === undefined || id.length !== prefix.length + COUNTER_DIGITS || !id.startsWith(prefix)) return -1;
    const digits = id.slice(prefix.length);
    if (!/^[0-9a-f]+$/.test(digits)) return -1;
    const seq = Number.parseInt(digits, 16);
    return seq < this.#issued ? seq : -1;
  }

  #recordEnding(seq: number, code: number): void {
    const ring = this.#rememberEndings;
    const index = seq % ring;
    let endings = this.#endings;
    if (index >= endings.length) {
      // Grown by doubling up to the ring's size: a short session keeps a small table.
      const grown = new Uint8Array(Math.min(ring, Math.max(endings.length * 2, index + 1)));
      grown.set(endings);
      this.#endings = endings = grown;
    }
    endings[index] = code;
  }

  #refuseEnded(id: string): void {
    if (this.#ffPrefix !== undefined && id.length === this.#ffPrefix.length + COUNTER_DIGITS && id.startsWith(this.#ffPrefix)) {
      this.#refuse(id, "unknown_id", false, `No dialog has id ${id}: it is a fire-and-forget request, which takes no response`);
      return;
    }
    const seq = this.#seqOf(id);
    if (seq < 0) {
      this.#refuse(id, "unknown_id", false, `No dialog has id ${id}`);
      return;
    }
    // Issued and no longer pending. Its reason is known while it is among the last ones remembered.
    const remembered = this.#issued - seq <= this.#rememberEndings;
    const why = remembered ? ENDING_TEXT[this.#endings[seq % this.#rememberEndings] ?? 0] : undefined;
    this.#refuse(id, "already_resolved", false, `Dialog ${id} is no longer pending: ${why || "it ended long ago (answered or dismissed)"}`);
  }

  #refuse(id: string | undefined, code: ExtensionUiErrorCode, pending: boolean, error: string): void {
    this.#send({ type: "extension_ui_error", ...(id !== undefined ? { id } : {}), code, error, pending });
  }
}

// Answers that carry nothing of their own are shared.
const CANCELLED: DialogAnswer = Object.freeze({ kind: "cancelled" });
const CONFIRMED_YES: DialogAnswer = Object.freeze({ kind: "confirmed", confirmed: true });
const CONFIRMED_NO: DialogAnswer = Object.freeze({ kind: "confirmed", confirmed: false });

/** The first 24 characters of a random UUID ("xxxxxxxx-xxxx-4xxx-yxxx-"). */
function randomPrefix(): string {
  return nodeCrypto().randomUUID().slice(0, 24);
}

const asIs = (answer: DialogAnswer): DialogAnswer => answer;

function validTimeout(timeout: number | undefined): number | undefined {
  return typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0 ? timeout : undefined;
}

/** The answer a response carries for this dialog, or why it does not fit. */
function interpret(request: DialogRequest, record: Record<string, unknown>): DialogAnswer | string {
  const reject = (what: string): string => {
    const expected = request.method === "confirm" ? `{"confirmed": true|false} or {"cancelled": true}` : `{"value": <string>} or {"cancelled": true}`;
    return `Response to ${request.method} dialog ${request.id} ${what}; send ${expected}`;
  };

  if (has(record, "cancelled")) {
    if (record["cancelled"] === true) return { kind: "cancelled" };
    if (record["cancelled"] !== false) return reject(`has "cancelled": ${describe(record["cancelled"])}, which is not true or false`);
  }
  if (request.method === "confirm") {
    if (has(record, "confirmed")) {
      const confirmed = record["confirmed"];
      if (typeof confirmed === "boolean") return { kind: "confirmed", confirmed };
      return reject(`has "confirmed": ${describe(confirmed)}, which is not a boolean`);
    }
    if (has(record, "value")) return reject(`carries "value", but confirm dialogs are answered with "confirmed"`);
    return reject("carries no answer");
  }
  if (has(record, "value")) {
    const value = record["value"];
    if (typeof value !== "string") return reject(`has "value": ${describe(value)}, which is not a string`);
    if (request.method === "select" && !request.options.includes(value)) {
      return reject(`has "value": ${JSON.stringify(value)}, which is not one of its options ${JSON.stringify(request.options)}`);
    }
    return { kind: "value", value };
  }
  if (has(record, "confirmed")) return reject(`carries "confirmed", but ${request.method} dialogs are answered with "value"`);
  return reject("carries no answer");
}

const has = (record: Record<string, unknown>, key: string): boolean => Object.hasOwn(record, key);

export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  return String(value);
}

export type { DialogMethod };
