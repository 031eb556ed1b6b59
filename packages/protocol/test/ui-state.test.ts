import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FireAndForgetRequest } from "../src/schema/extension-ui.js";
import { MAX_NOTIFICATIONS, applyUiRecord, copyUiState, emptyUiState, reduceUiState } from "../src/ui-state.js";

const key = fc.constantFrom("a", "b", "c", "__proto__", "constructor", "toString");
const text = fc.string({ maxLength: 5 });
const record: fc.Arbitrary<FireAndForgetRequest> = fc
  .oneof(
    fc.record(
      { method: fc.constant("setStatus" as const), statusKey: key, statusText: fc.option(text, { nil: undefined }) },
      { requiredKeys: ["method", "statusKey"] },
    ),
    fc.record(
      {
        method: fc.constant("setWidget" as const),
        widgetKey: key,
        widgetLines: fc.option(fc.array(text, { maxLength: 3 }), { nil: undefined }),
        widgetPlacement: fc.option(fc.constantFrom("aboveEditor" as const, "belowEditor" as const), { nil: undefined }),
      },
      { requiredKeys: ["method", "widgetKey"] },
    ),
    fc.record({ method: fc.constant("setTitle" as const), title: text }),
    fc.record({ method: fc.constant("set_editor_text" as const), text }),
    fc.record(
      {
        method: fc.constant("notify" as const),
        message: text,
        notifyType: fc.option(fc.constantFrom("info" as const, "warning" as const, "error" as const), { nil: undefined }),
      },
      { requiredKeys: ["method", "message"] },
    ),
  )
  .map((r) => ({ type: "extension_ui_request", id: "x", ...r }) as FireAndForgetRequest);

/** Plain JSON view, with key order (the order of the latest updates) made visible. */
const view = (state: ReturnType<typeof emptyUiState>) => ({
  ...state,
  statuses: Object.entries(state.statuses),
  widgets: Object.entries(state.widgets),
});

describe("UI state reducer", () => {
  it("folding in place gives the same state as the pure reducer, which never touches its input", () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 80 }), (records) => {
        const live = emptyUiState();
        let pure = emptyUiState();
        for (const r of records) {
          const before = JSON.stringify(view(pure));
          const next = reduceUiState(pure, r);
          expect(JSON.stringify(view(pure))).toBe(before);
          pure = next;
          applyUiRecord(live, r);
        }
        expect(view(live)).toEqual(view(pure));
      }),
    );
  });

  it("treats keys like __proto__ as ordinary keys and moves a key set again to the end", () => {
    const state = emptyUiState();
    const set = (statusKey: string, statusText?: string) =>
      applyUiRecord(state, { type: "extension_ui_request", id: "x", method: "setStatus", statusKey, ...(statusText !== undefined ? { statusText } : {}) });
    set("__proto__", "p");
    set("b", "1");
    set("__proto__", "q");
    expect(Object.entries(state.statuses)).toEqual([
      ["b", "1"],
      ["__proto__", "q"],
    ]);
    set("b");
    expect(Object.entries(state.statuses)).toEqual([["__proto__", "q"]]);
  });

  it(`keeps the last ${MAX_NOTIFICATIONS} notifications`, () => {
    const state = emptyUiState();
    for (let i = 0; i < MAX_NOTIFICATIONS + 7; i++) applyUiRecord(state, { type: "extension_ui_request", id: "x", method: "notify", message: `m${i}` });
    expect(state.notifications).toHaveLength(MAX_NOTIFICATIONS);
    expect(state.notifications[0]?.message).toBe("m7");
  });

  it("a copy does not change when the original does", () => {
    const state = emptyUiState();
    applyUiRecord(state, { type: "extension_ui_request", id: "x", method: "setStatus", statusKey: "k", statusText: "1" });
    const snapshot = copyUiState(state);
    applyUiRecord(state, { type: "extension_ui_request", id: "x", method: "setStatus", statusKey: "k", statusText: "2" });
    applyUiRecord(state, { type: "extension_ui_request", id: "x", method: "notify", message: "n" });
    expect(snapshot.statuses["k"]).toBe("1");
    expect(snapshot.notifications).toEqual([]);
  });
});
