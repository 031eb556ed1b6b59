import { describe, expect, it } from "vitest";
import * as schemas from "../src/schema/extension-ui.js";
import { DIALOG_METHODS, FIRE_AND_FORGET_METHODS, isDialogMethod, isFireAndForgetMethod } from "../src/ui-methods.js";

/** The `method` literal of each member of a union of request schemas, in schema order. */
const methodsOf = (union: { anyOf: readonly unknown[] }) =>
  union.anyOf.map((member) => (member as { properties: { method: { const: string } } }).properties.method.const);

describe("UI method lists (light subpath, no TypeBox)", () => {
  it("name exactly the methods of the DialogRequest and FireAndForgetRequest schemas, in their order", () => {
    expect(DIALOG_METHODS).toEqual(methodsOf(schemas.DialogRequest));
    expect(FIRE_AND_FORGET_METHODS).toEqual(methodsOf(schemas.FireAndForgetRequest));
  });

  it("the guards accept only those methods", () => {
    for (const m of DIALOG_METHODS) expect([isDialogMethod(m), isFireAndForgetMethod(m)]).toEqual([true, false]);
    for (const m of FIRE_AND_FORGET_METHODS) expect([isDialogMethod(m), isFireAndForgetMethod(m)]).toEqual([false, true]);
    for (const m of [undefined, null, 1, "", "Select", "custom", "toString", "__proto__", ["select"]]) {
      expect([isDialogMethod(m), isFireAndForgetMethod(m)]).toEqual([false, false]);
    }
  });
});
