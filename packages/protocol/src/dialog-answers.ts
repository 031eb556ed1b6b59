/**
 * Which `extension_ui_response` answers which dialog: a confirm takes `confirmed` (a boolean), the
 * other dialogs take `value` (a string; for a select, one of its options), and any dialog may be
 * answered `cancelled: true`. The agent refuses answers by these rules and the client writes
 * answers by them: this module is their one home. Plain code (no TypeBox), so the agent can run it
 * at start-up and a client can import it alone (`@parley/protocol/dialog-answers`).
 */
import { describeValue } from "./command-envelope.js";
import type { CancelledResponse, ConfirmedResponse, DialogMethod, DialogRequest, ValueResponse } from "./schema/extension-ui.js";

/** What a dialog resolves with on the agent's side. */
export type DialogAnswer = { kind: "value"; value: string } | { kind: "confirmed"; confirmed: boolean } | { kind: "cancelled" };

/** An `extension_ui_response` without its envelope (`type`, `id`). */
export type DialogResponseBody = Omit<ValueResponse, "type" | "id"> | Omit<ConfirmedResponse, "type" | "id"> | Omit<CancelledResponse, "type" | "id">;

/** The fields of a dialog request these rules read. */
export type DialogRequestFields = Pick<DialogRequest, "method"> & { readonly options?: readonly string[] };

/** The field that answers a dialog of this method. */
export function answerField(method: DialogMethod): "confirmed" | "value" {
  return method === "confirm" ? "confirmed" : "value";
}

/** Why a result does not fit a dialog: its type is wrong, or it is not one of a select's options. */
export interface AnswerMismatch {
  kind: "type" | "option";
  /** Ends a sentence about the result: "is not a boolean", "is not one of its options [...]". */
  text: string;
}

/** Why `result` cannot answer this dialog, or undefined when it can. */
export function answerMismatch(request: DialogRequestFields, result: unknown): AnswerMismatch | undefined {
  if (request.method === "confirm") return typeof result === "boolean" ? undefined : { kind: "type", text: "is not a boolean" };
  if (typeof result !== "string") return { kind: "type", text: "is not a string" };
  if (request.method === "select" && !(request.options ?? []).includes(result)) {
    return { kind: "option", text: `is not one of its options ${JSON.stringify(request.options ?? [])}` };
  }
  return undefined;
}

/** What an answer looks like, for error messages. */
export function expectedAnswer(method: DialogMethod): string {
  return method === "confirm" ? `{"confirmed": true|false} or {"cancelled": true}` : `{"value": <string>} or {"cancelled": true}`;
}

/**
 * The answer an `extension_ui_response` carries for this dialog, or why it does not fit (a
 * sentence ending in what to send). `cancelled: true` wins over any other field; `cancelled:
 * false` is allowed beside an answer.
 */
export function readDialogResponse(request: DialogRequestFields & { readonly id: string }, record: Readonly<Record<string, unknown>>): DialogAnswer | string {
  const reject = (what: string): string => `Response to ${request.method} dialog ${request.id} ${what}; send ${expectedAnswer(request.method)}`;
  if (Object.hasOwn(record, "cancelled")) {
    const cancelled = record["cancelled"];
    if (cancelled === true) return { kind: "cancelled" };
    if (cancelled !== false) return reject(`has "cancelled": ${describeValue(cancelled)}, which is not true or false`);
  }
  const field = answerField(request.method);
  const other = field === "value" ? "confirmed" : "value";
  if (!Object.hasOwn(record, field)) {
    if (Object.hasOwn(record, other)) return reject(`carries "${other}", but ${request.method} dialogs are answered with "${field}"`);
    return reject("carries no answer");
  }
  const result = record[field];
  const mismatch = answerMismatch(request, result);
  if (mismatch !== undefined) return reject(`has "${field}": ${describeValue(result)}, which ${mismatch.text}`);
  return typeof result === "boolean" ? { kind: "confirmed", confirmed: result } : { kind: "value", value: String(result) };
}

/**
 * The response body a client writes for a result: undefined cancels, otherwise the result must
 * fit the dialog (see answerMismatch). Returns the error to report when it does not.
 */
export function dialogResponseBody(request: DialogRequestFields, result: unknown): DialogResponseBody | TypeError | RangeError {
  if (result === undefined) return { cancelled: true };
  const mismatch = answerMismatch(request, result);
  if (mismatch !== undefined) {
    const text = `a ${request.method} answer ${describeValue(result)} ${mismatch.text}`;
    return mismatch.kind === "option" ? new RangeError(text) : new TypeError(text);
  }
  return typeof result === "boolean" ? { confirmed: result } : { value: String(result) };
}
