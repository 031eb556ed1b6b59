/**
 * The client side of extension UI dialogs (`client.ui`).
 *
 * Each dialog request becomes a PendingDialog with an AbortSignal. The signal fires when the
 * dialog ends: its `timeout` passed (counted from when this client received it), parley said
 * `extension_ui_dismissed`, the connection closed, or this client answered. Exactly one
 * `extension_ui_response` is written per dialog, and none once it has ended.
 *
 * Who answers: the handler registered for its method with `handle()`; otherwise the `onDialog`
 * listeners (they get the PendingDialog and answer it when they like); with neither, the
 * dialog is answered `cancelled: true` at once, so no extension waits on a client that cannot ask.
 */
import type { DialogRequest, ExtensionUiDismissed, ExtensionUiResponse } from "@parley/protocol";
import { dialogResponseBody, type DialogResponseBody } from "@parley/protocol/dialog-answers";
import { Emitter, toDisposable, type Disposable } from "@parley/protocol/disposable";
import { DialogEndedError, DialogHandlerError, type DialogEndReason } from "./errors.js";

export type DialogMethod = DialogRequest["method"];
export type DialogRequestOf<M extends DialogMethod> = Extract<DialogRequest, { method: M }>;
/** What a dialog is answered with: a string (select, input, editor), a boolean (confirm), or undefined to cancel. */
export type DialogResult<M extends DialogMethod> = M extends "confirm" ? boolean | undefined : string | undefined;
export type DialogHandler<M extends DialogMethod> = (
  request: DialogRequestOf<M>,
  signal: AbortSignal,
  /** The dialog's bookkeeping: its deadline (for a countdown) and when it was received. */
  dialog: PendingDialog<M>,
) => DialogResult<M> | Promise<DialogResult<M>>;

export interface PendingDialog<M extends DialogMethod = DialogMethod> {
  readonly id: string;
  readonly method: M;
  readonly request: DialogRequestOf<M>;
  /** Date.now() when this client received the request. */
  readonly receivedAt: number;
  /** Date.now() after which the agent no longer takes an answer; undefined without a timeout. */
  readonly deadline: number | undefined;
  /** Fires when the dialog ends; its reason is a DialogEndedError. */
  readonly signal: AbortSignal;
  readonly isOpen: boolean;
  readonly endReason: DialogEndReason | undefined;
  /** Writes the answer (undefined: cancelled). false, and nothing written, when the dialog has ended. */
  answer(result: DialogResult<M>): boolean;
  /** Writes `cancelled: true`. false, and nothing written, when the dialog has ended. */
  cancel(): boolean;
}

/** A PendingDialog of any method, narrowed by `method`. */
export type AnyPendingDialog = { [M in DialogMethod]: PendingDialog<M> }[DialogMethod];

export interface DialogEnd {
  dialog: AnyPendingDialog;
  reason: DialogEndReason;
}

/** Remembers ids of ended dialogs, so a repeated request or a late state snapshot cannot reopen them. */
const MAX_REMEMBERED_ENDED = 10_000;

class DialogEntry implements PendingDialog {
  readonly id: string;
  readonly method: DialogMethod;
  readonly request: DialogRequest;
  readonly receivedAt: number;
  readonly deadline: number | undefined;
  readonly #controller = new AbortController();
  #endReason: DialogEndReason | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    request: DialogRequest,
    remainingMs: number | undefined,
    private readonly owner: DialogDispatcher,
  ) {
    this.id = request.id;
    this.method = request.method;
    this.request = request;
    this.receivedAt = Date.now();
    this.deadline = remainingMs === undefined ? undefined : this.receivedAt + remainingMs;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }
  get isOpen(): boolean {
    return this.#endReason === undefined;
  }
  get endReason(): DialogEndReason | undefined {
    return this.#endReason;
  }

  startTimer(remainingMs: number | undefined): void {
    if (remainingMs === undefined) return;
    this.#timer = setTimeout(() => this.owner.end(this, "timeout"), remainingMs);
  }

  answer(result: string | boolean | undefined): boolean {
    // The protocol's answer rules (dialog-answers.ts), the same the agent checks answers by.
    const body = dialogResponseBody(this.request, result);
    if (body instanceof Error) {
      if (!this.isOpen) return false;
      this.owner.reportHandlerError(this, body);
      return this.owner.respond(this, { cancelled: true });
    }
    return this.owner.respond(this, body);
  }

  cancel(): boolean {
    return this.owner.respond(this, { cancelled: true });
  }

  /** @internal Marks the dialog ended; false if it already was. */
  finish(reason: DialogEndReason, dismissReason?: string): boolean {
    if (this.#endReason !== undefined) return false;
    this.#endReason = reason;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#controller.abort(new DialogEndedError(this.id, reason, dismissReason));
    return true;
  }
}

export interface DialogDispatcherHooks {
  /** Writes one record; throws if the connection is closed. */
  write(record: object): void;
  /** Reports a handler that threw (the dialog was cancelled). */
  onHandlerError(error: DialogHandlerError): void;
  /** Reports a listener that threw. */
  onListenerError(error: unknown): void;
}

export class DialogDispatcher {
  readonly #open = new Map<string, DialogEntry>();
  readonly #ended = new Set<string>();
  readonly #handlers = new Map<DialogMethod, DialogHandler<DialogMethod>>();
  readonly #fallback: Emitter<AnyPendingDialog>;
  readonly #opened: Emitter<AnyPendingDialog>;
  readonly #endedEvents: Emitter<DialogEnd>;
  readonly #hooks: DialogDispatcherHooks;
  #closed = false;

