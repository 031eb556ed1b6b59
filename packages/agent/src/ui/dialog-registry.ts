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
// Ids of ended dialogs are remembered so a late or repeated answer gets "already_resolved".
const REMEMBERED_IDS = 10_000;

interface PendingDialog {
  request: DialogRequest;
  deadline: number | undefined;
  timer: NodeJS.Timeout | undefined;
  settle: (answer: DialogAnswer, dismissed?: DismissReason) => void;
}

export interface DialogRegistryOptions {
  send: (record: DialogOutput) => void;
  newId?: () => string;
  now?: () => number;
}

export class DialogRegistry {
  readonly #send: (record: DialogOutput) => void;
  readonly #newId: () => string;
  readonly #now: () => number;
  readonly #pending = new Map<string, PendingDialog>();
  /**
   * id → why it is no longer pending, in two generations: when the newer one is full it becomes
   * the older and the oldest is dropped whole. Between REMEMBERED_IDS and twice that many are
   * kept, at O(1) per dialog with no per-entry deletes (which make a Map slow to walk and grow).
   */
  #ended = new Map<string, string>();
  #endedBefore = new Map<string, string>();
  /** "xxxxxxxx-xxxx-4xxx-yxxx-" of a random UUID; fire-and-forget ids append a 12-digit counter. */
  #ffPrefix: string | undefined;
  #ffCount = 0;
  #closed = false;

  constructor(options: DialogRegistryOptions) {
    this.#send = options.send;
    this.#newId = options.newId ?? (() => nodeCrypto().randomUUID());
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#pending.size;
  }

  /**
   * Sends the request and resolves exactly once: with the client's answer, or with
   * `{kind:"cancelled"}` on cancel, timeout, abort or shutdown (announced by a dismiss record).
   */
  open(spec: DialogSpec, options?: DialogOptions): Promise<DialogAnswer>;
  /** As above, with the answer mapped to what the caller returns (saves a promise per dialog). */
  open<T>(spec: DialogSpec, options: DialogOptions, map: (answer: DialogAnswer) => T): Promise<T>;
  open<T>(spec: DialogSpec, options: DialogOptions = {}, map?: (answer: DialogAnswer) => T): Promise<T | DialogAnswer> {
    const finish: (answer: DialogAnswer) => T | DialogAnswer = map ?? asIs;
    // Nothing is shown for a dialog that is already moot.
    if (this.#closed || options.signal?.aborted) return Promise.resolve(finish({ kind: "cancelled" }));

    const id = this.#newId();
    const timeout = validTimeout(options.timeout);
    const request = { type: "extension_ui_request", id, ...spec, ...(timeout !== undefined ? { timeout } : {}) } as DialogRequest;

    return new Promise<T | DialogAnswer>((resolve) => {
      const signal = options.signal;
      const onAbort = (): void => entry.settle({ kind: "cancelled" }, "aborted");
      const entry: PendingDialog = {
        request,
        deadline: timeout !== undefined ? this.#now() + timeout : undefined,
        timer: undefined,
        settle: (answer, dismissed) => {
          if (!this.#pending.delete(id)) return; // resolve once, whatever races
          if (entry.timer) clearTimeout(entry.timer);
          signal?.removeEventListener("abort", onAbort);
          this.#remember(id, dismissed ? `it was dismissed (${dismissed})` : "it was already answered");
          if (dismissed) this.#send({ type: "extension_ui_dismissed", id, method: request.method, reason: dismissed });
          resolve(finish(answer));
        },
      };
      this.#pending.set(id, entry);
      signal?.addEventListener("abort", onAbort, { once: true });
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
    this.#ffPrefix ??= nodeCrypto().randomUUID().slice(0, 24);
    return `${this.#ffPrefix}${(this.#ffCount++).toString(16).padStart(12, "0")}`;
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
      if (this.#ffPrefix !== undefined && rawId.startsWith(this.#ffPrefix)) {
        this.#refuse(rawId, "unknown_id", false, `No dialog has id ${rawId}: it is a fire-and-forget request, which takes no response`);
        return;
      }
      const why = this.#ended.get(rawId) ?? this.#endedBefore.get(rawId);
      if (why?.startsWith("it was")) this.#refuse(rawId, "already_resolved", false, `Dialog ${rawId} is no longer pending: ${why}`);
      else if (why) this.#refuse(rawId, "unknown_id", false, `No dialog has id ${rawId}: ${why}`);
      else this.#refuse(rawId, "unknown_id", false, `No dialog has id ${rawId}`);
      return;
    }
    const answer = interpret(entry.request, record);
    if (typeof answer === "string") {
      this.#refuse(rawId, "invalid_response", true, answer);
      return;
    }
    entry.settle(answer);
  }

  /** Every pending dialog resolves as cancelled, announced with `reason`; later dialogs resolve at once. */
  dismissAll(reason: DismissReason): void {
    this.#closed = true;
    for (const entry of [...this.#pending.values()]) entry.settle({ kind: "cancelled" }, reason);
  }

  /** Pending dialogs, oldest first, with the time each has left. */
  snapshot(): PendingDialogState[] {
    const now = this.#now();
    return [...this.#pending.values()].map((entry) =>
      entry.deadline === undefined
        ? { request: entry.request }
        : { request: entry.request, remainingMs: Math.max(0, entry.deadline - now) },
    );
  }

  #armTimer(entry: PendingDialog): void {
    const left = (entry.deadline ?? 0) - this.#now();
    if (left <= 0) {
      entry.settle({ kind: "cancelled" }, "timeout");
      return;
    }
    entry.timer = setTimeout(() => this.#armTimer(entry), Math.min(left, MAX_TIMER_MS));
  }

  #remember(id: string, why: string): void {
    if (this.#ended.size >= REMEMBERED_IDS) {
      this.#endedBefore = this.#ended;
      this.#ended = new Map();
    }
    this.#ended.set(id, why);
  }

  #refuse(id: string | undefined, code: ExtensionUiErrorCode, pending: boolean, error: string): void {
    this.#send({ type: "extension_ui_error", ...(id !== undefined ? { id } : {}), code, error, pending });
  }
}

const asIs = (answer: DialogAnswer): DialogAnswer => answer;

function validTimeout(timeout: number | undefined): number | undefined {
  return typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0 ? timeout : undefined;
}

/** The answer a response carries for this dialog, or why it does not fit. */
function interpret(request: DialogRequest, record: Record<string, unknown>): DialogAnswer | string {
  // The common answers first, without building anything.
  if (request.method === "confirm" && typeof record["confirmed"] === "boolean" && !has(record, "cancelled")) {
    return { kind: "confirmed", confirmed: record["confirmed"] };
  }
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

const has = (record: Record<string, unknown>, key: string): boolean => Object.prototype.hasOwnProperty.call(record, key);

export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  return String(value);
}

export type { DialogMethod };
