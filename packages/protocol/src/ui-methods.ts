/**
 * The extension UI request methods as plain values, importable without loading any schema (no
 * TypeBox): for clients that route `extension_ui_request` records by `method`. The lists are
 * checked against the schemas' types at compile time (each must name every method of its union,
 * and nothing else), so they cannot drift from `DialogRequest` / `FireAndForgetRequest`.
 */
import type { DialogMethod, FireAndForgetRequest } from "./schema/extension-ui.js";

export type FireAndForgetMethod = FireAndForgetRequest["method"];

/** Accepts a list only if it names every member of `Union` (the element type rules out extras). */
type Exhaustive<Union, List extends readonly Union[]> = [Exclude<Union, List[number]>] extends [never] ? List : { missing: Exclude<Union, List[number]> };

function exhaustive<Union>() {
  return <const List extends readonly Union[]>(list: List & Exhaustive<Union, List>): List => list;
}

/** The dialog methods (the agent waits for an `extension_ui_response`), in schema order. */
export const DIALOG_METHODS: readonly DialogMethod[] = exhaustive<DialogMethod>()(["select", "confirm", "input", "editor"]);

/** The fire-and-forget methods (no response), in schema order. */
export const FIRE_AND_FORGET_METHODS: readonly FireAndForgetMethod[] = exhaustive<FireAndForgetMethod>()([
  "notify",
  "setStatus",
  "setWidget",
  "setTitle",
  "set_editor_text",
]);

export function isDialogMethod(method: unknown): method is DialogMethod {
  return (DIALOG_METHODS as readonly unknown[]).includes(method);
}

export function isFireAndForgetMethod(method: unknown): method is FireAndForgetMethod {
  return (FIRE_AND_FORGET_METHODS as readonly unknown[]).includes(method);
}