  constructor(hooks: DialogDispatcherHooks) {
    this.#hooks = hooks;
    const options = { onListenerError: hooks.onListenerError };
    this.#fallback = new Emitter(options);
    this.#opened = new Emitter(options);
    this.#endedEvents = new Emitter(options);
  }

  /**
   * Answers dialogs of `method` with `handler(request, signal)`: a string / boolean answers,
   * undefined cancels, a throw (or an invalid answer, e.g. a value outside a select's options)
   * cancels and is reported through `client.onError`. If the dialog ends first, the result is
   * dropped. A later `handle()` for the same method replaces this one.
   */
  handle<M extends DialogMethod>(method: M, handler: DialogHandler<M>): Disposable {
    const stored = handler as unknown as DialogHandler<DialogMethod>;
    this.#handlers.set(method, stored);
    return toDisposable(() => {
      if (this.#handlers.get(method) === stored) this.#handlers.delete(method);
    });
  }

  /** Dialogs with no handler for their method go to these listeners (with none, they are cancelled). */
  onDialog(listener: (dialog: AnyPendingDialog) => void): Disposable {
    return this.#fallback.event(listener);
  }

  /** Every dialog that opens, handled or not. */
  onOpen(listener: (dialog: AnyPendingDialog) => void): Disposable {
    return this.#opened.event(listener);
  }

  /** Every dialog that ends, with why. */
  onEnd(listener: (end: DialogEnd) => void): Disposable {
    return this.#endedEvents.event(listener);
  }

  /** Open dialogs, oldest first. */
  pending(): AnyPendingDialog[] {
    return [...this.#open.values()] as AnyPendingDialog[];
  }

  get(id: string): AnyPendingDialog | undefined {
    return this.#open.get(id) as AnyPendingDialog | undefined;
  }

  // ---- fed by the client ------------------------------------------------------------------

  /** @internal A dialog request arrived (remainingMs: from a get_ui_state snapshot). */
  receive(request: DialogRequest, remainingMs?: number): void {
    if (this.#closed || this.#open.has(request.id) || this.#ended.has(request.id)) return;
    const timeout = remainingMs ?? request.timeout;
    const remaining = typeof timeout === "number" && Number.isFinite(timeout) ? Math.max(0, timeout) : undefined;
    const entry = new DialogEntry(request, remaining, this);
    this.#open.set(entry.id, entry);
    entry.startTimer(remaining);
    const dialog = entry as unknown as AnyPendingDialog;
    this.#opened.fire(dialog);
    if (!entry.isOpen) return; // an onOpen listener answered it
    const handler = this.#handlers.get(entry.method);
    if (handler !== undefined) this.#run(entry, handler);
    else if (this.#fallback.listenerCount > 0) this.#fallback.fire(dialog);
    else this.respond(entry, { cancelled: true });
  }

  /** @internal parley's extension_ui_dismissed. */
  dismissed(record: ExtensionUiDismissed): void {
    const entry = this.#open.get(record.id);
    if (entry !== undefined) this.end(entry, "dismissed", record.reason);
  }

  /** @internal The connection closed: every open dialog ends, nothing more is written. */
  closeAll(): void {
    this.#closed = true;
    for (const entry of [...this.#open.values()]) this.end(entry, "closed");
  }

  /** @internal */
  end(entry: DialogEntry, reason: DialogEndReason, dismissReason?: string): boolean {
    if (!entry.finish(reason, dismissReason)) return false;
    this.#open.delete(entry.id);
    this.#ended.add(entry.id);
    if (this.#ended.size > MAX_REMEMBERED_ENDED) {
      const oldest = this.#ended.values().next();
      if (!oldest.done) this.#ended.delete(oldest.value);
    }
    this.#endedEvents.fire({ dialog: entry as unknown as AnyPendingDialog, reason });
    return true;
  }

  /** @internal Writes the one response of an open dialog. */
  respond(entry: DialogEntry, body: DialogResponseBody): boolean {
    if (!entry.isOpen) return false;
    try {
      const response: ExtensionUiResponse = { type: "extension_ui_response", id: entry.id, ...body };
      this.#hooks.write(response);
    } catch {
      this.end(entry, "closed");
      return false;
    }
    this.end(entry, "answered");
    return true;
  }

  /** @internal */
  reportHandlerError(entry: DialogEntry, cause: unknown): void {
    this.#hooks.onHandlerError(new DialogHandlerError(entry.id, entry.method, cause));
  }

  #run(entry: DialogEntry, handler: DialogHandler<DialogMethod>): void {
    let result: unknown;
    try {
      result = handler(entry.request, entry.signal, entry);
    } catch (error) {
      this.#fail(entry, error);
      return;
    }
    Promise.resolve(result).then(
      (value) => {
        if (entry.isOpen) entry.answer(value as string | boolean | undefined);
      },
      (error: unknown) => this.#fail(entry, error),
    );
  }

  #fail(entry: DialogEntry, error: unknown): void {
    // A handler that gives up because its signal fired has nothing to report.
    if (!entry.isOpen) return;
    this.reportHandlerError(entry, error);
    this.respond(entry, { cancelled: true });
  }
}
